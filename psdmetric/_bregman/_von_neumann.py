"""von Neumann metric learning: exact projections (Kulis et al., 2009, §5.2).

This learner and DefiniteBoost (:mod:`psdmetric._bregman._definite_boost`) keep the matrix in
the range of the prior ``M₀ = U diag(s) Uᵀ`` as ``M = U W exp(Q) Wᵀ Uᵀ``, W orthogonal
r×r and Q diagonal: the logarithm, so that a Bregman projection
``log M ← log M + α z zᵀ`` is one diagonal-plus-rank-one eigen update of ``Q``
(``w = Wᵀ Uᵀ z``), no matrix logarithm or exponential, and the exponential of very
negative entries of Q just underflows to 0. The work per projection is O(r²) plus the
``W ← W U`` product, whatever the number of samples. From rank ``KRYLOV_MIN_RANK`` on,
``VonNeumann``'s cycles keep the logarithm ``L = W diag(Q) Wᵀ`` instead and reduce each
projection to an m × m one by Lanczos (about 2mr² flops, m ≈ 12), see
``von_neumann_krylov_sweep``.

``VonNeumann`` solves ``min D_vN(M, M₀)`` under pair constraints with exact
projections and dual corrections (Kulis et al., 2009, Alg. 3).
"""

from numbers import Integral

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import cyclic_projections, oriented_columns, paired_rows, screen_violations
from ._base import (_BasePairBregman, ascending_prior, resolve_components,
                    weighted_outer_sum)
from ._von_neumann_kernels import von_neumann_sweep
from ._von_neumann_krylov import von_neumann_krylov_sweep

# Each projection's root is solved until the constraint's log-residual is a tenth of
# where it started: the dual corrections of later cycles absorb the rest, the fixed point
# is the same, and a projection then takes 1.5 instead of 2.2 eigen decompositions.
ROOT_RTOL = 0.1
# From this rank on, a projection is cheaper through Lanczos on the logarithm (about
# 2mr² flops, m ≈ 12 steps on MNIST at r = 100) than through the eigenbasis (the r³
# rotation); below it, the Lanczos matrix's fixed costs dominate.
KRYLOV_MIN_RANK = 32
# A log-spectrum w wide needs about √w Lanczos steps (hard constraints can spread it over
# 10⁴): past this share of r steps per visit, the rest of the fit takes the eigenbasis.
KRYLOV_MAX_SHARE = 0.5


def components_from_eigen(eigenvectors, W, Q, trace_one):
    """Eigenpairs in the input space (eigenvalues descending) and ``L = diag(√λ) Vᵀ``."""
    eigenvalues = np.exp(Q - Q.max()) if trace_one else np.exp(Q)
    if trace_one:
        eigenvalues /= eigenvalues.sum()
    vectors = eigenvectors @ W
    eigenvalues, vectors = eigenvalues[::-1].copy(), oriented_columns(vectors[:, ::-1])
    return eigenvalues, vectors, np.sqrt(eigenvalues)[:, None] * vectors.T


