"""LMNN against metric-learn 0.7.0's LMNN: 5-NN error, CPU per fit, scale, defaults.

Weinberger & Saul (2009)'s large-margin nearest-neighbour learner, ``psdmetric.LMNN``,
under the suite protocol (``_folds``: stratified 5-fold, ``StandardScaler`` → learner
→ 5-NN) on the 14 suite and 6 check sets. metric-learn 0.7.0's ``LMNN`` (its own venv,
scikit-learn < 1.8) is read from the suite and check pages' JSON, which hold its folds
(same folds, fitted within those pages' budgets); it is refitted here on one fold of
two sets for a CPU ratio measured in the same run. Also:

- the defaults (``n_neighbors``, ``init`` among ``"pca"``, ``"lda"`` and ``"auto"``, which
  is LDA from three classes and PCA with two, ``tol``, ``mu``) chosen by leave-one-data-set-out
  over the 12 suite sets with d ≤ 100, scored by the mean log error ratio against
  Euclidean 5-NN as in ``bench_defaults.py``;
- ``n_components`` (all features, or ``"auto"``: the 100 leading principal axes above
  100 features) chosen by leave-one-data-set-out over the sets with more than 100
  features: the suite's mnist5000 and tissue_gene_expression and the three
  ``WIDE_SETS``;
- MNIST-5000 at all 784 pixels (all 5,000 rows): CPU and wall seconds of a fit, and
  5-NN error on a stratified 80/20 split;
- a synthetic set of n = 50,000, d = 50 (``make_classification``: 5 classes, 10
  informative and 10 redundant features): CPU seconds and peak resident memory of a
  fit in a child process (``ru_maxrss``), and 5-NN error on 10,000 held-out samples.

    python bench/bench_lmnn.py            # writes docs/benchmarks/lmnn.{json,md,png}
    python bench/bench_lmnn.py --quick    # two sets, small scale runs; scratch directory
"""

import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import psdmetric
from _datasets import CHECK_SETS, SUITE, WIDE_SETS, load_mnist5000
from _folds import N_SPLITS, euclidean_folds, kfold_cell, learner_fold, scaled_fold
from _harness import Case, knn_error, main, run_anchor
from _reporting import log_error_ratio

PAGES = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
DEFAULT_SETS = tuple(name for name in SUITE if name not in ("mnist5000", "tissue_gene_expression"))
# init="auto": "lda" from three classes, "pca" with two (a single discriminant axis).
GRID = ([{"n_neighbors": k, "init": init, "tol": 1e-2, "mu": 0.5}
         for k in (3, 5) for init in ("pca", "lda", "auto")]
        + [{"n_neighbors": 3, "init": "pca", "tol": 1e-3, "mu": 0.5}])
# n_components="auto" acts above 100 features: chosen on every set that has them.
COMPONENT_SETS = ("mnist5000", "tissue_gene_expression", *WIDE_SETS)
COMPONENT_GRID = [{"n_components": None}, {"n_components": "auto"}]
# metric-learn refitted on fold 0 of these, in this run, for the CPU ratio.
RATIO_SETS = ("fgl", "oj")


def reference_cells():
    """metric-learn's LMNN and every method's cell per set, from the suite and check pages."""
    cells = {}
    for page in ("suite", "check"):
        for cell in json.loads((PAGES / f"{page}.json").read_text())["cells"]:
            cells[cell["method"], cell["dataset"]] = cell
    return cells


def summary(cell):
    keep = ("status", "note", "n_folds_done", "error_mean", "error_se", "fit_cpu_seconds_mean",
            "fit_seconds_mean")
    return {key: cell.get(key) for key in keep} | {
        "errors": [fold["error"] for fold in cell["folds"]],
        "cpu": [fold.get("fit_cpu_seconds") for fold in cell["folds"]]}


def compare(datasets, budget):
    """psdmetric.LMNN's cell per set beside metric-learn's and the best of each library."""
    stored, rows = reference_cells(), []
    for name in datasets:
        cell = kfold_cell(name, psdmetric.LMNN(), budget)
        # metric-learn's folds run past a page's budget (mnist5000) may be in the cache.
        cached = kfold_cell(name, "LMNN", budget, fit_anchors=False)
        if cached["n_folds_done"] > stored[("metric-learn LMNN", name)]["n_folds_done"]:
            stored[("metric-learn LMNN", name)] = cached
        others = {method: c for (method, dataset), c in stored.items() if dataset == name
                  and c.get("error_mean") is not None and c.get("n_folds_done") == N_SPLITS}
        reference = {m: c for m, c in others.items()
                     if m.startswith(("metric-learn", "scikit-learn"))}
        ours = {m: c for m, c in others.items() if m not in reference and m != "Euclidean"}
        ours["LMNN"] = cell
        best_ref = min(reference, key=lambda m: reference[m]["error_mean"], default=None)
        best_ours = min(ours, key=lambda m: ours[m]["error_mean"])
        rows.append({
            "dataset": name, "lmnn": summary(cell),
            "metric_learn": summary(stored[("metric-learn LMNN", name)]),
            "euclidean": summary(stored[("Euclidean", name)]),
            "best_reference": best_ref and {"method": best_ref, **summary(reference[best_ref])},
            "best_psdmetric": {"method": best_ours, **summary(ours[best_ours])},
        })
        print(f"{name:24s} LMNN {cell['error_mean']:.4f} ± {cell['error_se']:.4f} "
              f"cpu {cell['fit_cpu_seconds_mean']:.2f} s", flush=True)
    return rows


