"""MMC: metric learning for clustering with side information (Xing, Ng, Jordan & Russell, 2002).

Full: maximise ``g(M) = Σ_D d_M(x_i, x_j)`` over PSD ``M`` with ``Σ_S d²_M(x_i, x_j) ≤ 1``
(§2.1), by spectral projected gradient ascent on ``g`` with projections onto the
intersection of the similar-pair half-space and the PSD cone (``_core._projections``),
made exact by working in coordinates where the half-space is a trace bound. ``g`` is
concave and the constraints convex, so every local maximum is the global one, and the
Frank–Wolfe duality gap certifies how close an iterate is to it (the stopping test).
Diagonal: minimise ``Σ_S d²_w − c log Σ_D d_w`` over ``w ≥ 0`` by Newton–Raphson (§2.2).
"""

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from scipy.linalg import blas
from scipy.sparse.linalg import LinearOperator
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    MahalanobisMixin,
    Round,
    iterate,
    leading_eigenpairs,
    on_leading_axes,
    one_blas_thread,
    project_trace_bounded,
)
from ._common import components_from_metric

# Armijo's sufficient-change fraction; step halvings before a round gives up.
_ARMIJO, _MAX_HALVINGS = 1e-4, 60
# Bounds of the spectral step length, as in Birgin, Martínez & Raydan (2000).
_MAX_STEP = 1e10
# Ridge of a singular similar-pair scatter, relative to its mean eigenvalue.
_SCATTER_RIDGE = 1e-6
# Above this many features Lanczos on products with the pairs beats a dense gradient.
_IMPLICIT_FEATURES = 200


class MMC(MahalanobisMixin):
    """Mahalanobis metric for clustering (MMC), full or diagonal.

    Finds the metric that spreads dissimilar pairs as far apart as possible while
    keeping similar pairs together (Xing, Ng, Jordan & Russell, 2002)::

        maximise   Σ_(i,j)∈D ‖x_i − x_j‖_M
        subject to Σ_(i,j)∈S ‖x_i − x_j‖²_M ≤ 1,  M ⪰ 0.

    The full problem is solved by projected gradient ascent (the paper's §2.1, with
    an exact projection onto the constraint set, spectral steps and Armijo
    backtracking) until the duality gap certifies the optimum to ``tol``; the
    diagonal one, ``M = diag(w)``, in its penalised form ``min Σ_S d²_w − c log Σ_D
    d_w`` by Newton–Raphson (§2.2). Both are convex: the result is the optimum.

    Read more in the :ref:`User Guide <convex>`.

    Parameters
    ----------
    diagonal : bool, default=False
        Learn a diagonal metric (a weight per feature).

    diagonal_c : float, default=1.0
        Weight ``c`` of the dissimilar-pair term of the diagonal problem.

    n_constraints : int, default=None
        Random pairs drawn from labels when ``n_neighbors=None``, half similar, half
        dissimilar (see :func:`pairs_from_labels`); ``None``: ``40 * n_classes**2``
        (metric-learn's ``MMC_Supervised``).

    n_neighbors : int or None, default=3
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs. Chosen by leave-one-data-set-out among random, 1- and 3-neighbour
        pairs, full and diagonal (``docs/benchmarks/defaults.md``): 3 neighbours on
        the full matrix has the best mean score, yet MMC is still worse than the
        Euclidean metric on most sets there (see the User Guide).

    n_components : int, "auto" or None, default="auto"
        Learn on the ``n_components`` leading principal axes of ``X``; ``None``: on
        every feature; ``"auto"``: every feature up to 100, the 100 leading axes above
        (leave-one-data-set-out, ``docs/benchmarks/wide.md``). ``components_`` has
        ``n_features`` columns either way.

    max_iter : int, default=1000
        Maximum number of ascent (full) or Newton (diagonal) iterations.

    tol : float, default=1e-6
        Full: stop when the duality gap ``λ_max(G) − ⟨G, M⟩`` (``G`` the gradient, in
        the coordinates where the similar-pair bound is a trace bound), an upper bound
        on how far the objective is below the optimum, is at most ``tol`` times the
        objective. Diagonal: stop when an iteration improves the objective by at most
        ``tol`` times its value.

    verbose : int, default=0
        Print a table row per iteration.

    random_state : int, RandomState instance or None, default=None
        Seed of the pairs drawn from labels.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``L`` with ``LᵀL = M``, one row per positive eigenvalue of ``M``.

    objective_ : float
        Full: ``Σ_D d_M`` at the solution (where ``Σ_S d²_M = 1``). Diagonal:
        ``Σ_S d²_w − c log Σ_D d_w``.

    n_iter_ : int
        Iterations of the last fit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    SDML : Pairs through a sparse inverse covariance.

    References
    ----------
    E. P. Xing, A. Y. Ng, M. I. Jordan and S. Russell, "Distance metric learning, with
    application to clustering with side-information", NIPS 15 (2002).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import MMC
    >>> X, y = load_wine(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), MMC(random_state=0), KNeighborsClassifier(5))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.921
    """

    _parameter_constraints: dict = {
        "diagonal": ["boolean"],
        "diagonal_c": [Interval(Real, 0, None, closed="neither")],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, diagonal=False, diagonal_c=1.0, n_constraints=None,
                 n_neighbors=3, n_components="auto", max_iter=1000, tol=1e-6, verbose=0,
                 random_state=None):
        self.diagonal = diagonal
        self.diagonal_c = diagonal_c
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Learn the metric from class labels or from labelled pairs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels; ignored when ``constraints`` is given.
        constraints : PairConstraints, default=None
            Similar (+1) and dissimilar (-1) pairs of rows of ``X``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        X, axes = on_leading_axes(X, self.n_components)
        differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
        similar = differences[constraints.labels == 1]
        dissimilar = differences[constraints.labels == -1]
        if not np.any(dissimilar) or not np.any(similar):
            side = "dissimilar" if not np.any(dissimilar) else "similar"
            raise ValueError(f"MMC needs a {side} pair of distinct points; the "
                             f"constraints have none.")
        if self.diagonal:
            solver = _DiagonalNewton(similar, dissimilar, self.diagonal_c)
            unit, columns = "iteration", (("objective", ".8e"), ("step", ".2e"))
        else:
            solver = _ProjectedAscent(similar, dissimilar)
            unit, columns = "iteration", (("sum dissim.", ".8e"), ("gap", ".2e"),
                                          ("step", ".2e"))
        with np.errstate(divide="ignore", invalid="ignore"), one_blas_thread():
            n_iter = iterate(lambda: solver.round(self.tol), solver,
                             max_iter=self.max_iter, verbose=self.verbose, name="MMC",
                             unit=unit, columns=columns)
        metric, objective = solver.result()
        with one_blas_thread():  # a threaded eigh only spins at these sizes
            components = components_from_metric(metric)
        self.components_ = components if axes is None else components @ axes.T
        self.objective_, self.n_iter_ = objective, n_iter
        return self


