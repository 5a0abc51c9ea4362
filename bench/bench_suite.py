"""k-NN error, fit time and fitted rank of every psdmetric learner's defaults on the suite.

The development suite (``_datasets.SUITE``: 14 data sets, n ≤ 2,000, d from 4 to 784,
2 to 32 classes) under the suite protocol (``_suite``): stratified 5-fold
cross-validation (shuffled, seed 0) of ``StandardScaler`` → learner →
``KNeighborsClassifier(5)``. Methods: Euclidean (no learner); every metric learner
exported by psdmetric with its defaults (``random_state=0``); metric-learn 0.7.0's
``ITML_Supervised``, ``LMNN`` and ``NCA`` and scikit-learn's
``NeighborhoodComponentsAnalysis`` with their defaults (``random_state=0``), in the
anchor venv. Every fold is cached (``_suite``), so a rerun only fits what is missing.

Each (method, data set) cell has a budget: a psdmetric cell runs in a child process
killed after ``--budget`` seconds, an anchor cell starts a fold only if one as long as
the slowest so far fits in the budget; a cell that did not finish every fold says so.

    python bench/bench_suite.py            # writes docs/benchmarks/suite.{json,md,png}
    python bench/bench_suite.py --datasets iris wine --out /tmp/suite
    python bench/bench_suite.py --check    # the check sets: docs/benchmarks/check.*

``--check`` runs the same table on ``_datasets.CHECK_SETS``, six sets (d from 8 to 24,
2 to 10 classes) that no choice of a default has seen.
"""

import inspect
import math
import sys
import time

import numpy as np
from sklearn.base import BaseEstimator

import psdmetric
from _datasets import CHECK_SETS, SUITE
from _reporting import (
    finish_machine,
    machine,
    machine_line,
    mean_and_standard_error,
    parse_arguments,
    pyplot,
    run_with_time_limit,
    write,
)
from _suite import (
    ANCHORS,
    N_NEIGHBORS,
    N_SPLITS,
    anchor_cell,
    knn_error,
    learner_fold,
    learner_path,
    over_budget_path,
    read_json,
    scaled_fold,
    suite_data,
)

EUCLIDEAN = "Euclidean"
# Fit CPU time target per fit at n ≤ 2,000 and d ≤ 100.
CPU_TARGET_SECONDS = 2.0
MAX_TARGET_FEATURES = 100


def psdmetric_learners():
    """Metric learners exported by psdmetric: estimator classes with fit and transform."""
    return [name for name in psdmetric.__all__
            if inspect.isclass(candidate := getattr(psdmetric, name))
            and issubclass(candidate, BaseEstimator) and hasattr(candidate, "fit")
            and hasattr(candidate, "transform")]


def build(learner):
    """The learner with its defaults and ``random_state=0``."""
    estimator = getattr(psdmetric, learner)()
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    return estimator


def learner_folds(dataset, learner):
    """Child process: every fold of a learner's defaults (each cached as it finishes)."""
    return [learner_fold(dataset, fold, build(learner)) for fold in range(N_SPLITS)]


def euclidean_folds(dataset):
    records = []
    for fold in range(N_SPLITS):
        X_train, X_test, y_train, y_test = scaled_fold(dataset, fold)
        records.append({"error": knn_error(X_train, y_train, X_test, y_test),
                        "fit_seconds": 0.0, "fit_cpu_seconds": 0.0,
                        "rank": X_train.shape[1]})
    return records


def without_failures(records):
    """The finished folds, status "failed" with the first failure's message, or None."""
    failed = [r["failed"] for r in records if r["error"] is None]
    if failed:
        return [r for r in records if r["error"] is not None], "failed", failed[0]
    return None


