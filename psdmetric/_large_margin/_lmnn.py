"""LMNN: large-margin nearest-neighbour metric learning (Weinberger & Saul, 2009).

The loss (``_objective.py``) is minimised over a factor ``L`` by L-BFGS on an active
set of impostors, the scheme of Weinberger & Saul (2009), §5: each round searches
every impostor within a safety radius of its margin (``impostor_candidates``), then
runs a bounded number of L-BFGS iterations (``_lbfgs.py``: its curvature memory
carries over from round to round) on the loss restricted to those candidates, which
is exact as long as no other impostor comes within the margin. The next round's
search checks this: if the loss on all impostors went up, the new impostors join the
set and the round restarts from the same ``L``, so the loss never increases from one
round to the next.
"""

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    LBFGS,
    ArrayCheckpoint,
    MahalanobisMixin,
    Round,
    check_informative,
    iterate,
    on_leading_axes,
    one_thread,
    oriented_columns,
    pair_squared_distances,
)
from ._objective import (
    impostor_candidates,
    label_objective,
    target_neighbours,
    triplet_objective,
)

# L-BFGS iterations per round between two impostor searches (the paper's 10 to 20).
_STEPS_PER_ROUND = 10
# Impostors are searched within (1 + safety) times each sample's margin radius.
_SAFETY = 0.1
# Rounds restarted with more impostors before the round is reported as failed.
_MAX_RESTARTS = 10
# Ridge of the within-class scatter in the LDA start, relative to its mean eigenvalue.
_LDA_RIDGE = 1e-3
# init="auto" starts from LDA up to this many features, the range of the suite sets on
# which leave-one-data-set-out chose it; at MNIST's 784 pixels the whitened start made
# a fit 3.4 times slower than from PCA, and worse (user guide, Defaults).
_LDA_MAX_FEATURES = 100
# ... and from this many classes, also chosen so: with two, LDA has one discriminant axis
# among d - 1 whitened ones that carry no class information (user guide, Defaults).
_LDA_MIN_CLASSES = 3


