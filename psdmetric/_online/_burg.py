"""Online regression with Burg-entropy (LogDet) regularisation (Jain et al., 2007).

``BurgRegressor`` is the vector algorithm (Alg. 1): online linear regression with
positive weights, each step minimising the Burg divergence to the current weights
plus the squared loss. ``OnlineLogDet`` is the matrix algorithm (Alg. 2) for rank-one
inputs, i.e. online LogDet metric learning: each example is a pair with a target
squared distance. Both keep their iterate in its domain with the paper's adaptive
learning rate (Lemma 2: ``0 ≺ W ≺ I``), taken at half the paper's bound, since the
bound itself lets a weight reach the boundary; ``OnlineLogDet`` cuts the rate for
the pair that needs it only.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import DistanceTargets, leading_axes, oriented_columns
from ._base import _BaseOnline, target_sides
from ._burg_kernels import burg_matrix_pass

# Pairs sampled to set scale="auto": the median of a ratio settles long before this.
_SCALE_SAMPLE = 10_000


class OnlineLogDet(_BaseOnline):
    """Online LogDet metric learning: the matrix Burg gradient algorithm.

    Learns ``M = κ W`` with ``0 ≺ W ≺ I`` from pairs with target squared distances,
    one pair at a time (Jain et al., 2007, Alg. 2): predict ``ŷ = tr(W X)`` for the rank-one
    instance ``X = ẑẑᵀ``, then ``W⁻¹ ← W⁻¹ + 2η(ŷ − y)X``, a Sherman–Morrison step
    done on Cholesky factors in O(d²). A pair with ``ŷ < y`` is learnt at a rate of at
    most half of ``1 / (2(y − ŷ) tr((W⁻¹ − I)⁻¹X))`` (the paper's Lemma 2 bound, whose
    equality would put an eigenvalue of W at 1). Alg. 2 keeps such a cut for every
    later pair; here it holds for that pair only, so that one pair along a direction
    where W is close to I does not freeze the rest of the run.

    Parameters
    ----------
    eta : float, default=0.1
        Learning rate, measured relative to the starting metric ``W₀ = w₀ I``: Alg. 2
        runs with ``η = eta / w₀²``, so that ``eta = 0.5`` is the step that fits a pair
        exactly when its prediction and target are both at the starting scale. A pair
        below its target along a direction where the metric nears its ceiling κ is
        learnt at a smaller rate (see above). The default was chosen by
        leave-one-data-set-out on 12 data sets (see :ref:`choosing_defaults`); tune it
        like any hyper-parameter (e.g. with ``GridSearchCV``).

    scale : "auto" or float, default="auto"
        The ceiling κ of the metric, ``M = κ W ≺ κ I``. A float fixes κ and starts from
        ``W₀ = I / max(n_features, 2)`` (the paper's ``I/N``). ``"auto"`` reads the
        ratios ``y / ‖x − x'‖²`` of the pairs of the first ``fit`` pass or
        ``partial_fit`` call: ``κ`` is twice the largest, so every such target is
        reachable, and the starting metric ``κ W₀`` is the median ratio times the
        identity.

    n_constraints : int, default=None
        Number of pairs drawn from class labels (per ``partial_fit`` chunk);
        ``None`` means ``40 * n_classes**2``. Same-class pairs get the 5th percentile of
        the squared distances of the data as an upper bound, different-class pairs the
        95th as a lower bound; a pair within its bound has no loss and no update.

    n_neighbors : int, default=3
        Pairs from labels join each sample to its ``n_neighbors`` nearest samples of
        its own class (similar) and of the other classes (dissimilar), see
        :func:`~psdmetric.pairs_from_labels`; ``None`` draws ``n_constraints`` random
        pairs. Pairs from labels are visited in a random order (drawn once per ``fit``
        or ``partial_fit`` call, from ``random_state``), so that similar and
        dissimilar pairs interleave.

    n_components : int, "auto" or None, default="auto"
        Learn on the ``n_components`` leading principal axes of ``X`` (of the first
        ``fit`` pass or ``partial_fit`` chunk): ``M`` lives on their span and is 0
        across it, and ``components_`` has ``n_components`` rows (at most
        ``n_features``; ``n_features`` or ``None`` learns on all features). ``"auto"``
        takes 100 (all features when there are fewer): every pair costs ``O(d²)`` in
        the dimension ``d`` learned on.

    max_iter : int, default=20
        Maximum number of passes ``fit`` makes over the pairs.

    tol : float, default=1e-2
        ``fit`` stops when a pass lowers the cumulative loss by at most ``tol`` times
        the previous pass's (or raises it).

    verbose : int, default=0
        Print one table row per pass.

    random_state : int, RandomState instance or None, default=None
        Seeds the pairs drawn from labels and the order they are visited in.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned transform ``L``, ``M = LᵀL``. After ``fit``, ``M = κ W̄`` with
        ``W̄⁻¹`` the average of ``W⁻¹`` over every step of every pass (the updates
        are additive in ``W⁻¹``); after ``partial_fit``, the last iterate.

    scale_ : float
        The ceiling κ used.

    initial_weight_ : float
        ``w₀`` of the starting point ``W₀ = w₀ I`` (the starting metric is
        ``scale_ * initial_weight_`` times the identity).

    cumulative_loss_ : float
        Online loss since the last reset, ``Σ (ŷ − y)²`` in the normalised units of the
        algorithm (``ŷ`` and ``y`` divided by ``κ‖x − x'‖²``): the quantity that
        Theorem 2 bounds.

    constraints_ : DistanceTargets
        The pairs of the last ``fit`` (not set by ``partial_fit``).

    n_iter_ : int
        Passes made by ``fit``, or ``partial_fit`` calls since the last reset.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    LogDet : Batch LogDet metric learning with exact Bregman projections.
    BurgRegressor : The vector version of the same algorithm.

    Notes
    -----
    Initial values (the paper's OCR is damaged there): ``W₀ = w₀ I`` with
    ``0 < w₀ < 1`` as set by ``scale``, and the learning rate ``eta``. Each pair enters
    as the unit-trace instance ``ẑẑᵀ`` (``ẑ = z / ‖z‖``) with target ``y / (κ‖z‖²)``:
    the algorithm is the paper's on normalised instances (``R = 1`` in Theorem 2), which
    makes it invariant to the scale of the features.

    Loss bound. The divergence to any ``0 ≺ U ≺ I`` drops at each step by exactly
    ``2η e (ŷ − tr(UX)) − g(2η e ŷ)``, ``e = ŷ − y``, ``g(s) = s − ln(1 + s)``. The
    paper bounds ``g(s) ≤ s²/2``, which fails for ``s < 0``;
    ``g(s) ≤ s² / (2(1 + min(s, 0)))`` holds, and the halved learning rate keeps
    ``s ≥ −½``. So on noiseless targets (``y = tr(UX)``) with ``η_t ŷ_t² ≤ ½`` (implied
    by ``η ≤ ½`` in the normalised units, where ``ŷ < 1``),
    ``Σ_t η_t (ŷ_t − y_t)² ≤ D_ld(U, W₀)``: the cumulative loss is at most
    ``D_ld(U, W₀) / min_t η_t`` (Theorem 2 with ``L_U = 0``; the bound holds step by
    step, so it does not need the rate to be non-increasing). With bounds (``DistanceTargets``
    with labels, as drawn from class labels) the same holds for the squared hinge loss
    and any such U within every bound: a violated pair has
    ``e (ŷ − tr(UX)) ≥ e²``.

    ``W`` is stored through ``K = W⁻¹ − I`` (updated exactly, by rank-one terms), so
    ``0 ≺ W ≺ I`` holds as long as K stays positive definite, which the learning
    rate guarantees. Pairs of identical points carry no information and are skipped.

    References
    ----------
    P. Jain, B. Kulis and I. Dhillon. Online linear regression using Burg entropy.
    Technical Report TR-07-08, University of Texas at Austin, 2007.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from psdmetric import OnlineLogDet
    >>> X, y = load_iris(return_X_y=True)
    >>> model = make_pipeline(OnlineLogDet(random_state=0), KNeighborsClassifier(3))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """

    _constraint_kind = "targets"

    _parameter_constraints: dict = {
        "eta": [Interval(Real, 0, None, closed="neither")],
        "scale": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left"),
                         None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        eta=0.1,
        *,
        scale="auto",
        n_constraints=None,
        n_neighbors=3,
        n_components="auto",
        max_iter=20,
        tol=1e-2,
        verbose=0,
        random_state=None,
    ):
        self.eta = eta
        self.scale = scale
        self.n_constraints = n_constraints
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state

    def _initialize(self, n_features):
        # The state is laid out by the first pass, once pairs fix the scale.
        self._factor = None
        self._axes = None
        # Every pair costs O(d²) on the d×d factors: 13 s a fit at MNIST's 784 pixels in full.
        self._dimension = self._n_components(n_features)
        self.scale_ = None if self.scale == "auto" else float(self.scale)
        self.cumulative_loss_ = 0.0
        self._inverse_sum, self._n_averaged = 0.0, 0

    def _constraints_from_labels(self, X, y, random_state):
        # An online pass follows the pairs' order: neighbour pairs come grouped
        # (all similar ones, then all dissimilar ones), so the last updates of every
        # pass would all push the same way.
        targets = super()._constraints_from_labels(self._on_leading_axes(X), y, random_state)
        order = random_state.permutation(len(targets.pairs))
        return DistanceTargets(targets.pairs[order], targets.distances[order],
                               targets.labels[order])

    def _start(self, X, constraints):
        """``W₀ = w₀ I`` with ``w₀ = 1 / max(n_features, 2)``, or from the pairs."""
        if self.scale_ is None:
            median, largest = _target_ratios(X, constraints)
            self.scale_ = 2.0 * largest
            self.initial_weight_ = median / self.scale_
        else:
            self.initial_weight_ = 1.0 / max(X.shape[1], 2)
        identity = np.eye(X.shape[1])
        # K = W⁻¹ − I = (1/w₀ − 1) I and I + K = I / w₀.
        inverse_weight = 1.0 / self.initial_weight_
        self._factor = np.asfortranarray(np.sqrt(inverse_weight - 1.0) * identity)
        self._factor_shifted = np.asfortranarray(np.sqrt(inverse_weight) * identity)
        self._rate = self.eta / self.initial_weight_**2

    def _one_pass(self, X, constraints):
        X = np.asarray(X, dtype=np.float64)
        if self._factor is None:
            self._axes = leading_axes(X, self._dimension)
        X = np.ascontiguousarray(X if self._axes is None else X @ self._axes)
        if self._factor is None:
            self._start(X, constraints)
        averaging = self._averaging
        if averaging:
            start = self._factor @ self._factor.T
        n_pairs = len(constraints.pairs)
        predictions, targets, rates = (np.empty(n_pairs) for _ in range(3))
        sides = target_sides(constraints)
        burg_matrix_pass(
            X, constraints.pairs, constraints.distances, sides, self._factor,
            self._factor_shifted, self._rate, self.scale_, predictions=predictions,
            relative_targets=targets, rates=rates,
        )
        # A pair within its bound takes no step; identical points (NaN) are skipped.
        errors = np.nan_to_num(predictions - targets)
        errors[sides * errors < 0] = 0.0
        loss = float(np.sum(errors**2))
        self.cumulative_loss_ += loss
        if averaging:
            self._inverse_sum = self._inverse_sum + _mean_iterate(
                X, constraints.pairs, start, 2.0 * rates * errors)
            self._n_averaged += 1
        return loss

    def fit(self, X, y=None, *, constraints=None):
        self._averaging = True
        return super().fit(X, y, constraints=constraints)

    fit.__doc__ = _BaseOnline.fit.__doc__

    def partial_fit(self, X, y=None, *, constraints=None):
        # One pass, whose model is its last iterate: an average over calls would make
        # the model depend on how a stream is cut into chunks.
        self._averaging = False
        return super().partial_fit(X, y, constraints=constraints)

    partial_fit.__doc__ = _BaseOnline.partial_fit.__doc__

    def _set_components(self):
        # The updates are additive in W⁻¹ = I + K, so that is where steps are averaged:
        # K̄ = U diag(μ) Uᵀ gives M = κ (I + K̄)⁻¹ = U diag(κ / (1 + μ)) Uᵀ.
        if not self._averaging:
            mean_inverse = self._factor @ self._factor.T
        else:
            mean_inverse = self._inverse_sum / self._n_averaged
        shifts, vectors = np.linalg.eigh(mean_inverse)
        scales = np.sqrt(self.scale_ / (1.0 + np.maximum(shifts, 0.0)))
        components = scales[:, None] * oriented_columns(vectors).T
        self.components_ = components if self._axes is None else components @ self._axes.T


def _mean_iterate(X, pairs, start, steps):
    """Mean of ``K = W⁻¹ − I`` over the iterates of one pass, from its steps.

    Step ``s`` (of ``T``) adds ``steps[s] ẑ_s ẑ_sᵀ`` to ``K`` and stays in the ``T − s``
    iterates after it, so the mean is ``start + Σ_s (T − s)/T · steps[s] ẑ_s ẑ_sᵀ``:
    one d×d product per pass instead of a d×d sum per step (Polyak–Ruppert averaging
    of the online iterates, the online-to-batch conversion that settles where no
    metric meets every pair and the last iterate keeps moving).
    """
    # Only pairs that took a step (identical points never do) enter the product.
    moved = np.flatnonzero(steps)
    differences = X[pairs[moved, 0]] - X[pairs[moved, 1]]
    weights = steps[moved] * (len(pairs) - moved) / len(pairs)
    weights /= np.einsum("ij,ij->i", differences, differences)
    return start + differences.T @ (weights[:, None] * differences)


def _target_ratios(X, constraints):
    """Median and largest ``target / ‖x − x'‖²`` over (a sample of) the pairs.

    Both are 1 when no pair has a positive target and distinct points.
    """
    pairs = constraints.pairs[:_SCALE_SAMPLE]
    differences = X[pairs[:, 0]] - X[pairs[:, 1]]
    largest = np.abs(differences).max(axis=1)
    keep = (largest > 0) & (constraints.distances[:_SCALE_SAMPLE] > 0)
    if not keep.any():
        return 1.0, 1.0
    # Divide by the largest entry first so squared lengths cannot overflow.
    unit = differences[keep] / largest[keep, None]
    length = largest[keep] * np.linalg.norm(unit, axis=1)
    ratios = constraints.distances[:_SCALE_SAMPLE][keep] / length / length
    return float(np.median(ratios)), float(ratios.max())