def run_cell(dataset, method, family, budget, fit_anchors):
    """The fold records of one (method, data set) cell, its status and a note."""
    if family == "none":
        return euclidean_folds(dataset), "ok", ""
    if family == "reference":
        records = anchor_cell(dataset, method, budget, fit=fit_anchors)
        failure = without_failures(records)
        if failure:
            return failure
        if len(records) < N_SPLITS:
            marker = read_json(over_budget_path(dataset, method))
            return records, "over budget", (f"{marker['budget_seconds']:.0f} s budget"
                                            if marker else "not run")
        return records, "ok", ""
    cached = [read_json(learner_path(dataset, fold, build(method))) for fold in range(N_SPLITS)]
    if all(record is not None for record in cached):
        return cached, "ok", ""
    outcome, value = run_with_time_limit(learner_folds, (dataset, method), budget)
    if outcome == "ok":
        return without_failures(value) or (value, "ok", "")
    # Folds finished before the limit are in the cache.
    finished = [read_json(learner_path(dataset, fold, build(method)))
                for fold in range(N_SPLITS)]
    finished = finished[:next((i for i, r in enumerate(finished) if r is None), N_SPLITS)]
    return finished, "over budget" if outcome == "timeout" else "failed", value


def summarise(cell):
    folds = cell["folds"]
    cell["n_folds_done"] = len(folds)
    cell["error_mean"], cell["error_se"] = mean_and_standard_error([f["error"] for f in folds])
    for key in ("fit_seconds", "fit_cpu_seconds"):
        cell[f"{key}_mean"] = float(np.mean([f[key] for f in folds])) if folds else math.nan
    cell["rank_min"] = min((f["rank"] for f in folds), default=None)
    return cell


def se_or_zero(value):
    return 0.0 if value is None or math.isnan(value) else value


def format_seconds(seconds):
    if seconds < 0.1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 100:
        return f"{seconds:.2f} s"
    return f"{seconds:.0f} s"


def error_text(cell):
    if not cell["folds"]:
        return cell["status"]
    text = f"{cell['error_mean']:.1%} ± {se_or_zero(cell['error_se']):.1%}"
    if cell["n_folds_done"] < N_SPLITS:
        text += f" [{cell['n_folds_done']}/{N_SPLITS}, {cell['status']}]"
    return text


def targets(results):
    """Against Euclidean, against metric-learn and scikit-learn, fitted rank, CPU time."""
    cells = {(c["method"], c["dataset"]): c for c in results["cells"]}
    datasets, learners = results["datasets"], results["learners"]
    anchors = [ANCHORS[key][0] for key in ANCHORS]
    not_worse = {}
    for learner in learners:
        done = [d for d in datasets if cells[learner, d]["n_folds_done"] == N_SPLITS]
        wins = [d for d in done
                if cells[learner, d]["error_mean"] <= cells[EUCLIDEAN, d]["error_mean"] + 1e-12]
        not_worse[learner] = {"not_worse": len(wins), "of": len(done),
                              "worse_on": sorted(set(done) - set(wins))}
    against = []
    for d in datasets:
        # An anchor over budget or failed is compared on the folds it finished (two or more).
        finished = [cells[a, d] for a in anchors if cells[a, d]["n_folds_done"] >= 2]
        if not finished:
            against.append({"dataset": d, "reason": "nothing finished two folds"})
            continue
        theirs = min(finished, key=lambda c: c["error_mean"])
        k = theirs["n_folds_done"]
        ours = [(float(np.mean([f["error"] for f in cells[m, d]["folds"][:k]])), m)
                for m in learners if cells[m, d]["n_folds_done"] >= k]
        if not ours:
            against.append({"dataset": d, "reason": f"no learner finished {k} folds"})
            continue
        error, best = min(ours)
        se = se_or_zero(theirs["error_se"])
        against.append({
            "dataset": d, "folds_compared": k, "best_psdmetric": best,
            "best_psdmetric_error": error,
            "best_reference": theirs["method"], "best_reference_error": theirs["error_mean"],
            "best_reference_se": se,
            "within_one_se": bool(error <= theirs["error_mean"] + se + 1e-12),
            "strictly_better": bool(error < theirs["error_mean"] - 1e-12),
        })
    slow = []
    for c in results["cells"]:
        shape = results["dataset_shapes"][c["dataset"]]
        if (c["family"] == "psdmetric" and shape["n_features"] <= MAX_TARGET_FEATURES
                and any(f["fit_cpu_seconds"] >= CPU_TARGET_SECONDS for f in c["folds"])):
            slow.append({"method": c["method"], "dataset": c["dataset"],
                         "max_fit_cpu_seconds": max(f["fit_cpu_seconds"] for f in c["folds"])})
    low_rank = [{"method": c["method"], "dataset": c["dataset"], "rank": c["rank_min"],
                 "n_features": results["dataset_shapes"][c["dataset"]]["n_features"]}
                for c in results["cells"] if c["family"] == "psdmetric" and c["folds"]
                and c["rank_min"] < min(results["dataset_shapes"][c["dataset"]]["n_features"],
                                        results["dataset_shapes"][c["dataset"]]["n_classes"])]
    return {"not_worse_than_euclidean": not_worse, "against_references": against,
            "over_cpu_target": slow, "rank_below_classes": low_rank}


