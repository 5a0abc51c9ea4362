"""``n_components`` of MMC, LSML, SCML and MLKR on the sets with more than 100 features.

With ``n_components="auto"`` (their default) these learners learn on the 100 leading
principal axes of ``X`` when it has more than 100 features, as LMNN does (its own
choice is on its page, ``bench_lmnn.py``); MLKR is fitted on the class codes, as on the
suite page. Here each learner's two settings, all
features (``None``) and ``"auto"``, run under the suite protocol (``_folds``: stratified
5-fold, ``StandardScaler`` → learner → 5-NN) on every set with more than 100 features:
the suite's ``mnist5000`` and ``tissue_gene_expression`` and ``_datasets.WIDE_SETS``. A
setting's score on a set is the mean over the folds of the log error ratio against
Euclidean 5-NN (as in ``bench_defaults.py``); a cell that does not finish its 5 folds
within ``--budget`` seconds scores +∞, since a default must fit. Each held-out set gets
the setting with the best mean score on the others (ties to all features, the status
quo), and the default is the best over all sets.

    python bench/bench_wide.py [--budget 45]    # writes docs/benchmarks/wide.{json,md}
"""

import math
import sys

import numpy as np

import psdmetric
from _datasets import WIDE_SETS
from _folds import N_SPLITS, euclidean_folds, kfold_cell
from _harness import Case, main
from _reporting import log_error_ratio

LEARNERS = ("MMC", "LSML", "SCML", "MLKR")
SETS = ("mnist5000", "tissue_gene_expression", *WIDE_SETS)
SETTINGS = (None, "auto")


def choice(learner, datasets, budget):
    """Both settings' cells per set, and the leave-one-data-set-out choice."""
    cells = {}
    for setting in SETTINGS:
        estimator = getattr(psdmetric, learner)(n_components=setting, random_state=0)
        for name in datasets:
            cell = kfold_cell(name, estimator, budget)
            errors = [f["error"] for f in cell["folds"]]
            euclidean = [f["error"] for f in euclidean_folds(name)]
            finished = cell["n_folds_done"] == N_SPLITS
            cells[f"{setting}/{name}"] = {
                "status": cell["status"], "note": cell["note"], "errors": errors,
                "euclidean": euclidean,
                "cpu_max": max((f["fit_cpu_seconds"] for f in cell["folds"]), default=None),
                "score": log_error_ratio(errors, euclidean) if finished else math.inf}
            print(learner, setting, name, cell["status"],
                  f"{cells[f'{setting}/{name}']['score']:+.3f}", flush=True)

    def best(among):
        return min(SETTINGS, key=lambda s: (np.mean([cells[f"{s}/{n}"]["score"]
                                                     for n in among]), SETTINGS.index(s)))

    held_out = {name: str(best([n for n in datasets if n != name])) for name in datasets}
    return {"settings": [str(s) for s in SETTINGS], "datasets": list(datasets),
            "cells": cells, "held_out": held_out, "chosen": str(best(datasets))}


def _arguments(parser):
    parser.add_argument("--budget", type=float, default=45.0,
                        help="wall seconds per cell (5 folds) before it is stopped")


def cases(args):
    sets = WIDE_SETS[:2] if args.quick else SETS
    return [Case(learner, protocol=choice, into="learners",
                 params={"learner": learner, "datasets": sets, "budget": args.budget})
            for learner in LEARNERS]


if __name__ == "__main__":
    sys.exit(main("wide", cases, add_arguments=_arguments,
                  setup=lambda args: {"learners": {}, "budget": args.budget}))
