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

import multiprocessing  # noqa: E402
import queue  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import StratifiedKFold, train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from _datasets import load, load_mnist5000, load_suite  # noqa: E402
from _reporting import (  # noqa: E402
    Stopwatch,
    finish_machine,
    machine,
    machine_line,
    parse_arguments,
    tallied,
    write_json,
)

LEARNERS = ("LogDet", "VonNeumann", "MEG", "POLA", "OnlineLogDet", "PSDBoost",
            "DefiniteBoost", "KernelPOLA")
DATASETS = ("leaf15", "cells", "mnist50")
SHAPES = {"leaf15": "360 × 50, 15 classes", "cells": "2,019 × 56, 2 classes",
          "mnist50": "2,000 × 50 (PCA), 10 classes"}
N_SPLITS = 5
CELL_BUDGET = 10.0  # wall seconds of fitting per (learner, data set)
RATIO_PAIRS, RATIO_DIMENSIONS = 10_000, 100
# One tolerance for both learners (their defaults differ): LogDet's default.
RATIO_TOL = 1e-3
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


def fold_fits(learner_name, dataset, n_folds, results):
    """Child process: fit ``learner_name`` on each training fold, send each fold's times."""
    import psdmetric

    X, y = load_dataset(dataset)
    folds = StratifiedKFold(N_SPLITS, shuffle=True, random_state=0).split(X, y)
    results.put("ready")  # the budget counts from here: imports and loading excluded
    for fold, (train, _) in zip(range(n_folds), folds):
        X_train = StandardScaler().fit_transform(X[train])
        model = getattr(psdmetric, learner_name)(random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with Stopwatch() as watch:
                    model.fit(X_train, y[train])
            except Exception as exc:  # reported in the table
                results.put(f"failed: {type(exc).__name__}: {exc}"[:300])
                return
        results.put({"fold": fold, "seconds": watch.seconds(),
                     "n_iter": getattr(model, "n_iter_", None),
                     "converged": not any(issubclass(w.category, ConvergenceWarning)
                                          for w in caught)})
    results.put(None)


def time_cell(learner_name, dataset, n_folds, budget):
    """Per-fold results of one (learner, data set) within ``budget`` wall seconds of
    fitting."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=fold_fits, args=(learner_name, dataset, n_folds, results),
                            daemon=True)
    child.start()
    folds = []
    try:
        if results.get(timeout=300) != "ready":
            raise RuntimeError(f"{learner_name} on {dataset}: the child failed to start")
        deadline = time.perf_counter() + budget
        while True:
            try:
                item = results.get(timeout=max(deadline - time.perf_counter(), 0.01))
            except queue.Empty:
                return folds, "over budget"
            if item is None:
                return folds, "done"
            if isinstance(item, str):
                return folds, item
            folds.append(item)
    finally:
        if child.is_alive():
            child.terminate()
        child.join()


def ratio_experiment(n_pairs):
    """VonNeumann / LogDet fit time on the same pairs, bounds, tol and data."""
    import psdmetric._logdet
    import psdmetric._von_neumann
    from psdmetric import LogDet, VonNeumann, pairs_from_labels, squared_distance_bounds

    X, y = load_mnist5000(n_components=RATIO_DIMENSIONS)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, stratify=y,
                                              random_state=0)
    constraints = pairs_from_labels(y_train, n_pairs, random_state=0)
    bounds = squared_distance_bounds(X_train, random_state=0)
    rows = []
    for learner, module in ((LogDet, psdmetric._logdet), (VonNeumann, psdmetric._von_neumann)):
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


def markdown(results):
    lines = [
        "# Fit time with the defaults",
        "",
        "Generated by `python bench/bench_speed.py`; every number below comes from one run "
        "of that script (raw numbers: `speed.json`). One BLAS thread.",
        "",
        machine_line(results["machine"]),
        "",
        f"## 1. Seconds per fit, mean over {results['n_folds']} folds",
        "",
        "Each learner with its defaults at the time of the run and `random_state=0`, "
        "`fit(X, y)` on the training fold after `StandardScaler` (5-fold stratified "
        f"split, seed 0). A cell gets {results['budget']:.0f} s of wall time; its mean "
        "is over the folds finished in that time (count in brackets when fewer than "
        "all), or it is marked over budget. Data: "
        + "; ".join(f"`{name}` {SHAPES[name]}" for name in DATASETS)
        + ". `leaf15` is the Flavia leaf-shape set of R's `modeldata` "
        "(`leaf_id_flavia`), 15 species with 24 leaves each; `mnist50` is the "
        "suite's 2,000-point MNIST-5000 subsample reduced to 50 principal components.",
        "",
        "| learner | " + " | ".join(f"{name} wall (s) | {name} CPU (s)" for name in DATASETS)
        + " |",
        "|---|" + "---|---|" * len(DATASETS),
    ]
    for learner in LEARNERS:
        cells = []
        for name in DATASETS:
            cell = results["fits"][learner][name]
            folds = cell["folds"]
            if not folds:
                cells += [f"> {results['budget']:.0f}", ""]
                continue
            note = "" if len(folds) == results["n_folds"] else f" ({len(folds)})"
            unconverged = sum(not f["converged"] for f in folds)
            warn = f", {unconverged} warned" if unconverged else ""
            cells += [f"{cell['mean']['wall']:.2f}{note}{warn}", f"{cell['mean']['cpu']:.2f}"]
        lines.append(f"| {learner} | " + " | ".join(cells) + " |")
    r = results["ratio"]
    rows = {(row["learner"], row["screening"]): row for row in r["rows"]}
    lines += [
        "",
        "'warned': folds that ended with a `ConvergenceWarning` (`max_iter` reached or "
        "infeasible constraints).",
        "",
        f"## 2. VonNeumann against LogDet, MNIST-5000 at d = {r['d']}",
        "",
        f"The same {r['n_pairs']:,} pairs drawn from the labels of the {r['n_train']:,} "
        "training points, the same bounds (5th/95th percentiles of the squared "
        f"distances), the same tolerance (tol = {RATIO_TOL:g}) and data; each learner "
        "otherwise with its defaults. Rows without screening replace the cyclic "
        "driver's screen by full sweeps (the fit before screening). 'swept': "
        "constraints handed to the projection sweeps; 'projected': those whose dual "
        "changed.",
        "",
        "| learner | screening | wall (s) | CPU (s) | cycles | swept | projected | converged |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in r["rows"]:
        lines.append(
            f"| {row['learner']} | {'yes' if row['screening'] else 'no'} | "
            f"{row['seconds']['wall']:.2f} | {row['seconds']['cpu']:.2f} | {row['cycles']} | "
            f"{row['swept']:,} | {row['projected']:,} | {'yes' if row['converged'] else 'no'} |")
    vn, ld = rows["VonNeumann", True], rows["LogDet", True]
    lines += [
        "",
        "VonNeumann / LogDet total fit time, both screened: "
        f"{vn['seconds']['wall'] / ld['seconds']['wall']:.1f}× wall, "
        f"{vn['seconds']['cpu'] / ld['seconds']['cpu']:.1f}× CPU.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None):
    def add_arguments(parser):
        parser.add_argument("--budget", type=float, default=CELL_BUDGET, metavar="SECONDS",
                            help=f"wall seconds of fitting per cell (default {CELL_BUDGET:.0f})")

    args, out = parse_arguments(__doc__.splitlines()[0], argv, add_arguments)
    n_folds = 2 if args.quick else N_SPLITS
    budget = 2.0 if args.quick else args.budget
    results = {"machine": machine(), "quick": args.quick, "n_folds": n_folds,
               "budget": budget, "fits": {}}
    start = time.perf_counter()
    print("== 1. seconds per fit ==", flush=True)
    for learner in LEARNERS:
        results["fits"][learner] = {}
        for name in DATASETS:
            folds, status = time_cell(learner, name, n_folds, budget)
            mean = {clock: float(np.mean([f["seconds"][clock] for f in folds]))
                    if folds else None for clock in CLOCKS}
            results["fits"][learner][name] = {"folds": folds, "status": status,
                                              "mean": mean}
            shown = f"{mean['wall']:.2f} s" if folds else "-"
            print(f"  {learner:13s} {name:8s} {shown} ({len(folds)} folds, {status})",
                  flush=True)
    print("== 2. VonNeumann / LogDet ==", flush=True)
    results["ratio"] = ratio_experiment(500 if args.quick else RATIO_PAIRS)
    results["total_seconds"] = time.perf_counter() - start
    finish_machine(results["machine"])
    page = markdown(results)
    print("\n" + page)
    print(f"total {results['total_seconds']:.0f} s")
    write_json(out, "speed", results)
    (out / "speed.md").write_text(page)
    print(f"wrote {out / 'speed'}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