def dissimilar_sum(dissimilar, M):
    """``Σ_D d_M``, the full problem's objective, with the distances."""
    distances = np.sqrt(np.maximum(np.einsum("ij,ij->i", dissimilar @ M, dissimilar), 0.0))
    return distances.sum(), distances


class _Solver:
    """A round replaces ``current`` and never changes it in place, so the solver is its
    own checkpoint for the driver (``save``/``restore`` keep a reference)."""

    def save(self, n_iter):
        self._saved = n_iter, self.current

    def restore(self):
        n_iter, self.current = self._saved
        return n_iter


class _ProjectedAscent(_Solver):
    """Projected gradient ascent on ``Σ_D d_N`` over ``{tr(N) ≤ 1} ∩ PSD`` (paper, §2.1).

    In the coordinates ``N = R M Rᵀ`` (``S = RᵀR``, Cholesky) the similar-pair
    half-space is ``tr(N) ≤ 1``, so the projection onto its intersection with the PSD
    cone is exact (``project_trace_bounded``). Each round projects a spectral
    (Barzilai–Borwein) step and backtracks along the segment to the projection by
    Armijo's rule (Birgin, Martínez & Raydan, 2000). The objective is concave, so
    ``λ_max(G) − ⟨G, N⟩`` (``G`` its gradient: the Frank–Wolfe duality gap) bounds how
    far it is below the optimum: the stopping test.

    The projections have rank a few (the optimum is nearly rank one), so the iterate
    is kept factored, ``N = α I + V diag(λ) Vᵀ`` (``α`` > 0 until the first full step
    off the start ``I/d``), with each pair's ``d_N²`` (its *form*), which is linear
    along the segment: backtracking costs O(q) a trial and nothing is O(d³). Above
    ``_IMPLICIT_FEATURES`` the gradient ``G = Σ_D w dᵀd`` is never formed: Lanczos
    runs on its products with the q differences, O(q d) each.
    """

    def __init__(self, similar, dissimilar):
        scatter = similar.T @ similar
        n_features = len(scatter)
        # A singular S (fewer similar directions than features) leaves the problem
        # unbounded along its null space: a ridge of 1e-6 of its mean eigenvalue bounds it.
        scatter += _SCATTER_RIDGE * np.trace(scatter) / n_features * np.eye(n_features)
        self.factor = linalg.cholesky(scatter, lower=False)
        self.dissimilar = linalg.solve_triangular(self.factor, dissimilar.T, trans="T").T
        self.implicit = n_features > _IMPLICIT_FEATURES
        self.squared_norms = np.einsum("ij,ij->i", self.dissimilar, self.dissimilar)
        forms = self.squared_norms / n_features
        value, weights = _spread(forms)
        # max |G_ij| = max_i G_ii for a PSD G: the first step scales the largest entry to 1.
        largest = (self.dissimilar**2).T @ weights
        step = 1.0 / max(largest.max(), np.finfo(float).tiny)
        self.current = _Iterate(1.0 / n_features, np.zeros((n_features, 0)), np.zeros(0),
                                forms, value, weights, step, self._gradient(weights))
        self.save(0)

    def _gradient(self, weights):
        """``G = Σ_D w d dᵀ``: dense, or a product with the differences when implicit."""
        D = self.dissimilar
        if not self.implicit:
            # The weights are positive: G = BᵀB with B = √w D, by SYRK (half a GEMM's flops).
            upper = blas.dsyrk(1.0, (D * np.sqrt(weights)[:, None]).T)
            return np.triu(upper) + np.triu(upper, 1).T

        def apply(X):
            return D.T @ (weights[:, None] * (D @ X))

        return LinearOperator((D.shape[1],) * 2, dtype=float, matmat=apply,
                              matvec=lambda x: apply(x.reshape(-1, 1)).ravel())

    def _step_operator(self, now):
        """``N + step · G`` at the current iterate."""
        alpha, V, values, step = now.alpha, now.vectors, now.values, now.step
        gradient = now.gradient
        if not self.implicit:
            operator = step * gradient + (V * values) @ V.T
            operator[np.diag_indices_from(operator)] += alpha
            return operator

        def apply(X):
            return alpha * X + V @ (values[:, None] * (V.T @ X)) + step * gradient.matmat(X)

        return LinearOperator(gradient.shape, dtype=float, matmat=apply,
                              matvec=lambda x: apply(x.reshape(-1, 1)).ravel())

    def _forms(self, values, vectors):
        """Each pair's ``d_P²`` for ``P = V diag(values) Vᵀ``."""
        return ((self.dissimilar @ vectors) ** 2) @ values

    def round(self, tol):
        now = self.current
        start = now.vectors[:, 0] if now.values.size else None
        values, vectors = project_trace_bounded(self._step_operator(now), 1.0,
                                                rank=now.values.size, start=start)
        forms = self._forms(values, vectors)
        slope, length = now.weights @ (forms - now.forms), 1.0
        for _ in range(_MAX_HALVINGS):
            trial_forms = now.forms + length * (forms - now.forms)
            trial_value = np.sqrt(np.maximum(trial_forms, 0.0)).sum()
            if trial_value >= now.value + _ARMIJO * length * slope:
                break
            length /= 2.0
        else:  # no ascent along the projected gradient: stationary to precision
            return Round((now.value, 0.0, 0.0), converged=True)
        trial_value, weights = _spread(trial_forms)
        # ⟨moved, G_trial − G_now⟩ from the forms: both gradients are sums over the pairs.
        curvature = -(weights - now.weights) @ (trial_forms - now.forms)
        alpha, trial_vectors, trial_values, moved = _combine(now, values, vectors, length)
        step = moved / curvature if curvature > 0 else _MAX_STEP
        gradient = self._gradient(weights)
        top = leading_eigenpairs(gradient, 1, vectors[:, 0])[0][0]
        gap = max(top - weights @ trial_forms, 0.0)
        self.current = _Iterate(alpha, trial_vectors, trial_values, trial_forms, trial_value,
                                weights, min(max(step, 1.0 / _MAX_STEP), _MAX_STEP), gradient)
        return Round((trial_value, gap, length), converged=gap <= tol * trial_value)

    def result(self):
        now = self.current
        whitened = linalg.solve_triangular(self.factor, now.vectors)
        M = (whitened * now.values) @ whitened.T
        if now.alpha > 0:
            M += now.alpha * linalg.cho_solve((self.factor, False), np.eye(len(M)))
        forms = self._forms(now.values, now.vectors) + now.alpha * self.squared_norms
        return (M + M.T) / 2.0, np.sqrt(np.maximum(forms, 0.0)).sum()


