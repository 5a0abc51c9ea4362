"""Guards every learner's ``fit`` goes through: all-or-nothing fits, the data's scale.

- :class:`AtomicFit`: a failed or interrupted ``fit``/``partial_fit`` leaves the
  estimator as it was before the call (the old model, or unfitted), never half.
- :func:`check_scale`: learners compute squared distances (and some their products or
  exponentials) in float64, which overflow or underflow for data at extreme scales;
  such data get a ``ValueError`` that says so, instead of the prior with NaN bounds.
- :func:`check_informative`: data in which every pair joins equal points (all rows
  identical, only self-pairs) say nothing about a metric: the learner returns its
  starting matrix (the prior, or POLA's zero matrix), with a warning that says so.
- :func:`warn_if_out_of_core`: a dask array passed to a batch ``fit`` is loaded whole.
"""

import functools
import warnings

import numpy as np

from ._driver import EstimatorCheckpoint

# The smallest column spread and the largest magnitude of X every learner fits exactly
# (their squared distances, 2**±1000, stay within float64's normal range, 2**±1022);
# measured: all learners fail beyond 2**±510. A learner narrows them with _scale_limits.
SCALE_LIMITS = (2.0**-500, 2.0**500)


class AtomicFit:
    """Makes every ``fit`` and ``partial_fit`` of a subclass all-or-nothing.

    Each such method a subclass defines is wrapped at class creation: the estimator's
    state is saved on entry (as :class:`EstimatorCheckpoint` saves it), and any
    exception — a ``ValueError`` from validation, an error deep in a solver, a
    ``KeyboardInterrupt`` the iteration driver did not absorb — puts it back before
    propagating. The driver's own Ctrl-C handling (keep the last complete round) is a
    normal return and keeps the new model.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("fit", "partial_fit"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "_atomic", False):
                setattr(cls, name, _all_or_nothing(method))


def _all_or_nothing(method):
    @functools.wraps(method)
    def atomic(self, *args, **kwargs):
        checkpoint = EstimatorCheckpoint(self, rollback_on=BaseException)
        with checkpoint:
            return method(self, *args, **kwargs)

    atomic._atomic = True
    return atomic


def check_scale(X, name, limits=SCALE_LIMITS):
    """Raise a ValueError when the values of ``X`` are too large or too close together.

    The largest magnitude must be at most ``limits[1]`` and, unless all rows coincide,
    the largest spread of a column at least ``limits[0]``.
    """
    if X.size == 0:
        return
    # From the columns' extremes: no |X| temporary, fresh memory as large as X.
    highest, lowest = X.max(axis=0), X.min(axis=0)
    largest = float(max(highest.max(), -lowest.min()))
    spread = float(np.max(highest - lowest))
    if largest > limits[1] or 0 < spread < limits[0]:
        row, column = np.unravel_index(np.argmax(np.abs(X)), X.shape)
        what = (f"values up to {largest:.3g} (row {row}, column {column})"
                if largest > limits[1] else f"columns that vary by at most {spread:.3g}")
        raise ValueError(
            f"{name} cannot learn from X with {what}: the distances it computes would "
            f"overflow or underflow float64. Rescale X so that its columns vary by more "
            f"than {limits[0]:.1e} and its values stay below {limits[1]:.1e} (e.g. with "
            f"StandardScaler)."
        )


def check_informative(X, name, constraints=None, refuse=False):
    """Warn (or, with ``refuse``, raise a ValueError) when no pair joins distinct points.

    The pairs are those of ``constraints``, or any two rows of ``X`` (labels).
    """
    if constraints is None:
        if not (len(X) and np.all(X == X[0])):
            return
        problem = (f"the {len(X)} rows of X are all equal (to {X[0].tolist()[:5]}"
                   f"{' ...' if X.shape[1] > 5 else ''})")
    else:
        tuples = next(getattr(constraints, name) for name in ("triplets", "quadruplets", "pairs")
                      if hasattr(constraints, name))
        if len(tuples) == 0 or _joins_distinct_points(X, tuples):
            return
        problem = (f"every row of constraints joins rows of X with equal values (first: "
                   f"rows {tuples[0].tolist()})")
    if refuse:
        raise ValueError(f"{name} cannot learn a metric: {problem}, so every distance is 0.")
    warnings.warn(
        f"{name}: {problem}, so every distance is 0 and nothing can be learned; the metric "
        "is the learner's starting matrix (its prior, or POLA's zero matrix).",
        UserWarning,
        stacklevel=4,
    )


def _joins_distinct_points(X, tuples, chunk=4096):
    """Whether some tuple joins rows of X with different values.

    By chunks, stopping at the first such tuple (usually in the first chunk): no m×d copy.
    """
    for start in range(0, len(tuples), chunk):
        block = tuples[start:start + chunk]
        first = X[block[:, 0]]
        if any(not np.array_equal(first, X[block[:, column]])
               for column in range(1, block.shape[1])):
            return True
    return False


def warn_if_out_of_core(X, name):
    """Warn that ``fit`` loads a dask (or other lazy, chunked) array whole."""
    if not type(X).__module__.split(".")[0] == "dask" or not hasattr(X, "compute"):
        return
    size = np.prod(X.shape) * np.dtype(X.dtype).itemsize / 2**20
    warnings.warn(
        f"{name}.fit loads the dask array X ({size:.1f} MiB) into memory whole. To learn "
        "chunk by chunk, use an online learner's partial_fit (MEG, OnlineLogDet, POLA), "
        "e.g. through dask_ml.wrappers.Incremental.",
        UserWarning,
        stacklevel=3,
    )
