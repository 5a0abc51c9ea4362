"""Run the anchor libraries (metric-learn 0.7.0, scikit-learn's NCA) in a venv of their own.

metric-learn 0.7.0 needs scikit-learn < 1.8, which cannot live beside the scikit-learn
psdmetric is developed against, so the anchors run in ``.bench-venv/`` at the repository
root (git-ignored), created on first use with packages from PyPI. Each call hands the
data over in a temporary ``.npz``, runs ``_anchor_worker.py`` with the venv's Python and
reads back the fit time, the learned transform and the Mahalanobis matrix::

    from _anchors import run_anchor
    result = run_anchor("metric_learn:ITML", X, pairs=pairs, pair_labels=labels,
                        params={"gamma": 1.0, "tol": 1e-3}, fit_params={"bounds": [u, l]})
    result.fit_seconds, result.transform(X_test)

Learners are named ``"module:Class"``: ``metric_learn:ITML`` (weakly supervised, on
pairs of rows of ``X``), ``metric_learn:ITML_Supervised``, ``metric_learn:LMNN``,
``metric_learn:NCA`` and ``sklearn.neighbors:NeighborhoodComponentsAnalysis`` (on
labels ``y``).
"""

import fcntl
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _anchor_worker import FIT_FAILED

VENV = Path(__file__).resolve().parent.parent / ".bench-venv"
REQUIREMENTS = ("metric-learn==0.7.0", "scikit-learn<1.8", "numpy", "scipy")
WORKER = Path(__file__).resolve().parent / "_anchor_worker.py"
# Written after a successful install; a venv without it (an interrupted build) is rebuilt.
_STAMP = "psdmetric-anchors.json"


class AnchorFitError(RuntimeError):
    """The anchor learner's own ``fit`` raised; the message is its exception."""


@dataclass(frozen=True)
class AnchorResult:
    """What one anchor fit returned.

    Attributes
    ----------
    learner : str
        ``"module:Class"`` of the fitted estimator.
    fit_seconds : float
        Wall time of the ``fit`` call alone (no start-up, no data transfer).
    fit_cpu_seconds : float
        CPU time of the worker process during ``fit`` (all its threads).
    components : ndarray of shape (n_components, n_features)
        The learned transform ``L``.
    metric : ndarray of shape (n_features, n_features)
        The Mahalanobis matrix ``M = LᵀL`` as the library reports it.
    n_iter : int or None
        The estimator's ``n_iter_`` as the library defines it (metric-learn's ITML
        counts from 0: it ran ``n_iter + 1`` cycles).
    warnings : list of str
        Warnings raised during ``fit``.
    versions : dict
        Versions of the anchor library and its numpy, scipy and scikit-learn.
    """

    learner: str
    fit_seconds: float
    fit_cpu_seconds: float
    components: np.ndarray
    metric: np.ndarray
    n_iter: object
    warnings: list
    versions: dict

    def transform(self, X):
        """Map ``X`` through the learned transform, ``X Lᵀ``."""
        return np.asarray(X) @ self.components.T


def venv_python(venv=VENV):
    """Path of the anchor venv's Python, creating the venv first if needed."""
    venv = Path(venv)
    python = venv / "bin" / "python"
    stamp = venv / _STAMP
    # Benchmarks may start in parallel: one builds the venv, the others wait for it.
    with open(Path(tempfile.gettempdir()) / "psdmetric-bench-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and json.loads(stamp.read_text()) == list(REQUIREMENTS):
            return python
        print(f"[anchors] creating {venv} with {', '.join(REQUIREMENTS)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS], check=True
        )
        stamp.write_text(json.dumps(list(REQUIREMENTS)))
    return python


def run_anchor(learner, X, y=None, *, pairs=None, pair_labels=None, tuples=None,
               basis=None, params=None, fit_params=None, timeout=None, warm_up=False):
    """Fit an anchor learner in the anchor venv and return its result.

    Parameters
    ----------
    learner : str
        ``"module:Class"``, e.g. ``"metric_learn:ITML"``.
    X : array-like of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,), default=None
        Class labels, for the supervised learners.
    pairs : array-like of shape (n_pairs, 2), default=None
        Row indices of ``X`` for the weakly supervised pair learners; ``X`` becomes
        their ``preprocessor``.
    pair_labels : array-like of shape (n_pairs,), default=None
        +1 (similar) / -1 (dissimilar) for ``pairs``.
    tuples : array-like of shape (n_tuples, 3 or 4), default=None
        Row indices of ``X`` for the triplet and quadruplet learners (SCML, LSML).
    basis : array-like of shape (n_basis, n_features), default=None
        SCML's ``basis`` array (passed as an array, which SCML requires).
    params : dict, default=None
        Constructor parameters (JSON-serialisable; ``float("inf")`` is allowed).
    fit_params : dict, default=None
        Extra keyword arguments of ``fit`` (e.g. ITML's ``bounds``).
    timeout : float, default=None
        Seconds before the worker is killed and ``subprocess.TimeoutExpired`` raised.
    warm_up : bool, default=False
        Fit a copy once, untimed, before the timed fit (one-time costs left out).

    Returns
    -------
    AnchorResult
    """
    if sum(given is not None for given in (y, pairs, tuples)) != 1:
        raise ValueError("Pass one of y (supervised), pairs and pair_labels, or tuples.")
    arrays = {"X": np.asarray(X, dtype=np.float64)}
    if basis is not None:
        arrays["basis"] = np.asarray(basis, dtype=np.float64)
    if y is not None:
        arrays["y"] = np.asarray(y)
    elif tuples is not None:
        arrays["tuples"] = np.asarray(tuples, dtype=np.int64)
    else:
        arrays["pairs"] = np.asarray(pairs, dtype=np.int64)
        arrays["pair_labels"] = np.asarray(pair_labels, dtype=np.int64)
    spec = {"learner": learner, "params": params or {}, "fit_params": fit_params or {},
            "warm_up": warm_up}
    python = venv_python()
    with tempfile.TemporaryDirectory(prefix="psdmetric-anchor-") as tmp:
        tmp = Path(tmp)
        np.savez(tmp / "input.npz", **arrays)
        (tmp / "spec.json").write_text(json.dumps(spec))
        # -I: the venv must not see this repository or the user's site-packages.
        completed = subprocess.run(
            [str(python), "-I", str(WORKER), str(tmp)],
            capture_output=True, text=True, timeout=timeout,
        )
        if completed.returncode == FIT_FAILED:
            raise AnchorFitError((tmp / "fit_failed.txt").read_text())
        if completed.returncode != 0:
            raise RuntimeError(
                f"anchor {learner} failed (exit {completed.returncode}):\n"
                f"{completed.stderr[-3000:]}"
            )
        report = json.loads((tmp / "result.json").read_text())
        with np.load(tmp / "output.npz") as output:
            components, metric = output["components"], output["metric"]
    return AnchorResult(
        learner=learner,
        fit_seconds=report["fit_seconds"],
        fit_cpu_seconds=report["fit_cpu_seconds"],
        components=components,
        metric=metric,
        n_iter=report["n_iter"],
        warnings=report["warnings"],
        versions=report["versions"],
    )
