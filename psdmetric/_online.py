"""The online API shared by the online learners (MEG, Burg, POLA).

``partial_fit(X, y)`` learns from one chunk: labelled chunks become constraints among
the chunk's own rows (through :mod:`psdmetric._constraints`, as in ``fit``), explicit
constraints index the chunk's rows. Labels are only compared within a chunk, so there
is no fixed set of classes: a chunk may hold classes no earlier chunk had (their pairs
are drawn like any others), and the same label in two chunks ties nothing together.
``fit`` starts afresh and makes passes over the data until the learner's own stopping
rule holds or ``max_iter`` passes are done. Calling ``partial_fit`` block by block is
exactly what ``dask_ml.wrappers.Incremental`` does (with ``shuffle_blocks=False`` it
reproduces a loop over the blocks bit for bit).

Ctrl-C (``KeyboardInterrupt``) during ``fit`` keeps the state of the last complete
pass, warns and returns the fitted estimator, as scikit-learn's ``MLPClassifier`` does;
the pass under way is undone, never kept half done. With no complete pass, or during
``partial_fit``, the estimator is put back as it was before the call and the interrupt
propagates (so a loop over chunks stops).

A learner implements:

- ``_initialize(n_features)``: fresh state;
- ``_one_pass(X, constraints)``: one sequential pass in the given order, returning a
  float summarising the pass (e.g. its cumulative loss);
- ``_pass_converged(summary)``: whether ``fit`` may stop after a pass with that summary;
- ``_set_components()``: refresh ``components_`` from the state.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._base import MahalanobisMixin


class KeepCompletePasses:
    """Context of a multi-pass fit in which Ctrl-C keeps the last complete pass.

    Passes update the estimator's arrays in place, so the state is copied on entry and
    by :meth:`save` after every complete pass (one copy of the state per pass). On
    ``KeyboardInterrupt`` the estimator's attributes, and the state of its random
    generators, are put back to the last copy. If a pass was saved, the interrupt is
    swallowed with a ``ConvergenceWarning`` and the code after the ``with`` block
    finishes the fit from that state; otherwise the estimator is as it was on entry
    and the interrupt propagates.
    """

    def __init__(self, estimator):
        self.estimator = estimator

    def __enter__(self):
        self._entry = self._saved = _copy_state(self.estimator)
        return self

    def save(self):
        """Mark the current state (after a complete pass) as the one to keep."""
        self._saved = _copy_state(self.estimator)

    def __exit__(self, kind, error, traceback):
        if kind is None or not issubclass(kind, KeyboardInterrupt):
            return False
        attributes, generators = self._saved
        vars(self.estimator).clear()
        vars(self.estimator).update(attributes)
        for generator, state in generators:
            generator.set_state(state)
        if self._saved is self._entry:
            return False
        warnings.warn(
            f"{type(self.estimator).__name__}: training interrupted by the user after "
            f"{self.estimator.n_iter_} complete passes; keeping the model of the last "
            "complete pass.",
            ConvergenceWarning,
        )
        return True


def _copy_state(estimator):
    """The estimator's attributes (arrays copied) and its random generators' states."""
    # order="K" keeps the memory layout the compiled passes require (e.g. Fortran).
    attributes = {name: value.copy(order="K") if isinstance(value, np.ndarray) else value
                  for name, value in vars(estimator).items()}
    generators = [(value, value.get_state()) for value in attributes.values()
                  if isinstance(value, np.random.RandomState)]
    return attributes, generators


class OnlineMixin(MahalanobisMixin):
    """Base class of the online learners: ``partial_fit`` and multi-pass ``fit``."""

    def _fit_online(self, X, y, constraints):
        """``fit``: reset, then passes over the data (decorate with ``_fit_context``)."""
        with KeepCompletePasses(self) as passes:
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
                converged = self._pass_converged(summary)
                if self.verbose:
                    elapsed = time.perf_counter() - start
                    print(f"{self.n_iter_:>8d} {summary:>14.6e} {elapsed:>10.3f}")
                passes.save()
                if converged:
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
        with KeepCompletePasses(self):
            first_call = not hasattr(self, "_rng")
            if first_call:
                self._rng = check_random_state(self.random_state)
            X, constraints = self._validate_fit(X, y, constraints, self._rng,
                                                reset=first_call)
            if first_call:
                self._initialize(X.shape[1])
                self.n_iter_ = 0
            self._one_pass(X, constraints)
            self.n_iter_ += 1
            self._set_components()
        return self