class LMNN(MahalanobisMixin):
    """Large-margin nearest-neighbour metric learning (LMNN).

    Learns a linear map ``L`` that pulls each sample's target neighbours (its
    ``n_neighbors`` nearest samples of its own class) close while pushing samples of
    other classes (impostors) at least a unit margin farther away than any target, by
    minimising the loss of Weinberger & Saul (2009), §3::

        (1 − mu) Σ_(i,j) ‖L(x_i − x_j)‖² + mu Σ_(i,j,l) [1 + ‖L(x_i − x_j)‖² − ‖L(x_i − x_l)‖²]₊

    over target pairs ``(i, j)`` and triplets with an impostor ``l``.

    Read more in the :ref:`User Guide <lmnn>`.

    Parameters
    ----------
    n_neighbors : int, default=3
        Target neighbours per sample, found once in the space of the starting map
        ``init``. A sample whose class has ``m ≤ n_neighbors`` samples takes the
        ``m − 1`` others; a sample alone in its class has no targets and enters the
        loss only as an impostor. Ignored with ``constraints``.

    mu : float in [0, 1], default=0.5
        Weight of the push (impostor) term; the pull term has weight ``1 − mu``.

    n_components : int, "auto" or None, default="auto"
        Rows of ``L`` (the dimension of the learned space); ``None``: ``n_features``.
        ``"auto"``: ``n_features`` up to 100 features; above, ``L`` is learned on the
        100 leading principal axes of ``X`` (``components_`` is ``L Pᵀ``, 100 ×
        ``n_features``), as Weinberger & Saul (2009), §6, reduce high-dimensional data by
        PCA first (chosen by leave-one-data-set-out on the sets with more than 100
        features; at MNIST's 784 pixels an 18 times cheaper fit with a lower error,
        ``docs/benchmarks/lmnn.md``). An array ``init`` keeps every feature.

    init : {"auto", "lda", "pca", "identity"} or array of shape (n_components, \
            n_features), default="auto"
        Starting map. ``"lda"``: the discriminant axes, scaled to unit within-class
        variance (needs class labels; the within-class scatter is ridged by 1e-3 of
        its mean eigenvalue, so it is defined when ``n_features > n_samples``), the
        Mahalanobis metric of the pooled within-class covariance when
        ``n_components = n_features``; ``"pca"``: the leading principal axes of ``X``
        (a rotation when ``n_components = n_features``, the Euclidean metric);
        ``"identity"``: the first ``n_components`` coordinates; ``"auto"``:
        ``"lda"`` with class labels of at least three classes and at most 100 features
        (where the defaults were chosen), ``"pca"`` with two classes, ``constraints``
        or more features. With class labels
        the start is then scaled by the factor of least loss on a grid of powers of √2
        (the margin is one unit whatever the data's scale).

    max_iter : int, default=100
        Maximum number of rounds, each an impostor search followed by up to 10
        L-BFGS iterations; reaching it raises a ``ConvergenceWarning``.

    tol : float, default=1e-2
        Stop when a round lowers the loss by at most ``tol`` times its value, or when
        the loss is down to ``tol`` times its value at the start (it is never negative,
        so less than that is left to gain: with more features than samples the classes
        can collapse to points and the loss fall towards zero by a constant ratio per
        round).

    verbose : int, default=0
        Print a table row per round.

    random_state : int, RandomState instance or None, default=None
        Unused by the solver, which is deterministic; kept for the API of the other
        learners.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map ``L``; the metric is ``M = LᵀL``.

    n_iter_ : int
        Rounds of the last fit.

    objective_ : float
        The loss at ``components_``, on every impostor.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X is a DataFrame with string names.

    See Also
    --------
    PSDBoost : Large-margin triplets solved by column generation.

    References
    ----------
    K. Q. Weinberger and L. K. Saul, "Distance metric learning for large margin
    nearest neighbor classification", JMLR 10 (2009), 207–244.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from psdmetric import LMNN
    >>> X, y = load_wine(return_X_y=True)
    >>> model = make_pipeline(StandardScaler(), LMNN(), KNeighborsClassifier(5))
    >>> round(model.fit(X[::2], y[::2]).score(X[1::2], y[1::2]), 3)
    0.966
    """

    _constraint_kind = "triplets"

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "mu": [Interval(Real, 0, 1, closed="both")],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "init": [StrOptions({"auto", "lda", "pca", "identity"}), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_neighbors=3, *, mu=0.5, n_components="auto", init="auto",
                 max_iter=100, tol=1e-2, verbose=0, random_state=None):
        self.n_neighbors = n_neighbors
        self.mu = mu
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Learn the metric from class labels or from triplets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,), default=None
            Class labels; ignored when ``constraints`` is given.
        constraints : TripletConstraints, default=None
            Triplets ``(i, j, l)`` of rows of ``X``: ``j`` is pulled towards ``i``
            (each distinct ``(i, j)`` once) and ``l`` is pushed a unit margin farther
            than ``j``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        check_random_state(self.random_state)
        X, codes = self._validate_lmnn_input(X, y, constraints)
        # One thread for BLAS and OpenMP: scikit-learn's neighbour search on a class of a
        # few dozen samples spends 30 times its work waking threads (leaf: 1.0 s vs 0.03 s).
        with one_thread():
            # "auto" above 100 features: L on the leading principal axes (an integer: L's rows).
            X, axes = on_leading_axes(X, "auto" if self.n_components == "auto" else None,
                                      not isinstance(self.init, str))
            start = self._initial_map(X, codes)
            X, span = _row_space(X)
            L = start.copy() if span is None else start @ span
            if codes is not None:
                targets = target_neighbours(X @ L.T, codes, self.n_neighbors)
                scale = _loss_minimising_scale(X, codes, targets, self.mu, L)
                start, L = scale * start, scale * L
            rows, L = _square_factor(L)
            if codes is None:
                state = _TripletRounds(X, triplet_objective(X, constraints.triplets, self.mu),
                                       L)
            else:
                state = _LabelRounds(X, codes, targets, self.mu, L)
            n_iter = iterate(lambda: state.round(L, self.tol), ArrayCheckpoint(L),
                             max_iter=self.max_iter, verbose=self.verbose, name="LMNN",
                             unit="round",
                             columns=(("loss", ".6e"), ("active", "d"),
                                      ("candidates", "d"), ("change", ".2e")))
            objective = state.value_at(L)
            if rows is not None:
                L = rows @ L
            if span is not None:
                # The start outside the row space (no gradient reaches it), the learned part.
                L = start + (L - start @ span) @ span.T
            if axes is not None:
                L = L @ axes.T
        self.objective_ = objective
        self.components_, self.n_iter_ = L, n_iter
        return self

    def _validate_lmnn_input(self, X, y, constraints):
        """``X`` and integer class codes (``None`` with explicit triplets)."""
        X, checked = self._validate_fit(X, y, constraints, None)
        check_informative(X, "LMNN", constraints, refuse=True)
        if constraints is not None:
            return X, None
        if np.bincount(checked).max() < 2:
            raise ValueError(f"y: every one of its {len(checked)} classes has a single sample, "
                             "so no sample has a target neighbour; LMNN needs a class with "
                             "at least two samples.")
        return X, checked

    def _constraints_from_labels(self, X, y, random_state):
        # LMNN reads labels itself: its impostors change with the metric.
        return np.unique(y, return_inverse=True)[1].ravel()

    def _initial_map(self, X, codes):
        n_features = X.shape[1]
        given = None if self.n_components == "auto" else self.n_components
        if not isinstance(self.init, str):
            L = np.array(self.init, dtype=np.float64, copy=True)
            rows = given or L.shape[0]
            if L.ndim != 2 or L.shape != (rows, n_features) or not np.all(np.isfinite(L)):
                raise ValueError(
                    f"init must be a finite array of shape ({rows}, {n_features}) "
                    f"(n_components, n_features); got shape {L.shape}.")
            return L
        rows = given or n_features
        if rows > n_features:
            raise ValueError(f"n_components={rows} must be at most n_features={n_features}.")
        init = self.init
        if init == "auto":
            init = ("lda" if codes is not None and n_features <= _LDA_MAX_FEATURES
                    and codes.max() + 1 >= _LDA_MIN_CLASSES else "pca")
        if init == "identity":
            return np.eye(rows, n_features)
        if init == "pca":
            centred = X - X.mean(axis=0)
            axes = oriented_columns(linalg.eigh(centred.T @ centred)[1][:, ::-1])
            return np.ascontiguousarray(axes.T[:rows])
        if codes is None:
            raise ValueError("init='lda' needs class labels y; with constraints= use "
                             "init='pca', 'identity' or an array.")
        return _discriminant_axes(X, codes)[:rows]