def speed_ratio(datasets):
    """CPU of one fold of metric-learn's LMNN and of psdmetric's, fitted in this run."""
    rows = []
    for name in datasets:
        X_train, X_test, y_train, y_test = scaled_fold(name, 0)
        reference = run_anchor("metric_learn:LMNN", X_train, y_train,
                               params={"random_state": 0})
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = psdmetric.LMNN().fit(X_train, y_train)
        cpu = time.process_time() - start
        rows.append({"dataset": name, "metric_learn_cpu": reference.fit_cpu_seconds,
                     "metric_learn_wall": reference.fit_seconds, "lmnn_cpu": cpu,
                     "metric_learn_error": knn_error(reference.transform(X_train), y_train,
                                                     reference.transform(X_test), y_test),
                     "lmnn_error": knn_error(model.transform(X_train), y_train,
                                             model.transform(X_test), y_test)})
        print(rows[-1], flush=True)
    return rows


def defaults(datasets, grid):
    """Every setting's score per set and the leave-one-data-set-out choice."""
    euclidean = {name: [f["error"] for f in euclidean_folds(name)] for name in datasets}
    scores, cpu = [], []
    for setting in grid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            folds = {name: [learner_fold(name, fold, psdmetric.LMNN(**setting))
                            for fold in range(N_SPLITS)] for name in datasets}
        scores.append({name: log_error_ratio([f["error"] for f in folds[name]], euclidean[name])
                       for name in datasets})
        cpu.append(float(np.mean([f["fit_cpu_seconds"] for name in datasets
                                  for f in folds[name]])))
        print(setting, f"{np.mean(list(scores[-1].values())):+.4f}", flush=True)
    held_out = {}
    for name in datasets:
        others = [d for d in datasets if d != name]
        chosen = min(range(len(grid)), key=lambda s: np.mean([scores[s][d] for d in others]))
        held_out[name] = {"setting": chosen, "score": scores[chosen][name]}
    overall = min(range(len(grid)), key=lambda s: np.mean(list(scores[s].values())))
    return {"grid": grid, "scores": scores, "mean_cpu": cpu, "held_out": held_out,
            "chosen": overall}


def mnist_784(n_rows):
    """A default fit on MNIST-5000's 784 pixels: all rows timed, 80/20 split scored."""
    from sklearn.model_selection import train_test_split

    X, y = load_mnist5000(n_components=None)
    if n_rows < len(X):
        X, _, y, _ = train_test_split(X, y, train_size=n_rows, stratify=y, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wall, cpu = time.perf_counter(), time.process_time()
        model = psdmetric.LMNN().fit(X, y)
        timing = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "n_iter": model.n_iter_, "warnings": sorted({str(w.message)[:120]
                                                               for w in caught})}
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y,
                                                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        split = psdmetric.LMNN().fit(X_train, y_train)
    return {"n_samples": len(X), "n_features": X.shape[1], **timing,
            "euclidean_error": knn_error(X_train, y_train, X_test, y_test),
            "lmnn_error": knn_error(split.transform(X_train), y_train,
                                    split.transform(X_test), y_test)}


_CHILD = """
import json, resource, sys, time, warnings
import numpy as np
from sklearn.datasets import make_classification
from sklearn.neighbors import KNeighborsClassifier
from psdmetric import LMNN
n = int(sys.argv[1])
X, y = make_classification(n_samples=n + 10000, n_features=50, n_informative=10,
                           n_redundant=10, n_classes=5, random_state=0)
X = (X - X[:n].mean(axis=0)) / X[:n].std(axis=0)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wall, cpu = time.perf_counter(), time.process_time()
    model = LMNN().fit(X[:n], y[:n])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
error = lambda Z: 1.0 - KNeighborsClassifier(5).fit(Z[:n], y[:n]).score(Z[n:], y[n:])
print(json.dumps({"n_samples": n, "n_features": 50, "cpu": cpu, "wall": wall,
                  "n_iter": model.n_iter_, "peak_rss_mb": peak / 1024,
                  "rss_before_fit_mb": base / 1024,
                  "warnings": sorted({str(w.message)[:120] for w in caught}),
                  "euclidean_error": error(X), "lmnn_error": error(model.transform(X))}))
"""


def synthetic(n_samples):
    """The 50,000 × 50 fit in a child process, whose peak resident memory is the fit's."""
    output = subprocess.run([sys.executable, "-c", _CHILD, str(n_samples)], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def cases(args):
    datasets = (*SUITE, *CHECK_SETS)
    return [
        Case("defaults", protocol=defaults, params={"datasets": DEFAULT_SETS, "grid": GRID},
             quick={"datasets": ("iris", "wine"), "grid": GRID[:2]}),
        Case("components", protocol=defaults,
             params={"datasets": COMPONENT_SETS, "grid": COMPONENT_GRID},
             quick={"datasets": WIDE_SETS[:2], "grid": COMPONENT_GRID}),
        Case("sets", protocol=compare, params={"datasets": datasets, "budget": args.budget},
             quick={"datasets": ("iris", "wine"), "budget": args.budget}),
        Case("speed_ratio", protocol=speed_ratio, params={"datasets": RATIO_SETS},
             quick={"datasets": ("iris",)}),
        Case("mnist_784", protocol=mnist_784, params={"n_rows": 5000},
             quick={"n_rows": 500}),
        Case("synthetic", protocol=synthetic, params={"n_samples": 50_000},
             quick={"n_samples": 2_000}),
    ]


if __name__ == "__main__":
    sys.exit(main("lmnn", cases, blas_threads=1))
