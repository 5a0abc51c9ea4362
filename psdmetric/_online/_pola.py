"""POLA: a pseudo-metric and a threshold learned online by projections.

After Shalev-Shwartz, Singer & Ng (2004).

Each round projects ``(A, b)`` onto the half-space where the current pair has zero
hinge loss, then onto ``{A ⪰ 0, b ≥ 1}``. The second projection removes the single
negative eigenvalue the first one can create; it is found from the secular equation
of the rank-one change, solved on a tridiagonal reduction of A shared by many rounds
(:mod:`._pola_projection`): O(d^{7/3}) per round amortised, not O(d³).
``POLA`` learns A on the features; ``KernelPOLA`` (:mod:`._kernel_pola`) learns it in a
kernel's feature space.
"""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import PairClassifierMixin, leading_axes, oriented_columns
from ._base import _BaseOnline
from ._pola_kernels import pola_pass

# Pairs are processed in blocks: one product (or kernel evaluation) per block, not per pair.
_BLOCK = 256
# Relative size below which a difference's residual against POLA's span is rounding.
_SPAN_TOLERANCE = 1e-12


def _products_by_row(n_pairs, n_rows):
    """Multiply by the matrix once per row when the pairs are many more than the rows
    (random pairs), else once per pair difference (neighbour pairs: about two per row)."""
    return n_pairs > 4 * n_rows


def _hinge_losses(squared_distances, labels, threshold):
    """Largest and summed hinge loss of the pairs under ``(A, b)``."""
    if len(squared_distances) == 0:
        return 0.0, 0.0
    losses = np.maximum(0.0, labels * (squared_distances - threshold) + 1.0)
    return float(np.max(losses)), float(np.sum(losses))