def _row_space(X):
    """``X`` in an orthonormal basis ``V`` of its row space and ``V`` (None: full rank).

    The loss and its gradient see ``L`` only through ``X Lᵀ = (X V)(L V)ᵀ``, and L-BFGS
    moves ``L`` only within the row space, so solving for ``L V`` on ``X V`` gives the
    same iterates; cheaper where the rank is below ``n_features`` (``d > n``, constant
    or collinear features).
    """
    _, singular, right = linalg.svd(X, full_matrices=False)
    rank = int(np.sum(singular > singular[:1].max(initial=0.0) * max(X.shape)
                      * np.finfo(float).eps))
    if rank == X.shape[1]:
        return X, None
    span = np.ascontiguousarray(right[:rank].T)
    return X @ span, span


def _square_factor(L):
    """``Q`` and ``R`` with ``L = Q R`` and ``R`` square, where ``L`` has more rows than
    columns (None and ``L`` otherwise).

    The loss sees ``L`` only through ``‖L x‖ = ‖R x‖`` and its gradient ``2 L G`` stays
    in the range of ``Q``, so L-BFGS on ``R`` gives the same iterates in fewer rows
    (MNIST's 784 pixels span 653 dimensions).
    """
    if L.shape[0] <= L.shape[1]:
        return None, L
    rows, R = linalg.qr(L, mode="economic")
    return rows, np.ascontiguousarray(R)


def _discriminant_axes(X, codes):
    """Generalised eigenvectors of the between- and within-class scatters, as rows.

    Sorted by discriminant ratio, scaled so that the (ridged) within-class scatter is
    the identity along them.
    """
    n_samples, n_features = X.shape
    means = np.stack([X[codes == c].mean(axis=0) for c in range(codes.max() + 1)])
    centred = X - means[codes]
    within = centred.T @ centred / n_samples
    counts = np.bincount(codes) / n_samples
    spread = means - X.mean(axis=0)
    between = (spread.T * counts) @ spread
    ridge = _LDA_RIDGE * max(np.trace(within) / n_features, np.finfo(float).tiny)
    vectors = linalg.eigh(between, within + ridge * np.eye(n_features))[1]
    return np.ascontiguousarray(vectors[:, ::-1].T)


