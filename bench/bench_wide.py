"""``n_components`` of MMC, LSML, SCML, MLKR, RCA and LFDA on the sets above 100 features.

With ``n_components="auto"`` (their default) these learners learn on the 100 leading
principal axes of ``X`` when it has more than 100 features, as LMNN does (its own
choice is on its page, ``bench_lmnn.py``); MLKR is fitted on the class codes, as on the
suite page. Here each learner's two settings, all
features (``None``) and ``"auto"``, run under the suite protocol (``_folds``: stratified
5-fold, ``StandardScaler`` → learner → 5-NN) on every set with more than 100 features:
the suite's ``mnist5000`` and ``tissue_gene_expression`` and ``_datasets.WIDE_SETS``. A
setting's score on a set is the mean over the folds of the log error ratio against
Euclidean 5-NN (as in ``bench_defaults.py``); a cell that does not finish its 5 folds
within ``--budget`` seconds scores +∞, since a default must fit. A setting with a fit
of ``FIT_SECONDS`` CPU or more on any set is not eligible (issue 37, T4: every default
fit at MNIST-5000's 784 pixels under 10 s), unless no setting is. Each held-out set gets
the eligible setting with the best mean score on the others (ties to all features, the
status quo), and the default is the best over all sets.

RCA's ``"auto"`` learns on the leading principal axes of ``X`` above 100 features, as
many as its cap (``_rca.AUTO_AXES``) and the within-chunklet covariance can estimate
(``p − c`` for ``p`` samples in ``c`` chunklets); its candidates, every feature and the
caps of ``RCA_CAPS`` (``inf``: only ``p − c``), are fitted here on the explicitly
projected training fold (the chunklets ``RCA(random_state=0)`` draws; a fit that raises
scores +∞), and the default's own cells (``RCA(random_state=0)``) are shown beside them.
LFDA's ``"auto"`` learns on a fixed number of leading principal axes above 100 features
(``_lfda.AUTO_AXES``), all components there; its candidates, every feature and the caps
of ``LFDA_CAPS``, are fitted the same way.

    python bench/bench_wide.py [--budget 45]    # writes docs/benchmarks/wide.{json,md}
"""

import math
import sys
import time

import numpy as np

import psdmetric
from _datasets import WIDE_SETS
from _folds import N_SPLITS, euclidean_folds, kfold_cell, scaled_fold
from _harness import Case, main
from _reporting import finish_machine, knn_error, log_error_ratio, machine
from psdmetric._closed_form._rca import auto_dimension
from psdmetric._core import one_blas_thread, principal_axes
from psdmetric._core._chunklets import Chunklets

LEARNERS = ("MMC", "LSML", "SCML", "MLKR")
SETS = ("mnist5000", "tissue_gene_expression", *WIDE_SETS)
SETTINGS = (None, "auto")
# RCA's candidates: every feature, or at most this many leading principal axes (inf: as
# many as the chunklets can estimate).
RCA_CAPS = (None, 10, 25, 50, 100, math.inf)
# LFDA's: every feature, or this many leading principal axes.
LFDA_CAPS = (None, 25, 50, 100)
# A default fits each fold in under this many CPU seconds (issue 37, T4).
FIT_SECONDS = 10.0


def choice(learner, datasets, budget):
    """Both settings' cells per set, and the leave-one-data-set-out choice."""
    cells = {}
    for setting in SETTINGS:
        estimator = getattr(psdmetric, learner)(n_components=setting, random_state=0)
        for name in datasets:
            cell = kfold_cell(name, estimator, budget)
            cells[f"{setting}/{name}"] = entry(learner, setting, name, cell)
    return selection(SETTINGS, datasets, cells)


def entry(learner, setting, name, cell):
    """A (setting, set) cell of the page from a ``kfold_cell``-shaped cell."""
    errors = [f["error"] for f in cell["folds"]]
    euclidean = [f["error"] for f in euclidean_folds(name)]
    finished = cell["n_folds_done"] == N_SPLITS
    result = {"status": cell["status"], "note": cell["note"], "errors": errors,
              "euclidean": euclidean,
              "cpu_max": max((f["fit_cpu_seconds"] for f in cell["folds"]), default=None),
              "score": log_error_ratio(errors, euclidean) if finished else math.inf}
    print(learner, setting, name, cell["status"], f"{result['score']:+.3f}", flush=True)
    return result