class VonNeumann(_BasePairBregman):
    """Metric learning with exact von Neumann Bregman projections.

    Learns ``M ⪰ 0`` minimising ``D_vN(M, M₀) + γ D_vN(ξ/ξ₀, 1)`` subject to
    ``d²_M(xᵢ, xⱼ) ≤ ξ`` for similar pairs and ``≥ ξ`` for dissimilar pairs, where
    ``D_vN(X, Y) = tr(X log X − X log Y − X + Y)`` (Kulis et al., 2009, §5.2; slack §6.2.1). Each
    projection's multiplier is the root of a monotone function, found by a safeguarded
    Newton iteration on O(r²) evaluations until the constraint's log-residual is a tenth
    of where it started; dual corrections make the cycles converge to the optimum
    (Kulis et al., 2009, App. B). From rank 32 on, each projection runs through a few
    Lanczos steps on the logarithm of the matrix instead of its eigenbasis (same result,
    about 2mr² flops instead of r³; see the User Guide).

    Read more in the :ref:`User Guide <von_neumann>`.

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rank of the learned metric. The von Neumann divergence keeps the learned metric
        in the range of its prior, so a rank-k prior (the top-k principal directions for
        ``prior="identity"``) gives a metric of rank at most k, learned in O(k²) per
        projection plus one k×k matrix product. ``None`` keeps the prior's rank;
        ``"auto"`` keeps it too, except for the identity prior on more than 100
        features, which learns in the top 100 principal directions of X (at MNIST's
        784 pixels 15 times less CPU and a lower 5-NN error than the full rank; the
        cap was chosen by leave-one-data-set-out).

    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features), \
            default="identity"
        Starting matrix ``M₀``: the Euclidean metric, the inverse covariance of X, or
        a symmetric PSD matrix. The metric keeps the prior's range: a rank-deficient
        prior (the covariance of collinear features, say) gives fewer output columns
        than features, with a warning unless ``n_components`` asks for that rank.

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

    tol : float, default=0.03
        Stop when the duals change by at most ``tol`` over a cycle, measured as
        ``‖Δν‖₁ / (‖ν‖₂ + ‖ν_prev‖₂)``. Each cycle visits the constraints in a fresh
        random order. The default was chosen by leave-one-data-set-out with the other
        defaults: it gives the same k-NN errors as ``1e-3`` in two fewer cycles (see
        :ref:`choosing_defaults`).

    max_iter : int, default=1000
        Maximum number of cycles through the constraints.

    warm_start : bool, default=False
        When the last fit had the same pairs, start the cycles from its dual
        variables instead of from the prior, as along a path of increasing ``gamma``
        (:class:`VonNeumannCV` runs one per fold). Any duals ν ≥ 0 determine a matrix
        (``log M = log M₀ − Σ δᵢ νᵢ zᵢzᵢᵀ``) and slacked bounds, so the fit reaches
        the same optimum whatever the last fit's X or ``gamma``; it saves a cycle or
        none on the suite's paths (see :ref:`cross_validation`).

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
    DefiniteBoost : The trace-one von Neumann problem of Tsuda et al., 2005.

    Notes
    -----
    Kernel mode (Kulis et al., 2009, Alg. 3): to learn a low-rank kernel ``K = V Λ Vᵀ`` from
    ``K₀ = V₀ Λ₀ V₀ᵀ`` (V₀ with orthonormal columns), fit on the rows of V₀ with
    ``prior=np.diag(Λ₀)`` and index-pair constraints; then
    ``V = V₀ @ eigenvectors_`` and ``Λ = diag(eigenvalues_)``. The rank of K never
    exceeds that of K₀ (zero entries of Λ₀ leave the range).

    The slack penalty is ``D_vN(ξ/ξ₀, 1) = Σ (ξ/ξ₀) log(ξ/ξ₀) − ξ/ξ₀ + 1``, the
    relative form Kulis et al., 2009, §6.2.1 suggests: each projection updates
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

    _parameter_constraints: dict = {
        **_BasePairBregman._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        n_components="auto",
        *,
        prior="identity",
        gamma=0.1,
        bounds=None,
        n_constraints=None,
        n_neighbors=3,
        tol=0.03,
        max_iter=1000,
        warm_start=False,
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
        self.warm_start = warm_start
        self.verbose = verbose
        self.random_state = random_state

    def _fit(self, X, constraints, rng):
        eigenvectors, eigenvalues = ascending_prior(
            X, self.prior, resolve_components(self.n_components, self.prior, X.shape[1]))
        factor = np.ascontiguousarray(X @ eigenvectors)
        targets, self.bounds_ = self._targets(factor * np.sqrt(eigenvalues), constraints, rng)
        direction = constraints.labels.astype(np.float64)
        # Slack penalty γ D_vN(ξ/ξ₀, 1): relative, like LogDet's (Kulis et al., 2009, §6.2.1).
        slack = np.zeros(len(targets)) if np.isinf(self.gamma) else targets / self.gamma
        rows, local_pairs = paired_rows(factor, constraints.pairs)
        dual, targets, Q, W = self._start(rows, local_pairs, constraints, targets, slack,
                                          np.log(eigenvalues))

        kernel = von_neumann_krylov_sweep if len(Q) >= KRYLOV_MIN_RANK else von_neumann_sweep
        counters = np.zeros(4, dtype=np.intp)

        def sweep(order):
            nonlocal kernel
            counters[:] = 0
            n_violated = kernel(factor, constraints.pairs, direction, targets, slack, dual,
                                Q, W, order, root_rtol=ROOT_RTOL, counters=counters)
            if counters[3] > KRYLOV_MAX_SHARE * len(Q) * len(order):
                kernel = von_neumann_sweep
            return n_violated

        self.n_iter_ = cyclic_projections(
            sweep, dual, (targets, Q, W), tol=self.tol, max_iter=self.max_iter,
            verbose=self.verbose, name=type(self).__name__, random_state=rng,
            screen=lambda: screen_violations((rows @ W) * np.exp(Q / 2), local_pairs,
                                             direction, targets),
        )
        self.eigenvalues_, self.eigenvectors_, self.components_ = components_from_eigen(
            eigenvectors, W, Q, trace_one=False)
        self.dual_coef_ = dual

    def _start(self, rows, local_pairs, constraints, targets, slack, prior_log):
        """Duals, bounds ξ and the logarithm's eigenpairs ``(Q, W)`` to cycle from.

        The prior (ν = 0, ``log M = diag(prior_log)``), or with ``warm_start`` the last
        fit's duals on the same pairs. Each projection adds ``−δᵢ Δνᵢ zᵢzᵢᵀ`` to log M
        (``zᵢ`` a pair's difference of ``rows``) and multiplies ξᵢ by
        ``exp(δᵢ Δνᵢ ξ₀ᵢ / γ)`` (``slack`` holds ξ₀/γ), so any ν ≥ 0 fixes both. Duals
        whose bounds overflow (far larger than this γ's) are not used.
        """
        prior = np.zeros(len(targets)), targets, prior_log, np.eye(len(prior_log), order="F")
        dual = self._warm_duals(constraints)
        if dual is None:
            return prior
        weights = constraints.labels * dual
        with np.errstate(over="ignore"):
            bounds = targets * np.exp(weights * slack)
        if not np.all(np.isfinite(bounds) & (bounds > 0.0)):
            return prior
        Q, W = linalg.eigh(np.diag(prior_log) - weighted_outer_sum(rows, local_pairs, weights))
        return dual, bounds, Q, np.asfortranarray(W)