@dataclass(frozen=True)
class _Iterate:
    """``N = α I + V diag(λ) Vᵀ``, its pairs' forms, ``Σ_D d_N``, the gradient's
    weights and the gradient, and the next spectral step."""

    alpha: float
    vectors: np.ndarray
    values: np.ndarray
    forms: np.ndarray
    value: float
    weights: np.ndarray
    step: float
    gradient: object


def _spread(forms):
    """``Σ_D d`` from the squared distances, and the gradient's weights ``1 / (2 d)``."""
    distances = np.sqrt(np.maximum(forms, 0.0))
    floor = np.finfo(float).eps * max(distances.max(), np.finfo(float).tiny)
    return distances.sum(), 0.5 / np.maximum(distances, floor)


def _combine(now, values, vectors, length):
    """``(1 − t) N + t P`` factored, and ``‖t (P − N)‖²_F`` (``P = V diag(values) Vᵀ``)."""
    basis, triangle = linalg.qr(np.hstack([now.vectors, vectors]), mode="economic")
    difference = (triangle * (np.concatenate([-now.values, values]) * length)) @ triangle.T
    # ‖Q C Qᵀ − tα I‖² with orthonormal Q: ‖C‖² − 2tα tr(C) + (tα)² d.
    shrink = length * now.alpha
    moved = np.vdot(difference, difference) - 2 * shrink * np.trace(difference) \
        + shrink**2 * len(basis)
    weights = np.concatenate([(1.0 - length) * now.values, length * values])
    small, rotation = linalg.eigh((triangle * weights) @ triangle.T)
    kept = small > len(basis) * np.finfo(float).eps * max(small.max(), 0.0)
    return ((1.0 - length) * now.alpha, np.ascontiguousarray(basis @ rotation[:, kept][:, ::-1]),
            small[kept][::-1], max(moved, 0.0))


