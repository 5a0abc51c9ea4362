"""CPU per default fit with many classes (up to 32), as a user runs it (default threads).

Three sets with n ≤ 2,000, d ≤ 100 and 26–32 classes: two synthetic ones from
``make_classification`` (2,000 × 16 with 26 classes, the shape of UCI's letter data;
2,000 × 100 with 30 classes) and the suite's ``leaf_id_flavia`` (1,907 × 50, 32
classes). Each is split by ``StratifiedKFold(5, shuffle=True, random_state=0)``; a
``StandardScaler`` is fitted on the training fold, then every learner (the papers' and
metric-learn's) with its defaults and ``random_state=0``; the CPU seconds of ``fit`` are
recorded per fold (every thread of the process counted, with the libraries' default
thread counts, unlike ``bench_speed``, which runs on one thread) with the 5-NN test
error next to Euclidean's.

    python bench/bench_many_classes.py       # writes docs/benchmarks/many_classes.{json,md}
"""

import sys
import time
import warnings

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler

import psdmetric
from _datasets import load_suite
from _harness import Case, main
from _reporting import knn_error

LEARNERS = ("LogDet", "VonNeumann", "DefiniteBoost", "MEG", "OnlineLogDet", "POLA",
            "KernelPOLA", "PSDBoost", "LogDetCV", "VonNeumannCV", "LMNN", "MMC", "SDML",
            "LSML", "SCML", "RCA", "LFDA", "MLKR")
SYNTHETIC = {
    "synthetic26": {"n_features": 16, "n_informative": 12, "n_redundant": 2, "n_classes": 26},
    "synthetic30": {"n_features": 100, "n_informative": 30, "n_redundant": 10,
                    "n_classes": 30},
}
DATASETS = (*SYNTHETIC, "leaf_id_flavia")


def load(name):
    if name in SYNTHETIC:
        return make_classification(n_samples=2000, n_clusters_per_class=1, class_sep=1.5,
                                   random_state=0, **SYNTHETIC[name])
    return load_suite(name)


def measure(dataset, n_folds):
    """Per learner: CPU seconds and 5-NN error per fold; Euclidean's errors."""
    X, y = load(dataset)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[:n_folds]
    record = {"shape": [*X.shape, int(len(np.unique(y)))], "Euclidean": [], "learners": {}}
    for train, test in folds:
        scaler = StandardScaler().fit(X[train])
        X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
        record["Euclidean"].append(knn_error(X_train, y[train], X_test, y[test]))
        for name in LEARNERS:
            learner = getattr(psdmetric, name)()
            if "random_state" in learner.get_params():  # not LFDA, which draws nothing
                learner.set_params(random_state=0)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cpu = time.process_time()
                learner.fit(X_train, y[train])
                cpu = time.process_time() - cpu
            error = knn_error(learner.transform(X_train), y[train],
                              learner.transform(X_test), y[test])
            record["learners"].setdefault(name, []).append(
                {"cpu": cpu, "error": error, "warned": bool(caught)})
            print(dataset, name, f"{cpu:.2f} s", f"{error:.4f}", flush=True)
    return record


def cases(args):
    return [Case(name, protocol=measure, params={"dataset": name, "n_folds": 5},
                 quick={"dataset": name, "n_folds": 1}, into="sets") for name in DATASETS]


if __name__ == "__main__":
    sys.exit(main("many_classes", cases, setup=lambda args: {"sets": {}}))
