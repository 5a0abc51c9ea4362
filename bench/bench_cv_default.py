"""LogDetCV and VonNeumannCV against their plain learner's default: error and CPU per fit.

Every suite and check set under the suite protocol (``_folds``: stratified 5-fold,
``StandardScaler`` → learner → 5-NN, every fold cached), each search with its defaults
and ``random_state=0`` next to the plain learner's default fit on the same folds. A set
counts as "worse" when the search's mean error exceeds the plain default's by more than
the plain default's standard error over the folds, "better" when it is strictly lower;
the CPU ratio is the search's mean CPU seconds per fit over the plain default's.

    python bench/bench_cv_default.py                   # writes docs/benchmarks/cv_default.*
    python bench/bench_cv_default.py --datasets iris wine --out /tmp/cv_default
"""

import sys

import numpy as np

import psdmetric
from _datasets import CHECK_SETS, SUITE
from _folds import N_SPLITS, learner_fold, suite_data
from _harness import Case, main
from _reporting import mean_and_standard_error

PAIRS = {"LogDetCV": "LogDet", "VonNeumannCV": "VonNeumann"}


def compare(dataset):
    """Per search: its folds and the plain default's, on one data set."""
    X, y, folds = suite_data(dataset)
    record = {"shape": [*X.shape, int(len(np.unique(y)))],
              "test_sizes": [len(test) for _, test in folds]}
    for search, plain in PAIRS.items():
        for name in (plain, search):
            estimator = getattr(psdmetric, name)(random_state=0)
            record[name] = [learner_fold(dataset, fold, estimator) for fold in range(N_SPLITS)]
            print(dataset, name, [round(f["error"], 4) if f["error"] is not None else None
                                  for f in record[name]], flush=True)
    return record


def summarise(results, args=None):
    """Per (set, search): errors, the one-SE verdict and the CPU ratio."""
    rows = []
    for dataset, record in results["sets"].items():
        for search, plain in PAIRS.items():
            ours = [f["error"] for f in record[search]]
            theirs = [f["error"] for f in record[plain]]
            mean, _ = mean_and_standard_error(ours)
            plain_mean, plain_se = mean_and_standard_error(theirs)
            cpu = float(np.mean([f["fit_cpu_seconds"] for f in record[search]]))
            plain_cpu = float(np.mean([f["fit_cpu_seconds"] for f in record[plain]]))
            rows.append({
                "data": dataset, "search": search, "n": record["shape"][0],
                "error": mean, "plain_error": plain_mean, "plain_se": plain_se,
                "worse": bool(mean > plain_mean + plain_se + 1e-12),
                "better": bool(mean < plain_mean - 1e-12),
                "cpu": cpu, "plain_cpu": plain_cpu, "cpu_ratio": cpu / plain_cpu,
            })
    results["rows"] = rows


def add_arguments(parser):
    sets = list(SUITE) + list(CHECK_SETS)
    parser.add_argument("--datasets", nargs="+", default=sets, choices=sets)


def cases(args):
    return [Case(name, protocol=compare, params={"dataset": name}, into="sets")
            for name in args.datasets]


if __name__ == "__main__":
    sys.exit(main("cv_default", cases, add_arguments=add_arguments,
                  setup=lambda args: {"sets": {}}, finish=summarise))
