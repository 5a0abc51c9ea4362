"""The iteration driver every iterative learner runs on.

A learner supplies one *round* — a cycle of projections, a pass over the data, a
column-generation iteration — as a callable that updates the learner's state in place
and returns a :class:`Round`. :func:`iterate` calls it until the round says it has
converged, until it fails, or ``max_iter`` times, and owns everything around the
rounds, so that every learner behaves the same:

- the ``verbose`` table: a title ``[name]``, a header, one row per round (the round's
  ``row`` under the learner's ``columns``, its time and the time since the first round
  began), printed as each round ends;
- the ``ConvergenceWarning`` when ``max_iter`` rounds did not converge, or when a round
  reports a ``failure`` (e.g. constraints proved infeasible);
- the count of complete rounds it returns, which the learner stores as ``n_iter_``;
- Ctrl-C: a compiled kernel runs to its end before Python raises
  ``KeyboardInterrupt``, so an interrupt usually lands after a round has changed the
  state but before it is counted. The driver asks its checkpoint to put back the state
  of the last complete round, warns, and returns that round's count.

Two checkpoints cover the learners: :class:`ArrayCheckpoint` copies the arrays a
round updates in place (the batch solvers); :class:`EstimatorCheckpoint` copies an
estimator's attributes and random generators (the online learners, whose passes also
change scalars such as a learning rate). Anything with ``save(n_iter)`` and
``restore() -> n_iter`` can serve, e.g. a column-generation round that appends to
lists can save their lengths and truncate them on restore.

See the developer guide (``docs/developers.rst``) for a complete example learner.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

_TIME_COLUMNS = f"{'time (s)':>10} {'elapsed (s)':>11}"


@dataclass(frozen=True)
class Round:
    """What one round reports to :func:`iterate`.

    Parameters
    ----------
    row : tuple
        The round's values, one per column passed to :func:`iterate`.
    converged : bool, default=False
        The learner's stopping rule holds: stop after this round.
    failure : str, default=None
        Stop after this round and warn with this text (a ``ConvergenceWarning``): the
        round found that going on cannot help, e.g. the problem is infeasible.
    """

    row: tuple
    converged: bool = False
    failure: str = None


def iterate(one_round, checkpoint, *, max_iter, verbose, name, unit, columns):
    """Run ``one_round`` until it converges or fails, at most ``max_iter`` times.

    Parameters
    ----------
    one_round : callable
        ``one_round() -> Round``: run one round, updating the learner's state in place.
    checkpoint : ArrayCheckpoint or EstimatorCheckpoint
        Saved after every complete round that did not stop the run; on Ctrl-C,
        ``checkpoint.restore()`` puts that state back and returns its round count (or
        raises, to let the interrupt propagate).
    max_iter : int
        Maximum number of rounds; reaching it without convergence warns.
    verbose : int
        Print the table when positive.
    name : str
        The learner's name, in the table title and in warnings.
    unit : str
        What a round is called ("cycle", "pass", "iteration"), in the table and
        warnings.
    columns : sequence of (str, str)
        Title and format spec (e.g. ``">14.3e"``) of each value of ``Round.row``.

    Returns
    -------
    n_iter : int
        Number of complete rounds, the learner's ``n_iter_``.
    """
    if verbose:
        header = f"{unit:>8} " + " ".join(f"{title:>14}" for title, _ in columns)
        header += f" {_TIME_COLUMNS}"
        print(f"[{name}]\n{header}\n" + "-" * len(header))
    begin = time.perf_counter()
    try:
        for n_iter in range(1, max_iter + 1):
            start = time.perf_counter()
            result = one_round()
            if verbose:
                values = " ".join(f"{value:{spec}}".rjust(14)
                                  for (_, spec), value in zip(columns, result.row))
                now = time.perf_counter()
                print(f"{n_iter:>8d} {values} {now - start:>10.3f} {now - begin:>11.3f}",
                      flush=True)
            if result.failure is not None:
                warnings.warn(f"{name}: {result.failure}", ConvergenceWarning)
                return n_iter
            if result.converged:
                return n_iter
            checkpoint.save(n_iter)
    except KeyboardInterrupt:
        completed = checkpoint.restore()
        warnings.warn(
            f"{name}: training interrupted by the user after {completed} complete "
            f"{_plural(unit)}; keeping the state of the last complete {unit}.",
            ConvergenceWarning,
        )
        return completed
    last = ", ".join(f"{title} {value:{spec}}" for (title, spec), value in zip(columns, result.row))
    warnings.warn(
        f"{name} did not converge in max_iter={max_iter} {_plural(unit)} (last {unit}: {last}). "
        "Increase max_iter or loosen the stopping rule.",
        ConvergenceWarning,
    )
    return max_iter


def _plural(unit):
    return unit + ("es" if unit.endswith("s") else "s")


class ArrayCheckpoint:
    """Copies of the arrays a round updates in place, taken after each complete round.

    The state before the first round is saved on construction, so an interrupt in the
    first round goes back to the start and counts 0 rounds.
    """

    def __init__(self, *arrays):
        self.arrays = arrays
        self.save(0)

    def save(self, n_iter):
        """Copy the arrays as round ``n_iter`` left them."""
        self._saved = n_iter, [array.copy(order="K") for array in self.arrays]

    def restore(self):
        """Put the arrays back as last saved; return that round count."""
        n_iter, copies = self._saved
        for array, copy in zip(self.arrays, copies):
            array[...] = copy
        return n_iter

    def saved(self, index):
        """The saved copy of the ``index``-th array."""
        return self._saved[1][index]


class EstimatorCheckpoint:
    """An estimator's attributes and random generator states, for Ctrl-C in a fit.

    Use it as a context around the whole fit: on entry it saves the estimator as it
    is. An interrupt inside the driver goes back to the last complete round (and
    propagates if there is none yet); an interrupt anywhere else in the context puts
    the estimator back as it was on entry and propagates, so ``partial_fit`` and a
    ``fit`` interrupted before its first complete round leave no trace.
    ``rollback_on`` widens what puts the entry state back (``AtomicFit`` passes
    ``BaseException``: any failed fit).
    """

    def __init__(self, estimator, rollback_on=KeyboardInterrupt):
        self.estimator = estimator
        self.rollback_on = rollback_on

    def __enter__(self):
        self._entry, self._saved = self._copy(), None
        return self

    def __exit__(self, kind, error, traceback):
        if kind is not None and issubclass(kind, self.rollback_on):
            self._put_back(self._entry)
        return False

    def save(self, n_iter):
        """Copy the estimator as round ``n_iter`` left it."""
        self._saved = self._copy(), n_iter

    def restore(self):
        """Put the estimator back as last saved and return that round count.

        Raises ``KeyboardInterrupt`` (after putting back the entry state) when no round
        was saved.
        """
        if self._saved is None:
            raise KeyboardInterrupt
        state, n_iter = self._saved
        self._put_back(state)
        return n_iter

    def _copy(self):
        # order="K" keeps the memory layout the compiled passes require (e.g. Fortran).
        attributes = {name: value.copy(order="K") if isinstance(value, np.ndarray) else value
                      for name, value in vars(self.estimator).items()}
        generators = [(value, value.get_state()) for value in attributes.values()
                      if isinstance(value, np.random.RandomState)]
        return attributes, generators

    def _put_back(self, state):
        attributes, generators = state
        vars(self.estimator).clear()
        vars(self.estimator).update(attributes)
        for generator, generator_state in generators:
            generator.set_state(generator_state)
