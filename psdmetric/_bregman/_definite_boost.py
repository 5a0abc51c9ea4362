"""DefiniteBoost: trace-one von Neumann metric learning from pair constraints.

The trace-one problem of Tsuda, Rätsch & Warmuth (2005), §4 (``min D_vN(W, W₁)``,
``tr W = 1``, ``tr(W C_j) ≤ 0``), solved by their greedy approximate projections or by
exact projections (Kulis, Sustik & Dhillon (2009), §6.3). The matrix is kept as in
:mod:`psdmetric._bregman._von_neumann`, ``M = U W exp(Q) Wᵀ Uᵀ``.
"""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    ArrayCheckpoint,
    Round,
    cyclic_projections,
    iterate,
    paired_rows,
    screen_violations,
)
from ._base import _BasePairBregman, ascending_prior, resolve_components
from ._definite_boost_kernels import definite_boost_steps
from ._von_neumann import components_from_eigen
from ._von_neumann_kernels import von_neumann_sweep


class DefiniteBoost(_BasePairBregman):
    """DefiniteBoost: trace-one von Neumann metric learning (Tsuda et al., 2005, §4).

    Learns a trace-one ``W ⪰ 0`` minimising ``D_vN(W, W₁)`` (``W₁ = M₀ / tr M₀``)
    subject to ``tr(W C_j) ≤ 0`` with ``C_j = z zᵀ − u I`` for a similar pair
    (``d²_W ≤ u``) and ``C_j = l I − z zᵀ`` for a dissimilar pair (``d²_W ≥ l``),
    ``z = xᵢ − xⱼ``. With ``projection="approximate"`` (Tsuda, Rätsch and Warmuth) each
    step takes the most violated constraint and the closed-form step of eq. 13, which
    minimises an upper bound of the dual objective (eq. 9), so that objective falls at
    every step (Thm. 4.1). With ``projection="exact"`` the constraints are visited in
    cycles and projected on exactly (Kulis et al., 2009, §6.3), with dual corrections.

    Slack (``gamma < inf``) caps each of the ``m`` duals, ``0 ≤ γ_j ≤ gamma / (m ‖z_j‖²)``:
    this solves ``min D_vN(W, W₁) + (gamma / m) Σ_j max(0, tr(W C_j)) / ‖z_j‖²``, whose
    dual is eq. 9 minimised over that box, so pairs that no trace-one metric can meet
    together give way instead of driving the metric (see Notes).

    Read more in the :ref:`User Guide <definiteboost>`.

    Parameters
    ----------
    n_components : int, "auto" or None, default="auto"
        Rank of the learned metric: the range of the prior is kept (see
        :class:`VonNeumann`). ``None`` keeps the prior's rank; ``"auto"`` keeps it too,
        except for the identity prior on more than 100 features, which learns in the
        top 100 principal directions of X (chosen by the same leave-one-data-set-out
        as ``gamma``; on MNIST-5000's 784 pixels 218 misclassified of 2,000 against 254
        on every pixel, at a sixth of the CPU). Kernel learning over more than 100
        objects needs ``None`` (see Notes).

    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features), \
            default="identity"
        Starting matrix, normalised to trace one: ``W₁ = M₀ / tr(M₀)``.

    gamma : float, default=5.0
        Slack trade-off γ > 0 on the mean hinge loss of the ``m`` pairs: each pair's
        dual is capped at ``gamma / (m ‖z‖²)``, so that all pairs together change the
        eigenvalues of ``log W`` by at most ``gamma`` (scale-free, and the same for any
        number of pairs); ``np.inf`` enforces the constraints exactly (needed for
        ``projection="exact"``). With neighbour pairs and the percentile bounds
        nearly every violated pair ends at its cap, so ``gamma`` sets how far the
        metric moves from ``W₁``: larger values fit the pairs harder. The default was
        chosen with ``n_neighbors=3``, ``fit_unmeetable=False`` and
        ``n_components="auto"`` by leave-one-data-set-out over the 14 suite and 6 check
        sets (γ from 1 to 30, ``n_neighbors`` 1, 3 or 5, the unmeetable pairs fitted or
        left out, every feature or ``"auto"``, those settings whose fit at 784 features
        stays under 10 s), as the setting at most Euclidean's 5-NN error, in
        misclassified points, on the most other sets. The others chose it for 19 of the
        20 held-out sets (for mlb: 5 neighbours), and the held-out sets' choices are at
        most Euclidean's on 18 of the 20 (17 before ``fit_unmeetable``); the default
        itself is on 19 of the 20 (olive: 27 against 24 misclassified).

    bounds : array-like of shape (2,), default=None
        Squared-distance bounds ``(u, l)`` under the trace-one metric. ``None`` takes
        the 5th and 95th percentiles of the squared distances under ``W₁``.

    n_constraints : int, default=None
        Number of pairs drawn from the labels; ``None`` means ``40 * n_classes**2``.

    n_neighbors : int, default=3
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs.

    projection : {"approximate", "exact"}, default="approximate"
        ``"approximate"``: greedy steps of Tsuda et al., 2005, §4.2. ``"exact"``: cyclic exact
        von Neumann projections with dual corrections (Kulis et al., 2009, §6.3); hard
        constraints only (``gamma=np.inf``).

    dual_correction : bool, default=True
        For ``projection="approximate"``: also step on satisfied constraints whose dual
        is positive, never taking a dual below 0 (Kulis et al., 2009, §3.4). Without it the steps
        stop at the first point that satisfies every constraint, which need not be the
        optimum (Kulis et al., 2009, App. B). Exact projections always correct.

    fit_unmeetable : bool, default=False
        With slack, also fit the pairs no trace-one metric meets (a dissimilar pair
        whose squared length ``‖z‖²`` is below ``l``). Their hinge loss
        ``l − zᵀWz`` is positive for every trace-one W, so it is linear in W and never
        stops pulling: their duals sit at their caps whatever the other pairs ask,
        and they fix a share ``gamma / m`` each of ``log W``. ``False`` leaves them
        out, as without slack (dual 0). With neighbour pairs and the percentile
        bounds most dissimilar pairs are such pairs (see Notes).

    tol : float, default=1e-3
        ``"approximate"``: stop when every violated constraint whose dual is below its
        cap (with corrections: also every constraint with a positive dual) holds to
        ``tol`` relative to its bound, ``|d²_W − ξ| ≤ tol ξ``. ``"exact"``: stop when
        the duals change by at most ``tol`` over a cycle, as :class:`VonNeumann`.

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
        Dual variables ``0 ≤ γ_j ≤ gamma / (m ‖z_j‖²)`` (``log W ∝ log W₁ − Σ γ_j C_j``);
        0 for the pairs left out (see Notes).

    dual_objective_ : float
        ``log tr exp(log W₁ − Σ_j γ_j C_j)`` at the solution (Tsuda et al., 2005, eq. 9).

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
    pair with ``‖z‖² ≤ u`` always holds (it is left out, dual 0) and a dissimilar pair
    with ``‖z‖² ≤ l`` can never hold (``z`` in the range of the prior). Without slack
    such a pair is left out; with slack its penalty ``l − zᵀWz`` is positive for every
    trace-one W, so its dual sits at its cap at the optimum and, with
    ``fit_unmeetable=True``, it enters the starting point ``log W₁ − Σ γ_j C_j``.
    Neighbour pairs make this matter: with the percentile bounds, 74–100 % of the
    dissimilar neighbour pairs (the nearest samples of other classes) are shorter than
    ``l`` in the first training fold of iris, olive, midwest, crabs and penguins, so
    when fitted they fix most of ``log W`` (each a share ``gamma / m`` along its own
    direction) whatever the other pairs ask. The default leaves them out (see ``fit_unmeetable``).

    Feasibility and slack. Pairs drawn from labels with the 5th/95th-percentile bounds
    usually ask more than any trace-one metric can give (the classes overlap). Without slack
    (``gamma=np.inf``) the dual objective then falls without bound; the fit stops, with
    a ``ConvergenceWarning``, as soon as it falls below ``log λmin(W₁)``, which no
    feasible problem allows (weak duality: ``D_vN(W, W₁) ≤ −log λmin(W₁)`` for every
    trace-one W). On the first eleven sets of :ref:`choosing_defaults` that happens on
    every data set within a few steps, at a metric dominated by one direction (on iris
    and breast cancer its top eigenvalue holds 67–100 % of the trace) that is worse for
    k-NN than the Euclidean one on 9 of 11 sets. With slack the problem always has a
    solution, which the corrected steps reach. As most pairs from labels end at their
    cap, the corrected steps start from every pair violated under ``W₁`` at its cap (a
    point of the box, from which they lower the duals that should be lower): on digits
    (4,000 random pairs, d = 64) that takes 77 steps instead of 3,200.

    Kernel learning from index pairs (Tsuda et al., 2005, §5): fit on ``X = np.eye(n) / np.sqrt(2)``
    (so that ``z zᵀ`` is the paper's ``X_j`` with ½ on the diagonal entries of a and b and
    −½ off-diagonal) with ``PairConstraints``, ``bounds=(γ, l)`` (the paper's γ, a
    distance bound), ``gamma=np.inf`` (the paper's hard constraints) and
    ``n_components=None`` (every object: ``"auto"`` would keep 100 of them); the learned
    kernel is ``get_mahalanobis_matrix()``.

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
    >>> # Hard constraints (no slack)
    >>> model = DefiniteBoost(gamma=np.inf, tol=1e-8).fit(X, constraints=constraints)
    >>> np.round(model.get_mahalanobis_matrix(), 4)
    array([[0.2, 0. ],
           [0. , 0.8]])
    """

    _parameter_constraints: dict = {
        **_BasePairBregman._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "projection": [StrOptions({"approximate", "exact"})],
        "dual_correction": ["boolean"],
        "fit_unmeetable": ["boolean"],
    }

    def __init__(
        self,
        n_components="auto",
        *,
        prior="identity",
        gamma=5.0,
        bounds=None,
        n_constraints=None,
        n_neighbors=3,
        projection="approximate",
        dual_correction=True,
        fit_unmeetable=False,
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
        self.projection = projection
        self.dual_correction = dual_correction
        self.fit_unmeetable = fit_unmeetable
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    def _fit(self, X, constraints, rng):
        eigenvectors, eigenvalues = ascending_prior(
            X, self.prior, resolve_components(self.n_components, self.prior, X.shape[1]))
        eigenvalues = eigenvalues / eigenvalues.sum()
        factor = np.ascontiguousarray(X @ eigenvectors)
        targets, self.bounds_ = self._targets(factor * np.sqrt(eigenvalues), constraints, rng)
        direction = constraints.labels.astype(np.float64)
        differences = factor[constraints.pairs[:, 0]] - factor[constraints.pairs[:, 1]]
        lengths = np.einsum("ij,ij->i", differences, differences)
        # Eigenvalues of C_j = δ (z zᵀ − ξ I) on the range: δ(‖z‖² − ξ) and −δξ.
        top = np.where(direction > 0, lengths - targets, targets)
        bottom = np.where(direction > 0, -targets, targets - lengths)
        if len(eigenvalues) == 1:
            top = bottom = direction * (lengths - targets)
        usable = np.flatnonzero((bottom < 0) & (top > 0))
        # The mean hinge loss, not the sum: the pull of all pairs together is gamma's.
        with np.errstate(divide="ignore"):
            cap = self.gamma / (len(targets) * lengths)
        dual_coef = np.zeros(len(targets))
        if not np.isinf(self.gamma) and len(eigenvalues) > 1:
            # A pair no trace-one W meets (bottom > 0: a dissimilar pair shorter than l)
            # has its dual at the cap at the optimum: if fitted, it joins the start.
            if self.fit_unmeetable:
                unmet = np.flatnonzero((bottom > 0) & (lengths > 0))
                dual_coef[unmet] = cap[unmet]
            if self.dual_correction:
                # Most pairs end at their cap: start every pair violated under W₁ there
                # (a point of the box); the corrected steps lower those that should not be.
                slack = direction * (np.square(differences) @ eigenvalues - targets)
                dual_coef[usable[slack[usable] > 0]] = cap[usable[slack[usable] > 0]]
        weights = dual_coef * direction
        Q, W = np.linalg.eigh(np.diag(np.log(eigenvalues))
                              - (differences.T * weights) @ differences)
        W = np.asfortranarray(W)
        dual = dual_coef[usable]
        weights[usable] = 0.0
        problem = _TraceOneProblem(
            factor, constraints.pairs[usable], direction[usable], targets[usable],
            lengths[usable], bottom[usable], top[usable], cap[usable], eigenvalues,
            fixed=(weights @ lengths, weights @ targets), log_scale=Q[-1])
        Q -= Q[-1]
        if self.projection == "exact" and not np.isinf(self.gamma):
            raise ValueError(
                f"gamma={self.gamma!r} asks for slack, which only projection='approximate' "
                "has; pass gamma=np.inf for projection='exact'.")
        solve = self._exact if self.projection == "exact" else self._approximate
        self.n_iter_, self.n_projections_ = solve(problem, dual, Q, W, rng)
        dual_coef[usable] = dual
        self.dual_coef_ = dual_coef
        self.dual_objective_ = problem.dual_objective(Q, dual)
        self.eigenvalues_, self.eigenvectors_, self.components_ = components_from_eigen(
            eigenvectors, W, Q, trace_one=True)

    def _exact(self, problem, dual, Q, W, rng):
        """Cyclic exact projections onto ``d²_W ≤ u tr(W)`` (resp. ``≥ l tr W``)."""
        if len(dual) == 0:
            return 0, 0
        counters = np.zeros(3, dtype=np.intp)
        bounds = problem.targets.copy()
        hard = np.zeros(len(dual))
        rows, local_pairs = paired_rows(problem.factor, problem.pairs)

        def sweep(order):
            return von_neumann_sweep(problem.factor, problem.pairs, problem.direction,
                                     bounds, hard, dual, Q, W, order, relative=True,
                                     counters=counters)

        n_iter = cyclic_projections(
            sweep, dual, (bounds, Q, W), tol=self.tol, max_iter=self.max_iter,
            verbose=self.verbose, name=type(self).__name__, random_state=rng,
            # Each exact projection minimises the dual objective over one dual.
            failure=lambda: problem.infeasibility(problem.dual_objective(Q, dual)),
            screen=lambda: screen_violations((rows @ W) * np.exp(Q / 2), local_pairs,
                                             problem.direction, bounds * np.exp(Q).sum()),
        )
        return n_iter, int(counters[0])

    def _approximate(self, problem, dual, Q, W, rng):
        """Greedy approximate projections, one cycle (m steps) per call of the kernel."""
        m = len(dual)
        if m == 0:
            return 0, 0
        start = np.arange(m + 1, dtype=np.intp)
        shift = problem.direction * problem.targets
        # With slack every problem is feasible and the dual objective is bounded below.
        floor = problem.floor if np.isinf(self.gamma) else -np.inf
        offset = problem.offset
        n_steps = np.zeros(1, dtype=np.intp)

        def one_cycle():
            steps, residual, objective = definite_boost_steps(
                problem.samples, problem.ends, problem.direction, start, shift, problem.bottom,
                problem.top, dual, Q, W, offset=offset, max_steps=m, tol=self.tol,
                correction=self.dual_correction, floor=floor, cap=problem.cap)
            n_steps[0] += steps
            failure = problem.infeasibility(objective) if np.isinf(self.gamma) else None
            return Round((n_steps[0], residual, objective), converged=residual <= self.tol,
                         failure=failure)

        n_iter = iterate(
            one_cycle, ArrayCheckpoint(dual, Q, W, offset, n_steps), max_iter=self.max_iter,
            verbose=self.verbose, name=type(self).__name__, unit="cycle",
            columns=(("steps", "d"), ("rel. viol.", ".3e"), ("dual obj.", ".6e")),
        )
        return n_iter, int(n_steps[0])


class _TraceOneProblem:
    """The usable pair constraints of DefiniteBoost, in the prior's coordinates."""

    def __init__(self, factor, pairs, direction, targets, lengths, bottom, top, cap,
                 prior_eigenvalues, fixed=(0.0, 0.0), log_scale=0.0):
        self.factor = factor
        self.pairs = np.ascontiguousarray(pairs)
        self.direction = direction
        self.targets = targets
        # The samples the pairs use, and each pair as two rows of them.
        used, ends = np.unique(self.pairs, return_inverse=True)
        self.samples = np.ascontiguousarray(factor[used])
        self.ends = np.ascontiguousarray(ends.reshape(-1, 2), dtype=np.intp)
        self.lengths = lengths
        self.bottom = bottom
        self.top = top
        self.cap = cap
        self.prior_eigenvalues = prior_eigenvalues
        # Σ_j γ_j δ_j ‖z_j‖² and Σ_j γ_j δ_j ξ_j over the pairs fixed at their cap.
        self.fixed_lengths, self.fixed_targets = fixed
        # The dual objective minus (log Σ e^Q + Σ_j γ_j δ_j ξ_j) at the start, Q's top 0.
        self.offset = np.array([log_scale + self.fixed_targets])
        # Weak duality: a feasible problem keeps the dual objective above log λmin(W₁).
        self.floor = float(np.log(prior_eigenvalues.min()))

    def infeasibility(self, objective):
        """The warning text when the dual objective proves infeasibility, else None."""
        if objective >= self.floor:
            return None
        return ("the constraints are infeasible for a trace-one metric (the dual "
                "objective fell below log λmin(W₁), which weak duality rules out for a "
                "feasible problem); stopped there. Loosen the bounds (raise u, lower l) "
                "or remove constraints.")

    def dual_objective(self, Q, dual):
        """``log tr exp(log W₁ − Σ_j γ_j C_j)`` (Tsuda et al., 2005, eq. 9) from the learned Q.

        Q is kept up to an additive constant c; the trace of the logarithm fixes it:
        ``Σ (Q + c) = Σ log s₁ − Σ_j γ_j δ_j ‖z_j‖²``.
        """
        weights = dual * self.direction
        c = (np.sum(np.log(self.prior_eigenvalues)) - weights @ self.lengths
             - self.fixed_lengths - np.sum(Q)) / len(Q)
        top = Q.max()
        return float(top + c + np.log(np.exp(Q - top).sum()) + weights @ self.targets
                     + self.fixed_targets)