def markdown(results):
    datasets, shapes = results["datasets"], results["dataset_shapes"]
    methods = list(dict.fromkeys(c["method"] for c in results["cells"]))
    cells = {(c["method"], c["dataset"]): c for c in results["cells"]}
    header = "| method | " + " | ".join(datasets) + " |"
    rule = "|---|" + "---|" * len(datasets)
    if results["check"]:
        title = ["# Check sets: psdmetric's defaults on data no default was chosen on", "",
                 "The defaults were chosen by leave-one-data-set-out on the development "
                 "suite (`defaults.md`, `psdboost_defaults.md`); these sets were added "
                 "afterwards and have not been used to choose anything.", ""]
    else:
        title = ["# The development suite: psdmetric's defaults against Euclidean k-NN, "
                 "metric-learn and scikit-learn", ""]
    lines = [
        *title,
        f"Generated by `{results['command']}`; every number comes from that run "
        f"(cached folds included). Raw numbers: `{results['name']}.json`.",
        "",
        machine_line(results["machine"]),
        "",
        f"Protocol: stratified {N_SPLITS}-fold cross-validation (shuffled, seed 0) of "
        f"`StandardScaler` → learner → `KNeighborsClassifier({N_NEIGHBORS})`, the scaler "
        "fitted on the training fold. Every learner runs with its library's defaults and "
        "`random_state=0`: psdmetric's as released in this version, metric-learn 0.7.0's "
        "`ITML_Supervised`, `LMNN` and `NCA` (in their own venv, scikit-learn < 1.8) and "
        "scikit-learn's `NeighborhoodComponentsAnalysis`. Each cell has a budget of "
        f"{results['budget']:.0f} s; a cell that did not finish every fold says so. "
        "Folds are cached per version of each learner's code, and a cell whose folds are "
        "all cached is read whole, whatever budget the run that fitted them had (a "
        "larger one for some MNIST-5000 cells, the default 600 s for VonNeumannCV's "
        "slowest cells); the fit times below are those folds' own.",
        "",
        "Data (samples × features, classes): "
        + "; ".join(f"{name} {s['n_samples']}×{s['n_features']}, {s['n_classes']}"
                    for name, s in shapes.items())
        + ". Sets with more than 2,000 rows are stratified subsamples of 2,000 "
        "(MNIST-5000 keeps its 784 pixels, scaled to [0, 1]).",
        "",
        "## 5-NN test error (mean ± standard error over the folds)",
        "",
        header, rule,
    ]
    for method in methods:
        lines.append(f"| {method} | " + " | ".join(error_text(cells[method, d])
                                                   for d in datasets) + " |")
    lines += ["", "## Mean fit time per fold: wall (CPU)", "", header, rule]
    for method in methods:
        if method == EUCLIDEAN:
            continue
        lines.append(f"| {method} | " + " | ".join(
            f"{format_seconds(c['fit_seconds_mean'])} ({format_seconds(c['fit_cpu_seconds_mean'])})"
            if (c := cells[method, d])["folds"] else "—" for d in datasets) + " |")
    lines += ["", "## Fitted rank of the metric (smallest over the folds)", "",
              "Eigenvalues of the Mahalanobis matrix above 10⁻⁶ times the largest.", "",
              header, rule]
    for method in methods:
        if method == EUCLIDEAN:
            continue
        lines.append(f"| {method} | " + " | ".join(
            f"{c['rank_min']} / {shapes[d]['n_features']}" if (c := cells[method, d])["folds"]
            else "—" for d in datasets) + " |")
    failures = [c for c in results["cells"] if c["status"] != "ok"]
    if failures:
        lines += ["", "Cells that did not finish every fold:", ""]
        lines += [f"- {c['method']} on {c['dataset']}: {c['status']} — {c['note']}"
                  for c in failures]
    found = results["targets"]
    lines += ["", "## Against Euclidean 5-NN", "",
              "Data sets (all folds finished) on which the learner's mean error is at most "
              "Euclidean's:", "", "| learner | not worse | worse on |", "|---|---|---|"]
    for learner, row in found["not_worse_than_euclidean"].items():
        lines.append(f"| {learner} | {row['not_worse']} of {row['of']} "
                     f"({row['not_worse'] / max(row['of'], 1):.0%}) | "
                     f"{', '.join(row['worse_on']) or '—'} |")
    lines += ["", "## Best psdmetric learner against the best of metric-learn and scikit-learn", "",
              "Best psdmetric learner (lowest mean error, defaults) against the metric-learn "
              "or scikit-learn learner with the lowest mean error; within one standard "
              "error means ours ≤ theirs + their standard error. A learner that ran out "
              "of its budget, or whose fit raised on a later fold, counts with the folds "
              "it finished (at least two), and the psdmetric learners are compared on "
              "those same folds.", "",
              "| data | folds | best psdmetric | error | best other | error ± se | "
              "within one se | strictly better |", "|---|---|---|---|---|---|---|---|"]
    for row in found["against_references"]:
        if "reason" in row:
            lines.append(f"| {row['dataset']} | | | | | | no ({row['reason']}) | |")
            continue
        lines.append(
            f"| {row['dataset']} | {row['folds_compared']} | {row['best_psdmetric']} | "
            f"{row['best_psdmetric_error']:.2%} | "
            f"{row['best_reference']} | {row['best_reference_error']:.2%} ± "
            f"{row['best_reference_se']:.2%} | {'yes' if row['within_one_se'] else '**no**'} | "
            f"{'yes' if row['strictly_better'] else 'no'} |")
    rows = [r for r in found["against_references"] if "reason" not in r]
    lines += ["", f"Within one standard error on {sum(r['within_one_se'] for r in rows)} of "
              f"{len(found['against_references'])} data sets; strictly better on "
              f"{sum(r['strictly_better'] for r in rows)}.", ""]
    lines += ["## Fit time and rank", "",
              f"Fits of a psdmetric learner taking {CPU_TARGET_SECONDS:.0f} s of CPU or more "
              f"on a data set with d ≤ {MAX_TARGET_FEATURES}: "
              + (", ".join(f"{r['method']} on {r['dataset']} ({r['max_fit_cpu_seconds']:.1f} s)"
                           for r in found["over_cpu_target"]) or "none") + ".", "",
              "Fitted metrics of rank below min(d, number of classes): "
              + (", ".join(f"{r['method']} on {r['dataset']} (rank {r['rank']})"
                           for r in found["rank_below_classes"]) or "none") + ".", "",
              f"![error against fit time]({results['name']}.png)", ""]
    return "\n".join(lines)


