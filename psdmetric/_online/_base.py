"""The online API shared by the online learners (MEG, Burg, POLA).

``partial_fit(X, y)`` learns from one chunk: labelled chunks become constraints among
the chunk's own rows (through :mod:`psdmetric._core._sampling`, as in ``fit``), explicit
constraints index the chunk's rows. Labels are only compared within a chunk, so there
is no fixed set of classes: a chunk may hold classes no earlier chunk had (their pairs
are drawn like any others), and the same label in two chunks ties nothing together.
``fit`` starts afresh and makes passes over the data until the learner's own stopping
rule holds or ``max_iter`` passes are done. Calling ``partial_fit`` block by block is
exactly what ``dask_ml.wrappers.Incremental`` does (with ``shuffle_blocks=False`` it
reproduces a loop over the blocks bit for bit).

``fit`` runs its passes on the iteration driver of :mod:`psdmetric._core._driver`.
Ctrl-C (``KeyboardInterrupt``) during ``fit`` keeps the state of the last complete
pass, warns and returns the fitted estimator, as scikit-learn's ``MLPClassifier`` does;
the pass under way is undone, never kept half done. With no complete pass, or during
``partial_fit``, the estimator is put back as it was before the call and the interrupt
propagates (so a loop over chunks stops).

A learner implements:

- ``_initialize(n_features)``: fresh state;
- ``_one_pass(X, constraints)``: one sequential pass in the given order, returning a
  float summarising the pass (by default its cumulative loss, see ``_pass_summary``);
- ``_pass_converged(previous, summary)``: whether ``fit`` may stop after a pass with
  that summary (by default: the loss fell by at most ``tol`` relative to the previous
  pass's);
- ``_set_components()``: refresh ``components_`` from the state.

A learner with ``n_components`` learns on the leading principal axes of ``X`` through
``_n_components`` and ``_on_leading_axes`` (its cap for ``"auto"``: ``_auto_components``).
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import check_random_state

from .._core import (
    AUTO_COMPONENTS,
    EstimatorCheckpoint,
    MahalanobisMixin,
    Round,
    iterate,
    learned_dimension,
    on_leading_axes,
    one_blas_thread,
)


class _BaseOnline(MahalanobisMixin):
    """Base class of the online learners: ``partial_fit`` and multi-pass ``fit``."""

    # n_components="auto" learns on at most this many principal axes.
    _auto_components = AUTO_COMPONENTS

    # The verbose table's title of what ``_one_pass`` returns.
    _pass_summary = "pass loss"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Start afresh and make passes over the constraints until the stopping rule holds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.

        y : array-like of shape (n_samples,), default=None
            Class labels; the learner's constraints are drawn from them. Leave ``None``
            when passing ``constraints``.

        constraints : PairConstraints or DistanceTargets, default=None
            Explicit constraints of the learner's kind (see the class) on rows of ``X``.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        with one_blas_thread(), EstimatorCheckpoint(self) as checkpoint:
            self._rng = check_random_state(self.random_state)
            X, constraints = self._validate_fit(X, y, constraints, self._rng)
            self._initialize(X.shape[1])

            def one_pass():
                loss = self._one_pass(X, constraints)
                return loss, (loss,)

            self.n_iter_ = run_passes(self, one_pass, self._pass_converged, checkpoint,
                                      columns=((self._pass_summary, ".6e"),))
            self._set_components()
        self.constraints_ = constraints
        return self

    def _n_components(self, n_features):
        """The number of principal axes to learn on, or None for all features."""
        return learned_dimension(self.n_components, n_features, self._auto_components)

    def _on_leading_axes(self, X):
        """``X`` on its own leading principal axes when the learner learns there, else X.

        Pairs from labels are drawn where the passes run.
        """
        return on_leading_axes(X, self.n_components, auto=self._auto_components)[0]

    def _pass_converged(self, previous, loss):
        """The pass lowered the cumulative loss by at most ``tol`` times the previous pass's.

        A pass that raises the loss also stops ``fit``: with a fixed rate, passes over
        pairs no metric fits exactly settle into a cycle rather than a fixed point.
        """
        return np.isfinite(previous) and previous - loss <= self.tol * previous

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, constraints=None):
        """Continue learning from one chunk: one pass over its constraints, in order.

        Labelled chunks get their constraints from their own rows, drawn as in ``fit``;
        explicit ``constraints`` index the rows of this chunk. Chunks that together hold
        the constraints of one ``fit`` pass, in the same order, give the same model as
        that pass. The first call fixes the number of features (and any scale the
        learner reads from its first constraints).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The chunk's samples.

        y : array-like of shape (n_samples,), default=None
            Class labels of the chunk.

        constraints : PairConstraints or DistanceTargets, default=None
            Constraints of the learner's kind on rows of this chunk.

        Returns
        -------
        self : object
            Updated estimator.
        """
        with one_blas_thread(), EstimatorCheckpoint(self):
            first_call = not hasattr(self, "_rng")
            if first_call:
                self._rng = check_random_state(self.random_state)
            X, constraints = self._validate_fit(X, y, constraints, self._rng,
                                                reset=first_call, chunk=True)
            if first_call:
                self._initialize(X.shape[1])
                self.n_iter_ = 0
            self._one_pass(X, constraints)
            self.n_iter_ += 1
            self._set_components()
        return self


def run_passes(estimator, one_pass, converged, checkpoint, *, columns):
    """Passes over the data on the iteration driver; returns the number of complete passes.

    ``one_pass()`` makes a pass and returns its loss and its row of the verbose table;
    ``converged(previous, loss)`` says whether ``fit`` may stop after it (``previous`` is
    the last pass's loss, infinite after the first). The online learners and
    :class:`~psdmetric.BurgRegressor` differ only in these.
    """
    previous = [np.inf]

    def one_round():
        loss, row = one_pass()
        done = converged(previous[0], loss)
        previous[0] = loss
        return Round(row, converged=done)

    return iterate(one_round, checkpoint, max_iter=estimator.max_iter,
                   verbose=estimator.verbose, name=type(estimator).__name__, unit="pass",
                   columns=columns)


def target_sides(targets):
    """Per pair of ``DistanceTargets``: +1 for ``d² <= target``, -1 for ``>=``, 0 for ``=``."""
    if targets.labels is None:
        return np.zeros(len(targets.pairs))
    return targets.labels.astype(np.float64)
