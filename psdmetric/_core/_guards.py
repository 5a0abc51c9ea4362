"""Guards every learner's ``fit`` goes through: all-or-nothing fits, the data's scale.

- :class:`AtomicFit`: a failed or interrupted ``fit``/``partial_fit`` leaves the
  estimator as it was before the call (the old model, or unfitted), never half.
- :func:`check_scale`: learners compute squared distances and their products in
  float64, which overflow or underflow for data at extreme scales; such data get a
  ``ValueError`` that says so, instead of the prior with NaN bounds.
- :func:`warn_if_out_of_core`: a dask array passed to a batch ``fit`` is loaded whole.
"""

import functools
import warnings

import numpy as np

from ._driver import EstimatorCheckpoint

# Values beyond 2**±200 (about 1e±60): squared distances (2**±400) and the products of
# two of them (2**±800) stay within float64's normal range (2**±1022).
_SCALE_EXPONENT = 200


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


def check_scale(X, name, argument="X"):
    """Raise a ValueError when the values of ``X`` are too large or too close together.

    The largest magnitude must be at most ``2**200`` and, unless all rows coincide,
    the largest spread of a column at least ``2**-200``.
    """
    if X.size == 0:
        return
    magnitude = np.abs(X)
    largest = float(magnitude.max())
    spread = float(np.max(X.max(axis=0) - X.min(axis=0)))
    limit = 2.0**_SCALE_EXPONENT
    if largest > limit or 0 < spread < 1 / limit:
        row, column = np.unravel_index(np.argmax(magnitude), X.shape)
        what = (f"values up to {largest:.3g} (row {row}, column {column})" if largest > limit
                else f"columns that vary by at most {spread:.3g}")
        raise ValueError(
            f"{name} cannot learn from {argument} with {what}: squared distances and their "
            f"products would overflow or underflow float64. Rescale {argument} to values "
            f"between about 1e-60 and 1e60 (e.g. with StandardScaler); a metric learned "
            f"on {argument} * c applies to {argument} through transform({argument} * c)."
        )


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
