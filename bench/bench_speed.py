"""Fit time of every learner with its current defaults, and VonNeumann against LogDet.

1. Mean wall and CPU seconds per ``fit(X, y)`` over 5 stratified folds (seed 0),
   ``StandardScaler`` fitted on the training fold, each learner with its defaults as
   they are when the script runs, on three offline data sets:

   - ``leaf15``: 360 × 50, 15 classes: the Flavia leaf-shape features of R's
     ``modeldata::leaf_id_flavia``, the 15 species with most leaves, 24 leaves each
     (a real many-class shape set of about the size of UCI's 360 × 90, 15-class
     movement data, which no offline package ships);
   - ``cells``: the suite's ``modeldata::cells`` (2,019 × 56, 2 classes; training
     folds ~1,600 × 56);
   - ``mnist50``: the suite's MNIST-5000 subsample (2,000 × 784) reduced to 50
     principal components (training folds 1,600 × 50).

   Each (learner, data set) runs in a child process with a wall-clock budget; the
   folds finished within it are reported, and a learner whose first fold does not
   finish is reported as over budget.
2. VonNeumann's total fit time over LogDet's on the same 10,000 pairs drawn from the
   MNIST-5000 training labels at d = 100, same bounds, tolerance and data, each with
   its other defaults; also with the cyclic driver's screening switched off, to show
   what screening buys (cycles, constraints swept, projections, seconds).

Times use one BLAS thread (set before numpy loads).

    python bench/bench_speed.py            # writes docs/benchmarks/speed.{json,md}
    python bench/bench_speed.py --quick    # two folds, small budgets, scratch dir
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import functools  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from _datasets import load, load_mnist5000, load_suite  # noqa: E402
from _harness import Case, main  # noqa: E402
from _render.speed import DATASETS, LEARNERS, RATIO_TOL  # noqa: E402
from _reporting import Stopwatch, tallied  # noqa: E402

import psdmetric  # noqa: E402
import psdmetric._bregman._logdet as logdet_module  # noqa: E402
import psdmetric._bregman._von_neumann as von_neumann_module  # noqa: E402

N_SPLITS = 5
CELL_BUDGET = 10.0  # wall seconds of fitting per (learner, data set)
RATIO_PAIRS, RATIO_DIMENSIONS = 10_000, 100
CLOCKS = ("wall", "cpu")


def load_leaf15():
    """The 15 species of Flavia leaves with most samples, 24 leaves each (seed 0)."""
    X, y = load("leaf_id_flavia")
    species, counts = np.unique(y, return_counts=True)
    kept = species[np.argsort(-counts, kind="stable")[:15]]
    rng = np.random.RandomState(0)
    rows = np.concatenate([rng.choice(np.flatnonzero(y == label), 24, replace=False)
                           for label in kept])
    return np.ascontiguousarray(X[rows]), np.unique(y[rows], return_inverse=True)[1]


def load_dataset(name):
    if name == "leaf15":
        return load_leaf15()
    if name == "cells":
        return load_suite("cells")
    X, y = load_suite("mnist5000")
    return PCA(50, random_state=0).fit_transform(X), y


def ratio_experiment(n_pairs):
    """VonNeumann / LogDet fit time on the same pairs, bounds, tol and data."""
    from psdmetric import LogDet, VonNeumann, pairs_from_labels, squared_distance_bounds

    X, y = load_mnist5000(n_components=RATIO_DIMENSIONS)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=0)
    constraints = pairs_from_labels(y_train, n_pairs, random_state=0)
    bounds = squared_distance_bounds(X_train, random_state=0)
    rows = []
    for learner, module in ((LogDet, logdet_module), (VonNeumann, von_neumann_module)):
        for screening in (True, False):
            model = learner(bounds=bounds, tol=RATIO_TOL, random_state=0)
            with tallied(module, screening) as tally, \
                    warnings.catch_warnings(record=True) as caught, Stopwatch() as watch:
                warnings.simplefilter("always")
                model.fit(X_train, constraints=constraints)
            rows.append({
                "learner": learner.__name__, "screening": screening,
                "seconds": watch.seconds(), "cycles": int(model.n_iter_), **tally,
                "converged": not any(issubclass(w.category, ConvergenceWarning)
                                     for w in caught),
                "tol": model.tol, "gamma": model.gamma})
            print(f"  {learner.__name__:10s} screening={screening!s:5s} "
                  f"{watch.wall:7.2f} s wall {watch.cpu:7.2f} s CPU, {model.n_iter_} cycles, "
                  f"{tally['swept']:,} swept, {tally['projected']:,} projected", flush=True)
    return {"n_train": int(X_train.shape[0]), "d": RATIO_DIMENSIONS,
            "n_pairs": int(len(constraints.pairs)), "bounds": bounds.tolist(), "rows": rows}


def build(learner):
    return getattr(psdmetric, learner)(random_state=0)


def cases(args):
    """Every learner's fit times on every set, then VonNeumann against LogDet."""
    return [*(Case(learner, functools.partial(build, learner),
                   functools.partial(load_dataset, name), protocol="fit_time", into="cells",
                   labels={"dataset": name})
              for learner in LEARNERS for name in DATASETS),
            Case("ratio", protocol=ratio_experiment, params={"n_pairs": RATIO_PAIRS},
                 quick={"n_pairs": 500})]


def setup(args):
    args.n_folds = 2 if args.quick else N_SPLITS
    args.budget = 2.0 if args.quick else args.budget
    return {"quick": args.quick, "n_folds": args.n_folds, "budget": args.budget}


def fits(results, args=None):
    """The fit time cells by learner and data set, with their mean times."""
    results["fits"] = {}
    for cell in results.pop("cells"):
        folds = cell["folds"]
        mean = {clock: float(np.mean([f["seconds"][clock] for f in folds]))
                if folds else None for clock in CLOCKS}
        results["fits"].setdefault(cell["method"], {})[cell["dataset"]] = {
            "folds": folds, "status": cell["status"], "mean": mean}
    results["total_seconds"] = sum(seconds["wall"]
                                   for seconds in results["case_seconds"].values())


def add_arguments(parser):
    parser.add_argument("--budget", type=float, default=CELL_BUDGET, metavar="SECONDS",
                        help=f"wall seconds of fitting per cell (default {CELL_BUDGET:.0f})")


if __name__ == "__main__":
    sys.exit(main("speed", cases, add_arguments=add_arguments, setup=setup, finish=fits))
