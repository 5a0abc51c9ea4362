"""PSDBoost: large-margin triplet metric learning by matrix generation (Shen et al., 2008).

The SDP (3) of Shen et al. (2008), ``max ρ − C Σξ`` over trace-one PSD ``X`` with
``⟨A_r, X⟩ ≥ ρ − ξ_r`` for every triplet, is solved as a linear program over the
extreme points of the trace-one PSD set, the rank-one ``u uᵀ`` with ``‖u‖ = 1``
(Shen et al., 2008, Thm 3.4). Column generation alternates two steps:

- the restricted dual (D1) over the bases found so far, an LP in the triplet weights
  ``w`` solved by HiGHS; its duals are the primal ``θ``, ``ρ`` and ``ξ``
  (``_master_lp.py``);
- the base learner (B1), the top eigenpairs of ``H = Σ w_r A_r``: dense for moderate
  dimension, otherwise Lanczos (ARPACK) on ``H u = Eᵀ (e ∘ E u)`` with ``E`` the
  stacked difference vectors, so no ``A_r`` is ever formed (``_pricing.py``).

``π`` (the restricted dual optimum) bounds the SDP optimum from below and ``λmax(H)``
at any feasible ``w`` from above, so a gap ``λmax(H) − π`` below
``tol · max(|π|, |λmax(H)|)`` certifies the objective to relative accuracy ``tol``
(near an optimum of 0 the gap is measured against the first iteration's instead).
Where the classes overlap, ``π`` settles long before ``λmax(H)`` comes down to it (the
tailing-off of column generation); the fit also stops when, at the pace of the last
10 iterations, ``π`` would need more than ``10 / tol`` iterations to close the gap, or,
with the gap within three times that threshold, closing it down to the threshold would
take more than 10 (at d = 100 the first rule alone let the fit run 60-odd iterations
for no better k-NN error).

Two restrictions of the feasible set keep the metric usable for k-NN without changing
the algorithm: ``min_rank`` caps every eigenvalue (the extreme points become
``U Uᵀ / min_rank``), and ``shrinkage`` keeps a share ``s`` of the trace Euclidean,
``X = s I / D + (1 − s) Y``, which shifts each triplet's LP column by ``s tr(A_r) / D``.

Two standard remedies for the tailing-off of column generation (Shen et al., 2008, §6),
on by default and off to recover the paper's Algorithm 1: pricing at smoothed weights
(Wentges) and several eigenvectors per iteration. The LP is kept small without changing
its optimum: it carries only the triplets that can take weight, and drops bases and
triplets that stayed at zero.
"""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (MahalanobisMixin, iterate, one_blas_thread, oriented_columns,
                     triplets_from_labels)
from ._column_generation import ColumnGeneration

# Defaults chosen by leave-one-data-set-out 5-NN error over a 14-set suite
# (bench/bench_psdboost_defaults.py): target neighbours, the cap on triplets, the
# fraction ν of triplets allowed inside the margin when C is None (C = 1 / (ν
# n_triplets)), min_rank = ⌈fraction · n_features⌉ up to a cap when it is None, the
# share of the trace kept on the Euclidean metric, and the stopping tolerance.
_DEFAULT_NEIGHBORS = 3
_DEFAULT_MAX_TRIPLETS = 5000
_DEFAULT_NU = 0.3
_DEFAULT_RANK_FRACTION = 0.25
_DEFAULT_MAX_RANK = 32
_DEFAULT_SHRINKAGE = 0.05
_DEFAULT_TOL = 3e-2