def selection(settings, datasets, cells):
    """Each held-out set's best eligible setting on the others, and the best on all sets."""
    def fast(setting):
        return all((cells[f"{setting}/{n}"]["cpu_max"] or 0.0) < FIT_SECONDS for n in datasets)

    eligible = [s for s in settings if fast(s)] or list(settings)

    def best(among):
        return min(eligible, key=lambda s: (np.mean([cells[f"{s}/{n}"]["score"]
                                                     for n in among]), settings.index(s)))

    held_out = {name: str(best([n for n in datasets if n != name])) for name in datasets}
    return {"settings": [str(s) for s in settings], "datasets": list(datasets),
            "cells": cells, "held_out": held_out, "chosen": str(best(datasets))}


def capped_fold(name, fold, dimension, components):
    """A fit on a training fold's leading principal axes, as "auto" fits.

    ``dimension(X, y)``: how many axes (None: every feature); ``components(X, y)``: the
    learner's map on them. A fit that raises a ValueError scores +∞.
    """
    X_train, X_test, y_train, y_test = scaled_fold(name, fold)
    start = time.process_time()
    try:
        with one_blas_thread():
            kept = dimension(X_train, y_train)
            axes = None if kept is None else principal_axes(X_train, kept)
            L = components(X_train if axes is None else X_train @ axes, y_train)
            L = L if axes is None else L @ axes.T
    except ValueError as error:
        return {"error": None, "failed": f"ValueError: {error}"[:300]}
    return {"error": knn_error(X_train @ L.T, y_train, X_test @ L.T, y_test),
            "fit_cpu_seconds": time.process_time() - start}


def _rca_chunks(X, y):
    return Chunklets.from_labels(X, y, random_state=0).chunks


def _rca_fold(name, fold, cap):
    """RCA on ``cap`` axes at most, and no more than the chunklets can estimate."""
    return capped_fold(
        name, fold,
        lambda X, y: None if cap is None else auto_dimension(X.shape[1], _rca_chunks(X, y),
                                                             cap),
        lambda X, y: psdmetric.RCA(n_components=None).fit(
            X, chunks=_rca_chunks(X, y)).components_)


def _lfda_fold(name, fold, cap):
    """LFDA with all components on ``cap`` axes (None: every feature)."""
    return capped_fold(
        name, fold, lambda X, y: None if cap is None or cap >= X.shape[1] else cap,
        lambda X, y: psdmetric.LFDA(n_components=None).fit(X, y).components_)


CAPPED = {"RCA": (_rca_fold, RCA_CAPS, lambda: psdmetric.RCA(random_state=0)),
          "LFDA": (_lfda_fold, LFDA_CAPS, psdmetric.LFDA)}


def capped_choice(learner, datasets, budget):
    """A learner's cap on the axes by leave-one-data-set-out, and its default's cells."""
    fold_fit, caps, default = CAPPED[learner]
    context, cells = machine(), {}  # --only replaces the page's machine
    for cap in caps:
        for name in datasets:
            folds = [fold_fit(name, fold, cap) for fold in range(N_SPLITS)]
            done = [f for f in folds if f["error"] is not None]
            failed = [f["failed"] for f in folds if f["error"] is None]
            cells[f"{cap}/{name}"] = entry(learner, cap, name, {
                "folds": done, "n_folds_done": len(done),
                "status": "failed" if failed else "ok", "note": failed[0] if failed else ""})
    result = selection(caps, datasets, cells)
    result["default"] = {name: entry(learner, "auto", name, kfold_cell(
        name, default(), budget)) for name in datasets}
    result["machine"] = finish_machine(context)
    return result


def _arguments(parser):
    parser.add_argument("--budget", type=float, default=45.0,
                        help="wall seconds per cell (5 folds) before it is stopped")


def cases(args):
    sets = WIDE_SETS[:2] if args.quick else SETS
    return ([Case(learner, protocol=choice, into="learners",
                  params={"learner": learner, "datasets": sets, "budget": args.budget})
             for learner in LEARNERS]
            + [Case(learner, protocol=capped_choice, into="learners",
                    params={"learner": learner, "datasets": sets, "budget": args.budget})
               for learner in CAPPED])


if __name__ == "__main__":
    sys.exit(main("wide", cases, add_arguments=_arguments,
                  setup=lambda args: {"budget": args.budget,
                                      **({} if args.only else {"learners": {}})}))
