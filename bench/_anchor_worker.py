"""Fit one anchor learner inside the anchor venv (run by ``_anchors.run_anchor``).

    python -I _anchor_worker.py WORKDIR

Reads ``WORKDIR/input.npz`` (``X`` and either ``y``, ``pairs`` + ``pair_labels``, or
index ``tuples`` with SCML's optional ``basis``) and ``WORKDIR/spec.json`` (``learner`` as
``"module:Class"``, constructor ``params``, ``fit_params``, ``warm_up``: one untimed fit
first); writes ``WORKDIR/output.npz`` (``components``, ``metric``) and
``WORKDIR/result.json`` (wall and CPU fit time, ``n_iter_``, warnings, versions). Only the ``fit``
call is timed. When ``fit`` itself raises, the exception is written to
``WORKDIR/fit_failed.txt`` and the exit code is ``FIT_FAILED``. This file runs under the
anchor venv's packages, never psdmetric's.
"""

import copy
import functools
import importlib
import json
import sys
import time
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

# Exit code of a run whose learner's own fit raised (any other failure exits with 1).
FIT_FAILED = 3


def _versions():
    found = {}
    for package in ("metric-learn", "scikit-learn", "numpy", "scipy"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found


def main(workdir):
    workdir = Path(workdir)
    spec = json.loads((workdir / "spec.json").read_text())
    module_name, class_name = spec["learner"].split(":")
    estimator_class = getattr(importlib.import_module(module_name), class_name)
    params, fit_params = dict(spec["params"]), dict(spec["fit_params"])

    fit = None
    with np.load(workdir / "input.npz") as data:
        X = data["X"]
        if "pairs" in data:
            # Pair learners take index pairs and look the rows up in their preprocessor.
            estimator = estimator_class(preprocessor=X, **params)
            fit_args = (data["pairs"], data["pair_labels"])
        elif "tuples" in data:
            # Triplet and quadruplet learners (SCML, LSML): index tuples, no labels.
            estimator = estimator_class(preprocessor=X, **params)
            fit_args = (data["tuples"],)
            if "basis" in data:
                # SCML 0.7.0's fit rejects a basis array (`basis not in [...]` on an
                # array); its _fit takes one, as SCML_Supervised passes it.
                fit = functools.partial(estimator._fit, basis=data["basis"],
                                        n_basis=len(data["basis"]))
        else:
            estimator = estimator_class(**params)
            fit_args = (X, data["y"])

    if spec.get("warm_up"):
        # One untimed fit of a copy first: one-time costs (imports, BLAS start-up) left out.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warm = copy.deepcopy(estimator)
            try:
                (functools.partial(warm._fit, **fit.keywords) if fit else warm.fit)(
                    *fit_args, **fit_params)
            except Exception as exc:  # the anchor's own failure, as below
                (workdir / "fit_failed.txt").write_text(f"{type(exc).__name__}: {exc}")
                sys.exit(FIT_FAILED)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start, start_cpu = time.perf_counter(), time.process_time()
        try:
            (fit or estimator.fit)(*fit_args, **fit_params)
        except Exception as exc:  # the anchor's own failure: reported, not a crash here
            (workdir / "fit_failed.txt").write_text(f"{type(exc).__name__}: {exc}")
            sys.exit(FIT_FAILED)
        fit_seconds = time.perf_counter() - start
        fit_cpu_seconds = time.process_time() - start_cpu

    components = np.asarray(estimator.components_, dtype=np.float64)
    if hasattr(estimator, "get_mahalanobis_matrix"):
        metric = np.asarray(estimator.get_mahalanobis_matrix(), dtype=np.float64)
    else:
        metric = components.T @ components
    np.savez(workdir / "output.npz", components=components, metric=metric)
    n_iter = getattr(estimator, "n_iter_", None)
    report = {
        "fit_seconds": fit_seconds,
        "fit_cpu_seconds": fit_cpu_seconds,
        "n_iter": None if n_iter is None else int(n_iter),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
        "versions": _versions(),
    }
    (workdir / "result.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