class POLA(PairClassifierMixin, _BaseOnline):
    """Pseudo-metric online learning: a PSD matrix and a threshold by projections.

    Learns ``A ⪰ 0`` and ``b ≥ 1`` such that similar pairs have ``d²_A(x, x') ≤ b − 1``
    and dissimilar ones ``d²_A(x, x') ≥ b + 1`` (Shalev-Shwartz et al., 2004). On each pair
    with hinge loss ``ℓ = max(0, y(d²_A − b) + 1) > 0`` it sets ``α = ℓ / (‖x − x'‖⁴ + 1 + γ)``,
    ``A ← A − yα vvᵀ``, ``b ← b + yα`` (projection onto the zero-loss half-space,
    Fig. 1; γ > 0 is the inseparable variant, eq. 12), then projects onto
    ``A ⪰ 0, b ≥ 1``. A pair is predicted similar when ``d²_A(x, x') ≤ b``.

    ``fit`` is the online-to-batch conversion of §6: passes over the pairs until every
    training pair has hinge loss at most ``beta``, or until a pass lowers the total
    training hinge loss by at most ``tol`` times the first pass's (pairs that no
    ``(A, b)`` separates). ``partial_fit`` makes one online pass over a chunk.

    Parameters
    ----------
    gamma : float, default=1.0
        Relaxation γ ≥ 0 of the inseparable case (eq. 12): larger values take smaller
        steps. 0 is the separable algorithm of Fig. 1. The defaults of ``gamma``,
        ``init``, ``initial_threshold``, ``n_neighbors``, ``tol`` and ``max_iter`` were
        chosen together by leave-one-data-set-out on 12 data sets among the settings
        that fit a 2,000 × 100 training set with 30 classes in under 2 s CPU (see
        :ref:`choosing_defaults` and ``tol``).

    init : {"identity", "zero"}, default="identity"
        The starting matrix A₁. "identity": ``A₁ = c·I`` with c such that the median
        squared length of the training pair differences (of the first ``fit`` or
        ``partial_fit`` chunk) is ``b₁``: POLA, which moves (A, b) as little as each
        pair requires, then learns a metric that stays close to the Euclidean one
        where the pairs say nothing. "zero": ``A₁ = 0`` as in Shalev-Shwartz et al.
        (2004), where the metric holds only the directions of the pair differences
        that needed an update.

    beta : float, default=0.1
        ``fit`` stops once every training pair has hinge loss at most ``beta``; on
        separable pairs this takes at most ``⌈R(‖A*‖²_F + (b* − b₁)²) / β²⌉`` passes.

    initial_threshold : float, default=10.0
        The starting threshold ``b₁ ≥ 1``. With ``init="identity"`` the margin of
        one is ``1 / b₁`` of the median squared pair distance: larger values ask
        less of the metric.

    n_constraints : int, default=None
        Number of random pairs drawn from class labels (per ``partial_fit`` chunk)
        when ``n_neighbors=None``; ``None`` means ``40 * n_classes**2``. Same-class
        pairs are similar (+1), different-class pairs dissimilar (-1).

    n_neighbors : int, default=1
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs.

    n_components : int, "auto" or None, default="auto"
        Learn on the ``n_components`` leading principal axes of ``X`` (of the first
        ``fit`` pass or ``partial_fit`` chunk): A is 0 off their span, pairs from
        labels are drawn on them, and ``components_`` has ``n_components`` rows (at
        most ``n_features``; ``n_features`` or ``None`` learns on all features).
        ``"auto"`` takes 300 (all features when there are fewer): an update costs
        ``O(d^{7/3})`` in the dimension ``d`` learned on. 300 was chosen among 100,
        200, 300 and all features on the suite's sets with more than 100 features
        (``bench/bench_pola.py``, case ``components_choice``): on MNIST-5000 (784
        pixels) 5-NN error 10.0 % in 4–5 s a fit against 10.2 % in 8–9 s on all
        pixels; 100 and 200 axes gave 11.5 % and 11.1 %.

    max_iter : int, default=50
        Maximum number of passes ``fit`` makes over the pairs.

    tol : float, default=1e-2
        ``fit`` also stops when a pass lowers the total training hinge loss (under the
        ``(A, b)`` at the end of the pass) by at most ``tol`` times the first pass's.
        The defaults (``initial_threshold=10``, ``gamma=1``, ``tol=1e-2``,
        ``max_iter=50``) are the leave-one-data-set-out choice
        (``bench/bench_defaults.py``) among the settings whose fit takes under 2 s CPU
        on every training fold of a 2,000 × 100 synthetic set with 30 classes (1.4 s
        at most, 15–16 passes). Tighter stops with ``initial_threshold=30``,
        ``gamma=10`` score better on the 12 suite sets (``tol=5e-3``: 907 points
        misclassified against 935) but take 2.5–4.1 s on its first fold, where their
        passes keep lowering the loss by about 0.5 % of the first pass's each.

    verbose : int, default=0
        Print one table row per pass (its summary: the largest training hinge loss).

    random_state : int, RandomState instance or None, default=None
        Seeds the pairs drawn from labels.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L``, ``A = LᵀL``.

    threshold_ : float
        The learned threshold ``b``.

    constraints_ : PairConstraints
        The pairs of the last ``fit`` (not set by ``partial_fit``).

    n_iter_ : int
        Passes made by ``fit``, or ``partial_fit`` calls since the last reset.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    KernelPOLA : The same learner in a kernel's feature space.
    LogDet : Batch metric learning from pair constraints.

    Notes
    -----
    POLA is not invariant to the scale of the features: the margin is 1 and the step
    has ``‖x − x'‖⁴ + 1`` in its denominator, so both A and b move only when typical
    squared distances are of order one. Scale the data accordingly (e.g. divide by the
    root of the median squared pair distance). Pair ``bounds`` of a ``PairConstraints``
    are ignored (POLA learns its own threshold), as are pairs of identical points.

    The projection onto the PSD cone removes the one negative eigenvalue that
    ``A − α vvᵀ`` can have. It is the root of ``α vᵀ(A − λI)⁻¹v = 1`` on ``λ < 0``,
    found by Newton's method from the right, and its eigenvector is ``(A − λI)⁻¹v``.
    The solves with ``A − λI`` cost O(d^{7/3}) per round amortised, not O(d³): A is
    held as a tridiagonal reduction ``W T Wᵀ`` refreshed every ~d^{2/3} rank-one terms
    plus the terms since (Woodbury; ``T − λI`` factorises in O(d)), with a Cholesky
    factorisation of ``A − λI`` only where that is too ill-conditioned.

    Pair predictions use :meth:`pair_predict`, :meth:`pair_decision_function` and
    :meth:`pair_score` on arrays of shape (n_pairs, 2, n_features); the ``pair_``
    prefix keeps ``predict`` / ``score`` free for scikit-learn's per-sample API.

    References
    ----------
    S. Shalev-Shwartz, Y. Singer and A. Y. Ng. Online and batch learning of
    pseudo-metrics. ICML 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import POLA
    >>> X, y = load_iris(return_X_y=True)
    >>> X, y = X[y < 2], y[y < 2]  # setosa and versicolor
    >>> X = StandardScaler().fit_transform(X) / 2
    >>> # Random pairs: the threshold then separates classes, not only neighbours.
    >>> # These classes are separable, so the separable algorithm (gamma=0) fits them.
    >>> pola = POLA(gamma=0.0, n_neighbors=None, random_state=0).fit(X, y)
    >>> pola.n_iter_
    2
    >>> pairs = np.stack([X[[0, 0, 60]], X[[1, 60, 70]]], axis=1)  # same, other, same
    >>> pola.pair_predict(pairs)
    array([ 1, -1,  1])
    """

    _constraint_kind = "pairs"
    # An update costs O(d^{7/3}) (8–9 s a fit at MNIST's 784 pixels); 300 axes, not the
    # 100 of MEG and OnlineLogDet: fewer lose accuracy on MNIST-5000 (components_choice).
    _auto_components = 300

    _parameter_constraints: dict = {
        "gamma": [Interval(Real, 0, None, closed="both")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "initial_threshold": [Interval(Real, 1, None, closed="left")],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left"),
                         None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "init": [StrOptions({"identity", "zero"})],
    }

    def __init__(
        self,
        gamma=1.0,
        *,
        init="identity",
        beta=0.1,
        initial_threshold=10.0,
        n_constraints=None,
        n_neighbors=1,
        n_components="auto",
        max_iter=50,
        tol=1e-2,
        verbose=0,
        random_state=None,
    ):
        self.gamma = gamma
        self.init = init
        self.beta = beta
        self.initial_threshold = initial_threshold
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    def _constraints_from_labels(self, X, y, random_state):
        return super()._constraints_from_labels(self._on_leading_axes(X), y, random_state)

    def _initialize(self, n_features):
        n_features = self._n_components(n_features) or n_features
        self._axes = None
        self._matrix = np.zeros((n_features, n_features), order="F")
        self._threshold = float(self.initial_threshold)
        self._previous_pass_loss = np.inf
        # A₁ = c·I; c is read from the first pairs (init="identity") or 0 (init="zero").
        self._initial_scale = None
        # Orthonormal columns spanning range(A − A₁) and every pair difference seen, while
        # they span fewer dimensions than the features; None once they may span all.
        self._span = np.zeros((n_features, 0))

    def _update_span(self, X, pairs):
        """Extend ``_span`` by the differences of these pairs; None when it fills the space.

        Every POLA update, the PSD projection included, stays in the span of the pair
        differences and of range(A − A₁) (Shalev-Shwartz et al., 2004, §3.3, eq. 6): A₁ = c·I
        leaves the orthogonal complement at c, and the PSD projection only removes an
        eigenvalue below zero inside the span. So a pass
        can run on coordinates in that span: its factorisations then cost r³, not d³,
        which matters when there are fewer points than features.
        """
        if self._span is None:
            return
        rows = np.unique(pairs)
        n_features, rank = self._span.shape
        if len(rows) < 2:
            return
        differences = X[rows[1:]] - X[rows[0]]
        residual = differences - (differences @ self._span) @ self._span.T
        # Residual directions below this relative level are rounding, not new dimensions.
        cutoff = _SPAN_TOLERANCE * np.max(np.abs(differences)) * np.sqrt(differences.size)
        if np.max(np.abs(residual)) <= cutoff / np.sqrt(differences.size):
            return  # e.g. fit's later passes, over the same pairs
        if len(rows) - 1 + rank >= n_features:
            self._span = None
            return
        _, singular_values, directions = linalg.svd(residual, full_matrices=False)
        new = directions[singular_values > cutoff]
        if len(new):
            # Re-orthogonalise once: the new directions are only nearly orthogonal to _span.
            new = new - (new @ self._span) @ self._span.T
            self._span = linalg.qr(np.hstack([self._span, new.T]), mode="economic")[0]

    def _squared_lengths(self, X, pairs):
        differences = X[pairs[:, 0]] - X[pairs[:, 1]]
        return np.einsum("ij,ij->i", differences, differences)

    def _start(self, X, pairs):
        """Set ``A₁ = c·I``, c placing the median training pair on the threshold b₁."""
        self._initial_scale = 0.0
        if self.init == "identity":
            squared = self._squared_lengths(X, pairs)
            squared = squared[squared > 0]
            if len(squared):
                self._initial_scale = self._threshold / float(np.median(squared))
        self._matrix[np.diag_indices_from(self._matrix)] = self._initial_scale

    def _one_pass(self, X, constraints):
        X = np.asarray(X, dtype=np.float64)
        if self._initial_scale is None:
            self._axes = leading_axes(X, self._n_components(X.shape[1]))
        X = np.ascontiguousarray(X if self._axes is None else X @ self._axes)
        labels = constraints.labels.astype(np.float64)
        losses = np.empty(len(labels))
        if self._initial_scale is None:
            self._start(X, constraints.pairs)
        self._update_span(X, constraints.pairs)
        # The pair differences, read before the pass (the features they vary on) and after
        # it (the pass losses): one copy, no larger than the two gathers it replaces.
        differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
        if self._span is None:
            # Features on which no pair differs are outside every update: A keeps its
            # rows there, and the pass runs on the others (MNIST: 634 of 784 pixels).
            varying = np.flatnonzero(np.any(differences != 0, axis=0))
            if len(varying) == X.shape[1]:
                self._threshold = pola_pass(X, constraints.pairs, labels, self._matrix,
                                            self._threshold, self.gamma, losses)
            else:
                block = np.ix_(varying, varying)
                small = np.asfortranarray(self._matrix[block])
                self._threshold = pola_pass(np.ascontiguousarray(X[:, varying]),
                                            constraints.pairs, labels, small,
                                            self._threshold, self.gamma, losses)
                self._matrix[block] = small
        else:
            # A = S M Sᵀ + c(I − S Sᵀ) exactly; the pass runs on the coordinates Sᵀx.
            span, c = self._span, self._initial_scale
            small = np.asfortranarray(span.T @ self._symmetric_matrix() @ span)
            self._threshold = pola_pass(np.ascontiguousarray(X @ span), constraints.pairs,
                                        labels, small, self._threshold, self.gamma, losses)
            small = np.tril(small) + np.tril(small, -1).T - c * np.eye(len(small))
            self._matrix = np.asfortranarray(span @ small @ span.T)
            self._matrix[np.diag_indices_from(self._matrix)] += c
        A = self._symmetric_matrix()
        largest, self._pass_loss = 0.0, 0.0
        by_row = _products_by_row(len(labels), len(X))
        if by_row:
            rows, local = np.unique(constraints.pairs, return_inverse=True)
            moved, local = X[rows] @ A, local.reshape(-1, 2)
        # The training losses under the final (A, b), a block of pairs at a time.
        for start in range(0, len(labels), _BLOCK * 16):
            block = slice(start, start + _BLOCK * 16)
            informative = np.any(differences[block] != 0, axis=1)
            block_differences = differences[block][informative]
            if by_row:
                products = (moved[local[block, 0]] - moved[local[block, 1]])[informative]
            else:
                products = block_differences @ A
            squared = np.einsum("ij,ij->i", products, block_differences)
            block_labels = labels[block][informative]
            block_largest, block_total = _hinge_losses(squared, block_labels,
                                                       self._threshold)
            largest, self._pass_loss = max(largest, block_largest), self._pass_loss + block_total
        return largest

    _pass_summary = "max hinge loss"

    def _pass_converged(self, previous, max_loss):
        # Stop at separability (β), or when a pass lowers the total hinge loss by ≤ tol
        # times the first pass's: late passes shave the few pairs no (A, b) separates by
        # ever smaller amounts, so a change relative to the previous pass never settles.
        previous_total, self._previous_pass_loss = self._previous_pass_loss, self._pass_loss
        if not np.isfinite(previous_total):
            self._first_pass_loss = self._pass_loss
            return max_loss <= self.beta
        return max_loss <= self.beta or (
            previous_total - self._pass_loss <= self.tol * self._first_pass_loss)

    def _symmetric_matrix(self):
        """The learned A from the lower triangle the compiled pass maintains."""
        return np.tril(self._matrix) + np.tril(self._matrix, -1).T

    def _set_components(self):
        eigenvalues, eigenvectors = linalg.eigh(self._symmetric_matrix())
        scales = np.sqrt(np.maximum(eigenvalues, 0.0))
        components = scales[:, None] * oriented_columns(eigenvectors).T
        self.components_ = components if self._axes is None else components @ self._axes.T
        self.threshold_ = self._threshold
