"""LogDet (ITML) metric learning by cyclic Bregman projections (Kulis et al., 2009, §5.1, §6).

The learned matrix minimises the LogDet divergence to a prior subject to pair
constraints. It is kept factored in the range of the prior: with ``M₀ = L₀ᵀ L₀``
(r rows), ``G₀ = X L₀ᵀ`` and ``M = L₀ᵀ B Bᵀ L₀``, each projection updates the r×r
lower-triangular ``B`` by CHOLUPDATEMULT in O(r²), whatever the number of samples.
When the pairs' differences span fewer than r dimensions (fewer paired samples than
features, constant features), ``B`` lives in that span and r is its dimension.
The same estimator is the transductive kernel learner of Kulis et al., 2009, Alg. 2: fit it on a
kernel factor ``G₀`` with ``prior="identity"`` and index-pair constraints.
"""

import numpy as np
from scipy import linalg

from .._core import cyclic_projections, oriented_columns, paired_rows, screen_violations
from ._base import (
    _BasePairBregman,
    pair_difference_basis,
    prior_root,
    weighted_outer_sum,
)
from ._logdet_kernels import logdet_sweep


class LogDet(_BasePairBregman):
    """Information-theoretic metric learning with LogDet Bregman projections.

    Learns ``M ⪰ 0`` minimising ``D_ld(M, M₀) + γ D_ld(ξ, ξ₀)`` subject to
    ``d²_M(xᵢ, xⱼ) ≤ ξ`` for similar pairs and ``≥ ξ`` for dissimilar pairs (ITML;
    Kulis et al., 2009, §5.1, slack §6.2.1). Projections are exact, with dual corrections, so the
    fit converges to the optimum, not to a nearby point (Kulis et al., 2009, App. B).

    Read more in the :ref:`User Guide <logdet>`.

    Parameters
    ----------
    n_components : int, default=None
        Rank of the learned metric. LogDet keeps the rank of its prior, so a rank-k
        prior (the top-k principal directions for ``prior="identity"``) gives a rank-k
        metric learned in O(k²) per projection. ``None`` keeps the prior's rank.

    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features), \
            default="identity"
        Starting matrix ``M₀``: the Euclidean metric, the inverse covariance of X, or
        a symmetric PSD matrix. The metric keeps the prior's range: a rank-deficient
        prior (the covariance of collinear features, say) gives fewer output columns
        than features, with a warning unless ``n_components`` asks for that rank.

    gamma : float, default=0.1
        Weight γ > 0 of the slack divergence ``D_ld(ξ, ξ₀)``: small γ lets the bounds
        move freely, ``np.inf`` enforces the constraints exactly. The default was
        chosen with ``n_neighbors=3`` by leave-one-data-set-out on 12 data sets (see
        :ref:`choosing_defaults`).

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
        ``‖Δν‖₁ / (‖ν‖₂ + ‖ν_prev‖₂)`` (the ITML criterion). Each cycle visits the
        constraints in a fresh random order, which converges in far fewer cycles than
        ITML's fixed order.

    max_iter : int, default=1000
        Maximum number of cycles through the constraints.

    warm_start : bool, default=False
        When the last fit had the same pairs, start the cycles from its dual
        variables instead of from the prior, as along a path of increasing ``gamma``
        (:class:`LogDetCV` runs one per fold). The duals determine the matrix
        (``M⁻¹ = M₀⁻¹ + Σ δᵢ νᵢ zᵢzᵢᵀ``), so the fit reaches the same optimum, in fewer
        cycles when the last one was near. Duals that do not fit the new problem
        (another X, or a smaller ``gamma`` than they allow) are not used.

    verbose : int, default=0
        Print a table row per cycle.

    random_state : int, RandomState instance or None, default=None
        Seeds the pair draw, the bound estimate and the order of every cycle.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L``, ``M = LᵀL``.

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

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.neighbors.NeighborhoodComponentsAnalysis : Metric learning by stochastic
        nearest neighbours.

    References
    ----------
    B. Kulis, M. Sustik and I. Dhillon. Low-rank kernel learning with Bregman matrix
    divergences. JMLR 10, 2009.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from psdmetric import LogDet
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(LogDet(random_state=0), KNeighborsClassifier(3))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        **_BasePairBregman._parameter_constraints,
        "warm_start": ["boolean"],
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
        initial = prior_root(X, self.prior, self.n_components)
        factor = np.ascontiguousarray(X @ initial.T)
        targets, self.bounds_ = self._targets(factor, constraints, rng)
        # Cycle in the span of the pair differences if smaller (wide data, constant features).
        basis = pair_difference_basis(factor, constraints.pairs)
        if basis is not None:
            factor = np.ascontiguousarray(factor @ basis)
        direction = constraints.labels.astype(np.float64)
        rows, local_pairs = paired_rows(factor, constraints.pairs)
        dual, B = self._start(rows, local_pairs, constraints, targets)
        gamma_ratio, inv_gamma = (1.0, 0.0) if np.isinf(self.gamma) else (
            self.gamma / (self.gamma + 1.0), 1.0 / self.gamma)

        def sweep(order):
            return logdet_sweep(factor, constraints.pairs, direction, targets, dual, B,
                                gamma_ratio, inv_gamma, order)

        def screen():
            return screen_violations(rows @ B, local_pairs, direction, targets)

        self.n_iter_ = cyclic_projections(
            sweep, dual, (targets, B), tol=self.tol, max_iter=self.max_iter,
            verbose=self.verbose, name=type(self).__name__, random_state=rng,
            screen=screen,
        )
        if basis is not None:
            # M's factor is I + Q (B − I) Qᵀ in the prior's range: the identity off the span.
            transform = basis @ ((B.T - np.eye(len(B))) @ basis.T)
            transform[np.diag_indices_from(transform)] += 1.0
            components = transform @ initial
        else:
            components = B.T @ initial
        # A row's sign is free (LᵀL is the same); fixed, transform is the same on every build.
        self.components_ = oriented_columns(components.T).T
        self.dual_coef_ = dual

    def _start(self, rows, local_pairs, constraints, targets):
        """Duals and lower-triangular ``B`` to cycle from; slack bounds ``targets`` in place.

        The prior (ν = 0, B = I), or with ``warm_start`` the last fit's duals on the same
        pairs: they fix ``(B Bᵀ)⁻¹ = I + Σ δᵢ νᵢ fᵢ fᵢᵀ`` (``fᵢ`` a pair's difference of
        ``rows``) and the slack bounds ``1/ξᵢ = 1/ξ₀ᵢ − δᵢ νᵢ / γ``. Duals that make
        either not positive (another X, a smaller γ than theirs allows) are not used.
        """
        rank = rows.shape[1]
        prior = np.zeros(len(targets)), np.eye(rank, order="F")
        dual = self._warm_duals(constraints)
        if dual is None:
            return prior
        weights = constraints.labels * dual
        inverse_targets = 1.0 / targets - (0.0 if np.isinf(self.gamma) else weights / self.gamma)
        if np.any(inverse_targets <= 0.0):
            return prior
        precision = np.eye(rank) + weighted_outer_sum(rows, local_pairs, weights)
        try:
            # B Bᵀ = precision⁻¹ with B lower: the Cholesky factor of the index-reversed matrix.
            lower = linalg.cholesky(precision[::-1, ::-1], lower=True)
        except linalg.LinAlgError:
            return prior
        B = linalg.solve_triangular(lower, np.eye(rank), lower=True).T[::-1, ::-1]
        targets[:] = 1.0 / inverse_targets
        return dual, np.asfortranarray(B)