def diagonal_objective(similar, dissimilar, w, c):
    """``Σ_S d²_w − c log Σ_D d_w`` for the diagonal metric ``diag(w)``."""
    total = np.sqrt(np.maximum((dissimilar**2) @ w, 0.0)).sum()
    return (similar**2).sum(axis=0) @ w - c * np.log(total)


class _DiagonalNewton(_Solver):
    """Projected Newton–Raphson on the diagonal problem over ``w ≥ 0`` (paper, §2.2)."""

    def __init__(self, similar, dissimilar, c):
        self.similar, self.dissimilar, self.c = similar, dissimilar, c
        self.squares, self.scatter = dissimilar**2, (similar**2).sum(axis=0)
        w = np.ones(similar.shape[1])
        self.current = w, diagonal_objective(similar, dissimilar, w, c)
        self.save(0)

    def derivatives(self, w):
        """Gradient and Hessian of the objective at ``w``."""
        distances = np.sqrt(self.squares @ w)
        total = distances.sum()
        inverse = np.where(distances > 0, 1.0 / distances, 0.0)
        first = self.squares.T @ (0.5 * inverse) / total
        second = -(self.squares.T * (0.25 * inverse**3)) @ self.squares / total
        hessian = -self.c * (second - np.outer(first, first))
        return self.scatter - self.c * first, hessian

    def round(self, tol):
        w, current_value = self.current
        gradient, hessian = self.derivatives(w)
        # Bound-constrained Newton (Bertsekas): variables at 0 pushed outward move alone.
        held = (w <= 0) & (gradient > 0)
        free = ~held
        step = np.zeros_like(w)
        diagonal = np.maximum(np.diag(hessian), np.finfo(float).tiny)
        ridge = 1e-10 * diagonal.max()
        step[held] = gradient[held] / diagonal[held]
        if free.any():
            step[free] = linalg.solve(hessian[np.ix_(free, free)] + ridge * np.eye(free.sum()),
                                      gradient[free], assume_a="pos")
        length = 1.0
        for _ in range(60):
            trial = np.maximum(w - length * step, 0.0)
            if trial.any():
                value = diagonal_objective(self.similar, self.dissimilar, trial, self.c)
                if value <= current_value - _ARMIJO * gradient @ (w - trial):
                    break
            length /= 2.0
        else:
            return Round((current_value, 0.0), converged=True)
        decrease = current_value - value
        self.current = trial, value
        return Round((value, length),
                     converged=decrease <= tol * max(abs(value), np.finfo(float).tiny))

    def result(self):
        w = self.current[0]
        return np.diag(w), diagonal_objective(self.similar, self.dissimilar, w, self.c)