def plot(results):
    plt = pyplot()
    datasets = results["datasets"]
    columns = min(5, len(datasets) + 1)
    rows = -(-(len(datasets) + 1) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.6 * rows), squeeze=False)
    axes = axes.ravel()
    colours = {"psdmetric": "tab:blue", "reference": "tab:orange"}
    for ax, dataset in zip(axes, datasets):
        for cell in (c for c in results["cells"] if c["dataset"] == dataset and c["folds"]):
            if cell["family"] == "none":
                ax.axhline(cell["error_mean"], color="grey", ls="--", lw=1)
                continue
            ax.errorbar(max(cell["fit_seconds_mean"], 1e-3), cell["error_mean"],
                        yerr=se_or_zero(cell["error_se"]), fmt="o",
                        color=colours[cell["family"]], capsize=2, ms=4)
            ax.annotate(cell["method"].replace("metric-learn ", "ml ")
                        .replace("scikit-learn ", "sk "),
                        (max(cell["fit_seconds_mean"], 1e-3), cell["error_mean"]),
                        fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("mean fit time (s, wall)", fontsize=8)
        ax.set_ylabel(f"{N_NEIGHBORS}-NN test error", fontsize=8)
    for ax in axes[len(datasets):]:
        ax.axis("off")
    handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=label)
               for label, c in (("psdmetric (defaults)", colours["psdmetric"]),
                                ("metric-learn / scikit-learn", colours["reference"]))]
    handles.append(plt.Line2D([], [], ls="--", color="grey", label="Euclidean"))
    axes[len(datasets)].legend(handles=handles, loc="center")
    fig.tight_layout()
    return fig