def _loss_minimising_scale(X, codes, targets, mu, L):
    """The factor ``c`` on a grid of powers of √2 at which the loss of ``c L`` is least.

    The margin is one unit whatever the data's scale: from a start far wider than the
    margin the first round's L-BFGS steps, which see only the few impostors near it,
    shrink ``L`` until every impostor comes within the margin (MNIST's pixels: 28,000
    candidates in, 1.3 million out). The loss along the ray ``c L`` is measured
    exactly (every impostor within the margin) from ``c = 1`` downwards, else upwards,
    until it rises.
    """
    Z = X @ L.T
    pull = label_objective(X, targets, np.empty((0, 2), np.intp), mu).pull
    farthest = np.full(len(Z), -1.0)
    np.maximum.at(farthest, pull[:, 0], pair_squared_distances(Z, pull))

    def loss(c):
        radii = np.where(farthest >= 0.0, c * c * farthest + 1.0, 0.0)
        push = impostor_candidates(c * Z, codes, radii)
        return label_objective(X, targets, push, mu).value(c * L)

    best_c, best = 1.0, loss(1.0)
    for factor in (np.sqrt(0.5), np.sqrt(2.0)):
        c, moved = best_c * factor, False
        while (value := loss(c)) < best:
            best_c, best, c, moved = c, value, c * factor, True
        if moved:
            break
    return best_c


class _TripletRounds:
    """Rounds on explicit triplets: the set is fixed, so the loss is always exact."""

    def __init__(self, X, objective, L):
        self.objective, self.solver = objective, LBFGS()
        self.evaluation = objective.value_and_gradient(L)
        self.initial = self.evaluation[0]

    def value_at(self, L):
        return self.objective.value(L)

    def round(self, L, tol):
        value = self.evaluation[0]
        L_new, self.evaluation, stalled = self.solver.run(self.objective, L, self.evaluation,
                                                          _STEPS_PER_ROUND)
        change = _relative_change(value, self.evaluation[0])
        L[...] = L_new
        return Round((self.evaluation[0], self.evaluation[2], self.objective.n_push, change),
                     converged=stalled or _small(change, self.evaluation[0], self.initial, tol))


class _LabelRounds:
    """Rounds on labels: impostors searched again each round, within a safety radius."""

    def __init__(self, X, codes, targets, mu, L):
        self.X, self.codes, self.targets, self.mu = X, codes, targets, mu
        self.pull = label_objective(X, targets, np.empty((0, 2), np.intp), mu).pull
        self.objective, self.solver = self.search(L), LBFGS()
        self.evaluation = self.objective.value_and_gradient(L)
        self.initial = self.evaluation[0]

    def search(self, L, known=None):
        """The loss restricted to the impostors within the safety radius at ``L``."""
        Z = self.X @ L.T
        farthest = np.full(len(Z), -1.0)
        np.maximum.at(farthest, self.pull[:, 0], pair_squared_distances(Z, self.pull))
        radii = np.where(farthest >= 0.0, (1.0 + _SAFETY) * (farthest + 1.0), 0.0)
        push = impostor_candidates(Z, self.codes, radii)
        if known is not None:
            push = np.unique(np.concatenate([known, push]), axis=0)
        return label_objective(self.X, self.targets, push, self.mu)

    def value_at(self, L):
        return self.search(L).value(L)

    def round(self, L, tol):
        objective, memory, value = self.objective, self.solver.snapshot(), self.evaluation[0]
        for _ in range(_MAX_RESTARTS):
            L_new = self.solver.run(objective, L, self.evaluation, _STEPS_PER_ROUND)[0]
            searched = self.search(L_new)
            evaluation = searched.value_and_gradient(L_new)
            if evaluation[0] <= value:
                break
            # An impostor outside the set came within its margin: retry with it known.
            self.solver.restore(memory)
            objective = self.search(L, known=np.concatenate([objective.push, searched.push]))
        else:
            return Round((value, self.evaluation[2], objective.n_push, 0.0),
                         failure="the loss rose after every restart of the round.")
        change = _relative_change(value, evaluation[0])
        L[...], self.evaluation, self.objective = L_new, evaluation, searched
        return Round((evaluation[0], evaluation[2], searched.n_push, change),
                     converged=_small(change, evaluation[0], self.initial, tol))


def _small(change, value, initial, tol):
    """The stopping rule of ``tol``: a small relative change, or little loss left."""
    return change <= tol or value <= tol * initial


def _relative_change(old, new):
    return (old - new) / max(abs(old), np.finfo(float).tiny)
