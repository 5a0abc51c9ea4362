"""The online API shared by the online learners (MEG, Burg, POLA).

``partial_fit(X, y)`` learns from one chunk: labelled chunks become constraints among
the chunk's own rows (through :mod:`psdmetric._constraints`, as in ``fit``), explicit
constraints index the chunk's rows. ``fit`` starts afresh and makes passes over the data
until the learner's own stopping rule holds or ``max_iter`` passes are done. Calling
``partial_fit`` block by block is exactly what ``dask_ml.wrappers.Incremental`` does
(with ``shuffle_blocks=False`` it reproduces a loop over the blocks bit for bit).

A learner implements:

- ``_initialize(n_features)``: fresh state;
- ``_one_pass(X, constraints)``: one sequential pass in the given order, returning a
  float summarising the pass (e.g. its cumulative loss);
- ``_pass_converged(summary)``: whether ``fit`` may stop after a pass with that summary;
- ``_set_components()``: refresh ``components_`` from the state.
"""

import time
import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._base import MahalanobisMixin


class OnlineMixin(MahalanobisMixin):
    """Base class of the online learners: ``partial_fit`` and multi-pass ``fit``."""

    def _fit_online(self, X, y, constraints):
        """``fit``: reset, then passes over the data (decorate with ``_fit_context``)."""
        self._rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, self._rng)
        self._initialize(X.shape[1])
        name = type(self).__name__
        if self.verbose:
            print(f"[{name}]")
            print(f"{'pass':>8} {'summary':>14} {'time (s)':>10}")
            print("-" * 34)
        self.n_iter_ = 0
        for self.n_iter_ in range(1, self.max_iter + 1):
            start = time.perf_counter()
            summary = self._one_pass(X, constraints)
            if self.verbose:
                elapsed = time.perf_counter() - start
                print(f"{self.n_iter_:>8d} {summary:>14.6e} {elapsed:>10.3f}")
            if self._pass_converged(summary):
                break
        else:
            warnings.warn(
                f"{name} did not converge in max_iter={self.max_iter} passes "
                f"(last pass: {summary:.3e}). Increase max_iter.",
                ConvergenceWarning,
            )
        self._set_components()
        self.constraints_ = constraints
        return self

    def _partial_fit_online(self, X, y, constraints):
        """``partial_fit``: one pass over this chunk, continuing from the current state."""
        first_call = not hasattr(self, "_rng")
        if first_call:
            self._rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, self._rng, reset=first_call)
        if first_call:
            self._initialize(X.shape[1])
            self.n_iter_ = 0
        self._one_pass(X, constraints)
        self.n_iter_ += 1
        self._set_components()
        return self