def main(argv=None):
    def add_arguments(parser):
        parser.add_argument("--datasets", nargs="+", choices=SUITE + CHECK_SETS)
        parser.add_argument("--check", action="store_true",
                            help="run the check sets (default: the suite); writes check.*")
        parser.add_argument("--budget", type=float, default=600.0, metavar="SECONDS",
                            help="time budget per (method, data set) cell (default 600)")
        parser.add_argument("--cached-references", action="store_true",
                            help="fit no metric-learn / scikit-learn learner: use the "
                                 "folds in the anchor cache")

    args, out = parse_arguments(__doc__.splitlines()[0], argv, add_arguments)
    learners = psdmetric_learners()
    methods = ([(EUCLIDEAN, "none", None)]
               + [(name, "psdmetric", name) for name in learners]
               + [(row, "reference", key) for key, (row, _) in ANCHORS.items()])
    available = CHECK_SETS if args.check else SUITE
    unknown = sorted(set(args.datasets or ()) - set(available))
    if unknown:
        raise SystemExit(f"--datasets: {', '.join(unknown)} not among the "
                         f"{'check sets' if args.check else 'suite sets'} (add or drop --check)")
    datasets = [d for d in available if args.datasets is None or d in args.datasets]
    name = "check" if args.check else "suite"
    results = {"machine": machine(), "budget": args.budget, "datasets": datasets,
               "check": args.check, "name": name,
               "learners": learners, "cells": [], "dataset_shapes": {},
               "command": "python bench/bench_suite.py " + " ".join(
                   sys.argv[1:] if argv is None else argv)}
    for dataset in datasets:
        X, y, _ = suite_data(dataset)
        results["dataset_shapes"][dataset] = {
            "n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
            "n_classes": int(len(np.unique(y)))}
        print(f"\n[{dataset}] {X.shape[0]}×{X.shape[1]}, {len(np.unique(y))} classes",
              flush=True)
        for method, family, target in methods:
            start = time.perf_counter()
            records, status, note = run_cell(dataset, target, family, args.budget,
                                             not args.cached_references)
            cell = summarise({"method": method, "family": family, "dataset": dataset,
                              "folds": records, "status": status, "note": note})
            results["cells"].append(cell)
            print(f"  {method:<30} {error_text(cell):<28} rank {cell['rank_min']}  "
                  f"[{time.perf_counter() - start:.0f} s] {note}", flush=True)
    results["targets"] = targets(results)
    finish_machine(results["machine"])
    page = markdown(results)
    print("\n" + page)
    write(out, name, results, page, plot(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