class PSDBoost(MahalanobisMixin):
    """Large-margin triplet metric learning by matrix generation (PSDBoost).

    Learns a trace-one PSD matrix ``X`` maximising the soft margin ``ρ − C Σ ξ_r``
    subject to ``d²_X(a_i, a_k) − d²_X(a_i, a_j) ≥ ρ − ξ_r``, ``ξ ≥ 0``, for triplets
    ``(i, j, k)`` (``i`` should be closer to ``j`` than to ``k``), the SDP (3) of
    Shen, Welsh and Wang. ``X = Σ θ_m u_m u_mᵀ`` is built from rank-one bases by
    column generation: each base is a top eigenvector of the triplet matrices
    weighted by the dual of the current restricted LP, so no SDP solver is needed.

    Read more in the :ref:`User Guide <psdboost>`.

    Parameters
    ----------
    C : float or None, default=None
        Soft-margin trade-off. The dual weights satisfy ``0 ≤ w_r ≤ C`` and
        ``Σ w_r = 1``, so ``C`` must be at least ``1 / n_triplets`` (below it the
        margin is unbounded); ``C ≥ 1`` is the hard margin, which maximises the
        smallest margin. ``C = 1 / (ν n_triplets)`` lets about a fraction ``ν`` of
        the triplets fall inside the margin. ``None`` scales ``C`` with the number of
        triplets: ``C = 1 / (0.3 · n_triplets)``, at most 30 % with slack.

    margin : {"relative", "absolute"}, default="relative"
        ``"absolute"`` is the SDP (3) as printed: the margin of triplet ``r`` is
        ``d²_X(a_i, a_k) − d²_X(a_i, a_j)``. ``"relative"`` divides it by the
        Euclidean ``d²(a_i, a_k) + d²(a_i, a_j)``, so that far-apart triplets do not
        outweigh near ones (every relative margin is in ``[−1, 1]``); this is the SDP
        (3) for the triplet matrices ``A_r`` divided by that constant.

    min_rank : int or None, default=None
        Every eigenvalue of ``X`` is at most ``1 / min_rank``, so its rank is at least
        ``min_rank``: the feasible set is ``{0 ⪯ X ⪯ I / min_rank, tr X = 1}``, whose
        extreme points are the ``U Uᵀ / min_rank`` with ``min_rank`` orthonormal
        columns. ``1`` is the trace-one set of Shen, Welsh & Wang (2008), where the
        optimum often has a rank too low for k-NN; ``n_features`` gives the Euclidean
        metric. ``None``: a quarter of the features (rounded up), at most 32.

    shrinkage : float in [0, 1), default=0.05
        Share ``s`` of the trace kept on the Euclidean metric: ``X = s I / D + (1 − s)
        Y`` with ``Y`` in the set above (``D`` features), and the SDP (3) is solved
        over this ``X``. Every eigenvalue of ``X`` is then at least ``s / D``, so
        the metric keeps every direction, at a weight the triplets cannot remove,
        where the set above alone has extreme points of rank ``min_rank``. The
        triplet margins of the extreme points shift by ``s tr(A_r) / D`` and the
        eigenvectors of ``H`` do not change, so the column generation is the same.
        ``0`` is the SDP (3) as printed.

    n_neighbors : int, default=3
        With labels ``y``: triplets join each sample's ``n_neighbors`` nearest
        same-class samples (targets) to its impostors, its ``n_neighbors`` nearest
        other-class samples and the other-class samples no farther than its targets
        (:func:`~psdmetric.triplets_from_labels`). A sample whose class has
        ``n_neighbors`` samples or fewer takes the others of its class as targets.

    max_triplets : int or None, default=5000
        With labels ``y``: keep this many triplets (``None``: all), taken in turns
        over the samples, each one's nearest impostors first.

    smoothing : float in [0, 1), default=0.9
        Dual smoothing against the tailing-off of column generation: new bases are
        the eigenvectors of ``H`` at ``smoothing · w_best + (1 − smoothing) · w``,
        with ``w_best`` the weights of the lowest ``λmax(H)`` so far (at ``w``
        itself when those do not cut off ``w``). ``0`` prices at ``w`` only, as in
        the paper's Algorithm 1. It changes the path, not the optimum.

    bases_per_iter : int, default=8
        Up to this many top eigenvectors of ``H`` enter per iteration (those whose
        constraint cuts off the current ``w``); ``1`` is the paper's Algorithm 1.

    tol : float, default=3e-2
        The stopping rule is ``λmax(H) ≤ π + ε′`` with ``ε′ = tol · max(|π|,
        |λmax(H)|, g₁)`` and ``g₁`` the gap at the first iteration. As ``π`` and
        ``λmax(H)`` bracket the SDP optimum, the learned objective is then within a
        fraction ``tol`` of it, or the gap has shrunk ``1 / tol``-fold (optima near 0,
        where a relative accuracy would take very many iterations). With
        ``min_rank > 1``, ``λmax(H)`` stands for the mean of the top ``min_rank``
        eigenvalues, the bound over that feasible set. The default was chosen with
        ``C`` and ``min_rank`` for k-NN error (see the User Guide); 1e-2 halves the
        gap at about twice the iterations, for no better k-NN error on the suite.
        The fit also stops when column generation tails off, judged at the pace of
        the last 10 iterations: when ``π`` has risen by at most ``tol`` times the gap
        ``λmax(H) − π`` (closing the gap at that pace would take more than ``10 /
        tol`` iterations), or when the gap is at most ``3 ε′`` and closed by less
        than what is left of it above ``ε′`` (more than 10 further iterations). The
        objective is then not certified to ``tol``; ``max_eigenvalue_`` and
        ``dual_objective_`` show by how much.

    max_iter : int, default=500
        Maximum number of iterations (restricted LP solves, each followed by up to
        ``bases_per_iter`` new bases); reaching it raises a ``ConvergenceWarning``.

    verbose : int, default=0
        Print a table row per iteration.

    random_state : int, RandomState instance or None, default=None
        Seeds the triplet subsample and the Lanczos start vectors.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L`` with ``X = LᵀL`` (trace one); its rows are
        orthogonal and ``n_components = rank(X)``: ``n_features`` when
        ``shrinkage > 0``, otherwise at most ``min_rank`` times the number of bases.

    bases_ : ndarray of shape (n_bases, min_rank, n_features)
        The orthonormal rows ``U_mᵀ`` of the bases with positive weight.

    base_weights_ : ndarray of shape (n_bases,)
        Their weights ``θ_m > 0``, ``Σ θ_m = 1``: ``X = s I / D + (1 − s) Σ θ_m U_m
        U_mᵀ / min_rank`` with ``s`` the shrinkage.

    dual_coef_ : ndarray of shape (n_triplets,)
        The triplet weights ``w`` of the last restricted dual (D1).

    margin_ : float
        ``ρ`` of the SDP (3), in the squared units of ``X``.

    slack_ : ndarray of shape (n_triplets,)
        ``ξ`` of the SDP (3), in the squared units of ``X``.

    objective_ : float
        ``ρ − C Σ ξ_r``, the primal objective of the learned ``X``.

    dual_objective_ : ndarray of shape (n_iter_,)
        The optimum ``π`` of the restricted dual (D1) at each iteration: a
        non-decreasing lower bound on the SDP optimum (the paper's Fig. 1).

    max_eigenvalue_ : ndarray of shape (n_iter_,)
        The lowest ``λmax(H)`` found up to each iteration: a non-increasing upper
        bound on the SDP optimum (the mean of the top ``min_rank`` eigenvalues; with
        shrinkage ``s``, ``(1 − s)`` times it plus ``s tr(H) / D``). The
        fit stops once ``max_eigenvalue_ − dual_objective_`` is at most ``tol`` times
        the largest of their absolute values and the first gap.

    constraints_ : TripletConstraints
        The triplets the metric was fitted on.

    C_ : float
        The soft-margin trade-off used: ``C``, or its scaled default.

    n_iter_ : int
        Number of iterations (restricted LP solves).

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    LogDet : Metric learning from pair constraints by Bregman projections.

    References
    ----------
    C. Shen, A. Welsh and L. Wang. PSDBoost: matrix-generation linear programming for
    positive semidefinite matrices learning. NIPS 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from psdmetric import PSDBoost
    >>> X, y = load_iris(return_X_y=True)
    >>> learner = PSDBoost(min_rank=2, random_state=0)
    >>> model = make_pipeline(learner, KNeighborsClassifier(5)).fit(X, y)
    >>> model.score(X, y) > 0.95
    True
    >>> M = learner.get_mahalanobis_matrix()
    >>> float(np.trace(M)), bool(np.linalg.eigvalsh(M).max() <= 1 / 2 + 1e-12)
    (1.0, True)
    """

    _constraint_kind = "triplets"

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "margin": [StrOptions({"relative", "absolute"})],
        "min_rank": [Interval(Integral, 1, None, closed="left"), None],
        "shrinkage": [Interval(Real, 0, 1, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "max_triplets": [Interval(Integral, 1, None, closed="left"), None],
        "smoothing": [Interval(Real, 0, 1, closed="left")],
        "bases_per_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        C=None,
        *,
        margin="relative",
        min_rank=None,
        shrinkage=_DEFAULT_SHRINKAGE,
        n_neighbors=_DEFAULT_NEIGHBORS,
        max_triplets=_DEFAULT_MAX_TRIPLETS,
        smoothing=0.9,
        bases_per_iter=8,
        tol=_DEFAULT_TOL,
        max_iter=500,
        verbose=0,
        random_state=None,
    ):
        self.C = C
        self.margin = margin
        self.min_rank = min_rank
        self.shrinkage = shrinkage
        self.n_neighbors = n_neighbors
        self.max_triplets = max_triplets
        self.smoothing = smoothing
        self.bases_per_iter = bases_per_iter
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Fit the metric from class labels or from explicit triplets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.

        y : array-like of shape (n_samples,), default=None
            Class labels; triplets are formed from nearest neighbours. Leave
            ``None`` when passing ``constraints``.

        constraints : TripletConstraints, default=None
            Explicit triplets ``(i, j, k)`` of rows of ``X``: ``i`` should be closer
            to ``j`` than to ``k``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        n_triplets = len(constraints.triplets)
        C = min(1.0, 1.0 / (_DEFAULT_NU * n_triplets)) if self.C is None else self.C
        if C * n_triplets < 1.0:
            raise ValueError(
                f"C={C} is below 1/n_triplets = 1/{n_triplets}: the soft margin "
                f"would be unbounded. Use C >= {1.0 / n_triplets:.3g}."
            )
        differences, unit = _scaled_differences(
            X, constraints.triplets, relative=self.margin == "relative")
        rank = min(_default_min_rank(X.shape[1]) if self.min_rank is None else self.min_rank,
                   X.shape[1])
        with one_blas_thread():
            generation = ColumnGeneration(
                differences, C, rank=rank, shrinkage=self.shrinkage, smoothing=self.smoothing,
                bases_per_iter=self.bases_per_iter, tol=self.tol, rng=rng,
                name=type(self).__name__,
            )
            self.n_iter_ = iterate(
                generation.one_round, generation, max_iter=self.max_iter,
                verbose=self.verbose, name=type(self).__name__, unit="iteration",
                columns=generation.columns,
            )
            _, w, bases, theta, rho, xi = generation.solved[1]
            self.components_ = _orthogonal_factor(bases, theta, self.shrinkage)
        duals, upper_bounds = np.array(generation.duals), np.array(generation.upper_bounds)
        self.bases_ = bases
        self.base_weights_ = theta
        self.dual_coef_ = w
        self.margin_ = rho * unit
        self.slack_ = xi * unit
        self.objective_ = (rho - C * xi.sum()) * unit
        self.dual_objective_ = duals * unit
        self.max_eigenvalue_ = upper_bounds * unit
        self.constraints_ = constraints
        self.C_ = C
        return self

    def _constraints_from_labels(self, X, y, random_state):
        return triplets_from_labels(X, y, self.n_neighbors, self.max_triplets, random_state)


def _default_min_rank(n_features):
    return min(n_features, max(1, int(np.ceil(_DEFAULT_RANK_FRACTION * n_features))),
               _DEFAULT_MAX_RANK)


def _scaled_differences(X, triplets, relative):
    """Stacked difference vectors ``[a_i − a_k; a_i − a_j]`` of unit maximum norm.

    The optimal ``X`` of (3) does not change when the data are scaled, and the
    objective scales with the squared scale ``unit``: rescaling keeps the LP and the
    eigen-problems in [−1, 1] whatever the magnitude of the features. ``relative``
    divides each triplet's pair by ``√(‖a_i − a_k‖² + ‖a_i − a_j‖²)`` first (its
    matrix ``A_r`` by ``d²(a_i, a_k) + d²(a_i, a_j)``), which makes ``unit`` free of
    the data's scale.
    """
    i, j, k = triplets.T
    magnitude = np.abs(X[np.unique(triplets)]).max()
    scaled = X / magnitude if magnitude > 0 else X
    differences = np.concatenate([scaled[i] - scaled[k], scaled[i] - scaled[j]])
    lengths = np.einsum("ij,ij->i", differences, differences)
    if relative:
        size = np.sqrt(lengths[: len(triplets)] + lengths[len(triplets):])
        size = np.tile(np.where(size > 0, size, 1.0), 2)
        differences /= size[:, None]
        lengths /= size**2
        magnitude = 1.0
    largest = np.sqrt(lengths.max())
    if largest == 0:
        return differences, 1.0
    return differences / largest, float((magnitude * largest) ** 2)


def _orthogonal_factor(bases, theta, shrinkage):
    """``L`` with orthogonal rows and ``LᵀL = s I / D + (1 − s) Σ θ_m U_m U_mᵀ / rank``.

    Without shrinkage the zero directions are dropped.
    """
    n_bases, rank, n_features = bases.shape
    weighted = (np.sqrt(theta / rank)[:, None, None] * bases).reshape(-1, n_features)
    # gesvd: the default gesdd fails to converge on some of these stacks of bases.
    _, singular_values, Vt = linalg.svd(weighted, full_matrices=False, lapack_driver="gesvd")
    rank_tol = max(weighted.shape) * np.finfo(float).eps * singular_values[0]
    keep = singular_values > rank_tol
    if shrinkage == 0:
        return singular_values[keep, None] * oriented_columns(Vt[keep].T).T
    # The directions Y leaves out complete an orthonormal basis of the features.
    n_kept = int(keep.sum())
    basis = linalg.qr(Vt[keep].T, mode="full")[0]
    basis[:, :n_kept] = Vt[keep].T
    eigenvalues = np.full(n_features, shrinkage / n_features)
    eigenvalues[:n_kept] += (1.0 - shrinkage) * singular_values[keep] ** 2
    return np.sqrt(eigenvalues)[:, None] * oriented_columns(basis).T
