"""von Neumann metric learning: exact projections (seed 002 §5.2) and DefiniteBoost.

Both learners keep the matrix in the range of the prior ``M₀ = U diag(s) Uᵀ`` as
``M = U W exp(Q) Wᵀ Uᵀ``, W orthogonal r×r and Q diagonal: the logarithm, so that a
Bregman projection ``log M ← log M + α z zᵀ`` is one diagonal-plus-rank-one eigen
update of ``Q`` (``w = Wᵀ Uᵀ z``), no matrix logarithm or exponential, and the
exponential of very negative entries of Q just underflows to 0. The work per
projection is O(r²) plus the ``W ← W U`` product, whatever the number of samples.

``VonNeumann`` solves ``min D_vN(M, M₀)`` under pair constraints with exact
projections and dual corrections (seed 002 Alg. 3); ``DefiniteBoost`` solves the
trace-one problem of seed 000 §4 (``min D_vN(W, W₁)``, ``tr W = 1``,
``tr(W C_j) ≤ 0``), by the greedy approximate projections of seed 000 or by exact
projections (seed 002 §6.3).
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from threadpoolctl import threadpool_limits

from ._base import MahalanobisMixin, prior_eigenpairs
from ._constraints import check_bounds, squared_distance_bounds
from ._solvers import (
    checkpoint,
    cyclic_projections,
    definite_boost_steps,
    roll_back,
    von_neumann_sweep,
)

_COMMON_PARAMETERS: dict = {
    "n_components": [Interval(Integral, 1, None, closed="left"), None],
    "prior": [StrOptions({"identity", "covariance"}), "array-like"],
    "bounds": ["array-like", None],
    "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
    "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "verbose": ["verbose"],
    "random_state": ["random_state"],
}


def _ascending_prior(X, prior, n_components):
    """Prior eigenpairs ``U, s`` with s ascending (the order the eigen updates keep)."""
    eigenvectors, eigenvalues = prior_eigenpairs(X, prior, n_components)
    ascending = np.argsort(eigenvalues, kind="stable")
    return eigenvectors[:, ascending], eigenvalues[ascending]


def _pair_targets(bounds, factor, constraints, rng):
    """Per-pair bounds ξ₀ and the (u, l) they come from (squared distances of ``factor``)."""
    if constraints.bounds is not None:
        return constraints.bounds.copy(), np.full(2, np.nan)
    if bounds is not None:
        bounds = check_bounds(bounds)
    else:
        bounds = squared_distance_bounds(factor, random_state=rng)
    return np.where(constraints.labels == 1, bounds[0], bounds[1]), bounds


def _components(eigenvectors, W, Q, trace_one):
    """Eigenpairs in the input space (eigenvalues descending) and ``L = diag(√λ) Vᵀ``."""
    eigenvalues = np.exp(Q - Q.max()) if trace_one else np.exp(Q)
    if trace_one:
        eigenvalues /= eigenvalues.sum()
    vectors = eigenvectors @ W
    eigenvalues, vectors = eigenvalues[::-1].copy(), np.ascontiguousarray(vectors[:, ::-1])
    return eigenvalues, vectors, np.sqrt(eigenvalues)[:, None] * vectors.T


class VonNeumann(MahalanobisMixin):
    """Metric learning with exact von Neumann Bregman projections.

    Learns ``M ⪰ 0`` minimising ``D_vN(M, M₀) + γ D_vN(ξ/ξ₀, 1)`` subject to
    ``d²_M(xᵢ, xⱼ) ≤ ξ`` for similar pairs and ``≥ ξ`` for dissimilar pairs, where
    ``D_vN(X, Y) = tr(X log X − X log Y − X + Y)`` (seed 002 §5.2; slack §6.2.1). Each
    projection is exact: its multiplier is the root of a monotone function, found by a
    safeguarded Newton iteration on O(r²) evaluations; dual corrections make the cycles
    converge to the optimum (seed 002 App. B).

    Read more in the :ref:`User Guide <von_neumann>`.

    Parameters
    ----------
    n_components : int, default=None
        Rank of the learned metric. The von Neumann divergence keeps the learned metric
        in the range of its prior, so a rank-k prior (the top-k principal directions for
        ``prior="identity"``) gives a metric of rank at most k, learned in O(k²) per
        projection plus one k×k matrix product. ``None`` keeps the prior's rank.

    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features), \
            default="identity"
        Starting matrix ``M₀``: the Euclidean metric, the inverse covariance of X, or
        a symmetric PSD matrix.

    gamma : float, default=0.1
        Slack trade-off γ > 0; ``np.inf`` enforces the constraints exactly. The
        default was chosen with ``n_neighbors=3`` by leave-one-data-set-out on 11
        data sets (see :ref:`choosing_defaults`).

    bounds : array-like of shape (2,), default=None
        Squared-distance bounds ``(u, l)`` for similar and dissimilar pairs. ``None``
        takes the 5th and 95th percentiles of the squared distances under ``M₀``.

    n_constraints : int, default=None
        Number of random pairs drawn from the labels when ``n_neighbors=None``;
        ``None`` means ``40 * n_classes**2``.

    n_neighbors : int, default=3
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs.

    tol : float, default=1e-3
        Stop when the duals change by at most ``tol`` over a cycle, measured as
        ``‖Δν‖₁ / (‖ν‖₂ + ‖ν_prev‖₂)``. Each cycle visits the constraints in a fresh
        random order.

    max_iter : int, default=1000
        Maximum number of cycles through the constraints.

    verbose : int, default=0
        Print a table row per cycle.

    random_state : int, RandomState instance or None, default=None
        Seeds the pair draw, the bound estimate and the order of every cycle.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L = diag(√λ) Vᵀ``, ``M = LᵀL``.

    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues λ of ``M`` on the range of the prior, descending.

    eigenvectors_ : ndarray of shape (n_features, n_components)
        Orthonormal eigenvectors V of ``M`` in the input space, ``M = V diag(λ) Vᵀ``.
        In kernel mode (see Notes) they are the learned factor: ``K = (V₀V) Λ (V₀V)ᵀ``.

    bounds_ : ndarray of shape (2,)
        The bounds ``(u, l)`` used (NaN where the constraints carried their own).

    constraints_ : PairConstraints
        The pairs the metric was fitted on.

    dual_coef_ : ndarray of shape (n_constraints,)
        Dual variables ν ≥ 0 of the constraints at the solution.

    n_iter_ : int
        Number of cycles run.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    LogDet : The same problem with the LogDet divergence (closed-form projections).
    DefiniteBoost : The trace-one von Neumann problem of seed 000.

    Notes
    -----
    Kernel mode (seed 002 Alg. 3): to learn a low-rank kernel ``K = V Λ Vᵀ`` from
    ``K₀ = V₀ Λ₀ V₀ᵀ`` (V₀ with orthonormal columns), fit on the rows of V₀ with
    ``prior=np.diag(Λ₀)`` and index-pair constraints; then
    ``V = V₀ @ eigenvectors_`` and ``Λ = diag(eigenvalues_)``. The rank of K never
    exceeds that of K₀ (zero entries of Λ₀ leave the range).

    The slack penalty is ``D_vN(ξ/ξ₀, 1) = Σ (ξ/ξ₀) log(ξ/ξ₀) − ξ/ξ₀ + 1``, the
    relative form seed 002 §6.2.1 suggests: each projection updates
    ``ξ ← ξ exp(−δ α ξ₀ / γ)``, so γ means the same whatever the scale of the data.

    References
    ----------
    B. Kulis, M. Sustik and I. Dhillon. Low-rank kernel learning with Bregman matrix
    divergences. JMLR 10, 2009.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from psdmetric import VonNeumann
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(VonNeumann(random_state=0), KNeighborsClassifier(3))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """

    _constraint_kind = "pairs"

    _parameter_constraints: dict = {
        **_COMMON_PARAMETERS,
        "gamma": [Interval(Real, 0, None, closed="right")],
    }

    def __init__(
        self,
        n_components=None,
        *,
        prior="identity",
        gamma=0.1,
        bounds=None,
        n_constraints=None,
        n_neighbors=3,
        tol=1e-3,
        max_iter=1000,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.prior = prior
        self.gamma = gamma
        self.bounds = bounds
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Fit the metric from class labels or from explicit pair constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (in kernel mode, the rows of the factor ``V₀``).

        y : array-like of shape (n_samples,), default=None
            Class labels; pairs are drawn from them. Leave ``None`` when passing
            ``constraints``.

        constraints : PairConstraints, default=None
            Explicit similar / dissimilar pairs of rows of ``X``, optionally with
            their own bounds.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        eigenvectors, eigenvalues = _ascending_prior(X, self.prior, self.n_components)
        factor = np.ascontiguousarray(X @ eigenvectors)
        targets, self.bounds_ = _pair_targets(
            self.bounds, factor * np.sqrt(eigenvalues), constraints, rng)
        direction = constraints.labels.astype(np.float64)
        dual = np.zeros(len(targets))
        Q = np.log(eigenvalues)
        W = np.eye(len(Q), order="F")
        # Slack penalty γ D_vN(ξ/ξ₀, 1): relative, like LogDet's (seed 002 §6.2.1).
        slack = np.zeros(len(targets)) if np.isinf(self.gamma) else targets / self.gamma
        stats = np.zeros(3, dtype=np.intp)

        def sweep(order):
            return von_neumann_sweep(factor, constraints.pairs, direction, targets, slack,
                                     dual, Q, W, False, order, stats)

        # One thread: the r×r products are too small to gain from more, and the result
        # must not depend on the thread count.
        with threadpool_limits(limits=1, user_api="blas"):
            self.n_iter_ = cyclic_projections(
                sweep, dual, (targets, Q, W), tol=self.tol, max_iter=self.max_iter,
                verbose=self.verbose, name=type(self).__name__, random_state=rng,
            )
        self.eigenvalues_, self.eigenvectors_, self.components_ = _components(
            eigenvectors, W, Q, trace_one=False)
        self.constraints_ = constraints
        self.dual_coef_ = dual
        return self


class DefiniteBoost(MahalanobisMixin):
    """DefiniteBoost: trace-one von Neumann metric learning (seed 000 §4).

    Learns a trace-one ``W ⪰ 0`` minimising ``D_vN(W, W₁)`` (``W₁ = M₀ / tr M₀``)
    subject to ``tr(W C_j) ≤ 0`` with ``C_j = z zᵀ − u I`` for a similar pair
    (``d²_W ≤ u``) and ``C_j = l I − z zᵀ`` for a dissimilar pair (``d²_W ≥ l``),
    ``z = xᵢ − xⱼ``. With ``projection="approximate"`` (Tsuda, Rätsch and Warmuth) each
    step takes the most violated constraint and the closed-form step of eq. 13, which
    minimises an upper bound of the dual objective (eq. 9), so that objective falls at
    every step (Thm. 4.1). With ``projection="exact"`` the constraints are visited in
    cycles and projected on exactly (seed 002 §6.3), with dual corrections.

    Read more in the :ref:`User Guide <definiteboost>`.

    Parameters
    ----------
    n_components : int, default=None
        Rank of the learned metric: the range of the prior is kept (see
        :class:`VonNeumann`). ``None`` keeps the prior's rank.

    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features), \
            default="identity"
        Starting matrix, normalised to trace one: ``W₁ = M₀ / tr(M₀)``.

    bounds : array-like of shape (2,), default=None
        Squared-distance bounds ``(u, l)`` under the trace-one metric. ``None`` takes
        the 5th and 95th percentiles of the squared distances under ``W₁``.

    n_constraints : int, default=None
        Number of random pairs drawn from the labels when ``n_neighbors=None``;
        ``None`` means ``40 * n_classes**2``.

    n_neighbors : int, default=3
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs.

    projection : {"approximate", "exact"}, default="approximate"
        ``"approximate"``: greedy steps of seed 000 §4.2. ``"exact"``: cyclic exact
        von Neumann projections with dual corrections (seed 002 §6.3).

    dual_correction : bool, default=False
        For ``projection="approximate"``: also step on satisfied constraints whose dual
        is positive, never taking a dual below 0 (seed 002 §3.4). Without it the steps
        stop at the first point that satisfies every constraint, which need not be the
        optimum (seed 002 App. B). Exact projections always correct.

    tol : float, default=1e-3
        ``"approximate"``: stop when every violated constraint (with corrections: every
        constraint with a positive dual) holds to ``tol`` relative to its bound,
        ``|d²_W − ξ| ≤ tol ξ``. ``"exact"``: stop when the duals change by at most
        ``tol`` over a cycle, as :class:`VonNeumann`.

    max_iter : int, default=1000
        Maximum number of cycles; for ``"approximate"`` a cycle is as many steps as
        there are constraints.

    verbose : int, default=0
        Print a table row per cycle.

    random_state : int, RandomState instance or None, default=None
        Seeds the pair draw, the bound estimate and (``"exact"``) the cycle orders.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L``, ``W = LᵀL`` with ``tr W = 1``.

    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of ``W`` on the range of the prior, descending; they sum to 1.

    eigenvectors_ : ndarray of shape (n_features, n_components)
        Orthonormal eigenvectors of ``W`` in the input space.

    bounds_ : ndarray of shape (2,)
        The bounds ``(u, l)`` used (NaN where the constraints carried their own).

    constraints_ : PairConstraints
        The pairs the metric was fitted on.

    dual_coef_ : ndarray of shape (n_constraints,)
        Dual variables γ_j ≥ 0 (``log W ∝ log W₁ − Σ γ_j C_j``); 0 for the pairs left
        out (see Notes).

    dual_objective_ : float
        ``log tr exp(log W₁ − Σ_j γ_j C_j)`` at the solution (seed 000 eq. 9).

    n_projections_ : int
        Number of projections (steps) taken.

    n_iter_ : int
        Number of cycles run.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    VonNeumann : The von Neumann learner with fixed (not trace-relative) bounds.

    Notes
    -----
    With trace one, ``z zᵀ`` has eigenvalues ``‖z‖²`` and 0 on the range, so a similar
    pair with ``‖z‖² ≤ u`` always holds and a dissimilar pair with ``‖z‖² ≤ l`` can
    never hold; both are left out (``z`` in the range of the prior).

    Feasibility. There is no slack: when no trace-one W meets every constraint, the dual
    objective falls without bound. The fit then stops, with a ``ConvergenceWarning``, as
    soon as it falls below ``log λmin(W₁)``, which no feasible problem allows (weak
    duality: ``D_vN(W, W₁) ≤ −log λmin(W₁)`` for every trace-one W). Pairs drawn from
    labels with the default 5th/95th-percentile bounds usually ask too much of a
    trace-one metric; pass looser ``bounds`` (e.g. chosen with ``GridSearchCV``).
    On the development suite of :ref:`choosing_defaults` this happens on every data
    set, within the first cycle, and the metric reached there is worse for k-NN than
    the Euclidean one on most sets, whatever the pairs (neighbour pairs, the default,
    do least harm): for classification from labels prefer :class:`LogDet`.

    Kernel learning from index pairs (seed 000 §5): fit on ``X = np.eye(n) / np.sqrt(2)``
    (so that ``z zᵀ`` is the seed's ``X_j`` with ½ on the diagonal entries of a and b and
    −½ off-diagonal) with ``PairConstraints`` and ``bounds=(γ, l)``; the learned kernel
    is ``get_mahalanobis_matrix()``.

    References
    ----------
    K. Tsuda, G. Rätsch and M. Warmuth. Matrix exponentiated gradient updates for
    on-line learning and Bregman projection. JMLR 6, 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from psdmetric import DefiniteBoost, PairConstraints
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> # d²(0, 1) ≤ 0.2 and d²(0, 2) ≥ 0.6 under a trace-one metric
    >>> constraints = PairConstraints([[0, 1], [0, 2]], [1, -1], bounds=[0.2, 0.6])
    >>> model = DefiniteBoost(dual_correction=True, tol=1e-8).fit(X, constraints=constraints)
    >>> np.round(model.get_mahalanobis_matrix(), 4)
    array([[0.2, 0. ],
           [0. , 0.8]])
    """

    _constraint_kind = "pairs"

    _parameter_constraints: dict = {
        **_COMMON_PARAMETERS,
        "projection": [StrOptions({"approximate", "exact"})],
        "dual_correction": ["boolean"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        prior="identity",
        bounds=None,
        n_constraints=None,
        n_neighbors=3,
        projection="approximate",
        dual_correction=False,
        tol=1e-3,
        max_iter=1000,
        verbose=0,
        random_state=None,
    ):
        self.n_components = n_components
        self.prior = prior
        self.bounds = bounds
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.projection = projection
        self.dual_correction = dual_correction
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Fit the trace-one metric from class labels or explicit pair constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.

        y : array-like of shape (n_samples,), default=None
            Class labels; pairs are drawn from them. Leave ``None`` when passing
            ``constraints``.

        constraints : PairConstraints, default=None
            Explicit similar / dissimilar pairs of rows of ``X``, optionally with
            their own bounds (under the trace-one metric).

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        eigenvectors, eigenvalues = _ascending_prior(X, self.prior, self.n_components)
        eigenvalues = eigenvalues / eigenvalues.sum()
        factor = np.ascontiguousarray(X @ eigenvectors)
        targets, self.bounds_ = _pair_targets(
            self.bounds, factor * np.sqrt(eigenvalues), constraints, rng)
        direction = constraints.labels.astype(np.float64)
        differences = factor[constraints.pairs[:, 0]] - factor[constraints.pairs[:, 1]]
        lengths = np.einsum("ij,ij->i", differences, differences)
        # Eigenvalues of C_j = δ (z zᵀ − ξ I) on the range: δ(‖z‖² − ξ) and −δξ.
        top = np.where(direction > 0, lengths - targets, targets)
        bottom = np.where(direction > 0, -targets, targets - lengths)
        if len(eigenvalues) == 1:
            top = bottom = direction * (lengths - targets)
        usable = np.flatnonzero((bottom < 0) & (top > 0))

        Q = np.log(eigenvalues)
        Q -= Q[-1]
        W = np.eye(len(Q), order="F")
        dual = np.zeros(len(usable))
        problem = _TraceOneProblem(
            factor, constraints.pairs[usable], direction[usable], targets[usable],
            differences[usable], lengths[usable], bottom[usable], top[usable], eigenvalues)
        with threadpool_limits(limits=1, user_api="blas"):
            solve = self._exact if self.projection == "exact" else self._approximate
            self.n_iter_, self.n_projections_, infeasible = solve(problem, dual, Q, W, rng)
        if infeasible:
            warnings.warn(
                f"{type(self).__name__}: the constraints are infeasible for a trace-one "
                "metric (the dual objective fell below log λmin(W₁), which weak duality "
                "rules out for a feasible problem); stopped there. Loosen the bounds "
                "(raise u, lower l) or remove constraints.", ConvergenceWarning)
        self.dual_coef_ = np.zeros(len(targets))
        self.dual_coef_[usable] = dual
        self.dual_objective_ = problem.dual_objective(Q, dual)
        self.eigenvalues_, self.eigenvectors_, self.components_ = _components(
            eigenvectors, W, Q, trace_one=True)
        self.constraints_ = constraints
        return self

    def _exact(self, problem, dual, Q, W, rng):
        """Cyclic exact projections onto ``d²_W ≤ u tr(W)`` (resp. ``≥ l tr W``)."""
        if len(dual) == 0:
            return 0, 0, False
        stats = np.zeros(3, dtype=np.intp)
        bounds = problem.targets.copy()
        hard = np.zeros(len(dual))
        cycles = []

        def sweep(order):
            violated = von_neumann_sweep(problem.factor, problem.pairs, problem.direction,
                                         bounds, hard, dual, Q, W, True, order, stats)
            cycles.append(violated)
            # Each exact projection minimises the dual objective over one dual.
            if problem.dual_objective(Q, dual) < problem.floor:
                raise _Infeasible
            return violated

        try:
            n_iter = cyclic_projections(
                sweep, dual, (bounds, Q, W), tol=self.tol, max_iter=self.max_iter,
                verbose=self.verbose, name=type(self).__name__, random_state=rng,
            )
        except _Infeasible:
            return len(cycles), int(stats[0]), True
        return n_iter, int(stats[0]), False

    def _approximate(self, problem, dual, Q, W, rng):
        """Greedy approximate projections, one cycle (m steps) per call of the kernel."""
        m = len(dual)
        if m == 0:
            return 0, 0, False
        start = np.arange(m + 1, dtype=np.intp)
        shift = problem.direction * problem.targets
        offset = np.zeros(1)
        empty_int, empty = np.empty(0, dtype=np.intp), np.empty(0)
        name = type(self).__name__
        if self.verbose:
            print(f"[{name}]")
            print(f"{'cycle':>8} {'steps':>10} {'rel. viol.':>14} {'dual obj.':>14} "
                  f"{'time (s)':>10}")
            print("-" * 60)
        n_steps = 0
        state = (dual, Q, W, offset)
        kept = checkpoint(state, 0, 0)
        try:
            for n_iter in range(1, self.max_iter + 1):
                begin = time.perf_counter()
                steps, residual, objective = definite_boost_steps(
                    problem.differences, problem.direction, start, shift, problem.bottom,
                    problem.top, dual, Q, W, offset, m, self.tol, self.dual_correction,
                    problem.floor, empty_int, empty, empty)
                n_steps += steps
                kept = checkpoint(state, n_iter, n_steps)
                if self.verbose:
                    elapsed = time.perf_counter() - begin
                    print(f"{n_iter:>8d} {n_steps:>10d} {residual:>14.3e} "
                          f"{objective:>14.6e} {elapsed:>10.3f}")
                if objective < problem.floor:
                    return n_iter, n_steps, True
                if residual <= self.tol:
                    return n_iter, n_steps, False
        except KeyboardInterrupt:
            n_iter, n_steps = roll_back(state, kept, name)
            return n_iter, n_steps, False
        warnings.warn(
            f"{name} did not converge in max_iter={self.max_iter} cycles (largest "
            f"relative violation {residual:.3e} > tol={self.tol}). Increase max_iter "
            "or tol.", ConvergenceWarning)
        return n_iter, n_steps, False


class _Infeasible(Exception):
    """Raised inside a sweep when the dual objective proves the constraints infeasible."""


class _TraceOneProblem:
    """The usable pair constraints of DefiniteBoost, in the prior's coordinates."""

    def __init__(self, factor, pairs, direction, targets, differences, lengths, bottom,
                 top, prior_eigenvalues):
        self.factor = factor
        self.pairs = np.ascontiguousarray(pairs)
        self.direction = direction
        self.targets = targets
        self.differences = np.ascontiguousarray(differences)
        self.lengths = lengths
        self.bottom = bottom
        self.top = top
        self.prior_eigenvalues = prior_eigenvalues
        # Weak duality: a feasible problem keeps the dual objective above log λmin(W₁).
        self.floor = float(np.log(prior_eigenvalues.min()))

    def dual_objective(self, Q, dual):
        """``log tr exp(log W₁ − Σ_j γ_j C_j)`` (seed 000 eq. 9) from the learned Q.

        Q is kept up to an additive constant c; the trace of the logarithm fixes it:
        ``Σ (Q + c) = Σ log s₁ − Σ_j γ_j δ_j ‖z_j‖²``.
        """
        weights = dual * self.direction
        c = (np.sum(np.log(self.prior_eigenvalues)) - weights @ self.lengths
             - np.sum(Q)) / len(Q)
        top = Q.max()
        return float(top + c + np.log(np.exp(Q - top).sum()) + weights @ self.targets)
