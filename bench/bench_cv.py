"""LogDetCV on the development suite against metric-learn 0.7.0 and scikit-learn's NCA.

Protocol (shared with ``bench_suite.py``): each suite set (``load_suite``, n ≤ 2,000)
is split by ``StratifiedKFold(5, shuffle=True, random_state=0)``; a ``StandardScaler``
is fitted on the training fold, then the learner, then ``KNeighborsClassifier(5)`` in
the learned space gives the test error. ``LogDetCV(random_state=0)`` runs with its
defaults (its own inner 5-fold search over γ and the pair scheme), except that sets
with more than ``MAX_RANK`` features get ``n_components=MAX_RANK`` (a rank-64 metric in
the leading principal directions): a full-rank LogDet costs O(d²) per projection.
The anchors (metric-learn ``ITML_Supervised``, ``LMNN``, ``NCA`` and scikit-learn's
``NeighborhoodComponentsAnalysis``, defaults, ``random_state=0``) run through
``_anchors.run_anchor``; every anchor fold is cached as one JSON file in
``ANCHOR_CACHE`` and reused by every suite benchmark, LogDetCV folds in ``CV_CACHE``.

    python bench/bench_cv.py                     # writes docs/benchmarks/cv.{json,md,png}
    python bench/bench_cv.py --datasets iris wine --out /tmp/cv
    python bench/bench_cv.py --cached-references    # no anchor fits: only cached folds
    python bench/bench_cv.py --quick             # iris and wine, to a scratch directory
"""

import hashlib
import time
import warnings
from pathlib import Path

import numpy as np

from _datasets import SUITE
from _reporting import (finish_machine, machine, machine_line, mean_and_standard_error,
                        parse_arguments, pyplot, write)
from _suite import (ANCHORS, N_SPLITS, anchor_fold, anchor_path, fitted_rank, knn_error,
                    over_budget_path, read_json, scaled_fold, suite_data, write_json)
from psdmetric import LogDetCV

MAX_RANK = 64
CV_CACHE = Path("/tmp/psdmetric_cv_cache")
# Change whenever a change to psdmetric changes what LogDetCV fits: cached folds go stale.
CV_CODE = 5


def cv_learner(n_features):
    n_components = MAX_RANK if n_features > MAX_RANK else None
    return LogDetCV(n_components=n_components, random_state=0)


def cv_fold(name, fold):
    """One outer fold of LogDetCV, from ``CV_CACHE`` or fitted and cached."""
    X_train, X_test, y_train, y_test = scaled_fold(name, fold)
    learner = cv_learner(X_train.shape[1])
    digest = hashlib.sha1(repr((sorted(learner.get_params().items()), CV_CODE)).encode())
    path = CV_CACHE / f"{name}__{fold}__LogDetCV__{digest.hexdigest()[:12]}.json"
    cached = read_json(path)
    if cached is not None:
        return cached
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wall, cpu = time.perf_counter(), time.process_time()
        learner.fit(X_train, y_train)
        fit_seconds, fit_cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    record = {
        "error": knn_error(learner.transform(X_train), y_train,
                           learner.transform(X_test), y_test),
        "fit_seconds": fit_seconds, "fit_cpu_seconds": fit_cpu_seconds,
        "rank": fitted_rank(learner.get_mahalanobis_matrix()),
        "best_params": learner.best_params_, "best_score": learner.best_score_,
        "warnings": sorted({f"{w.category.__name__}: {w.message}"[:160] for w in caught})[:3],
    }
    write_json(path, record)
    return record


def reference_fold(name, fold, method, timeout, cached_only):
    """One reference fold from ``ANCHOR_CACHE``, or fitted (and cached) unless ``cached_only``.

    ``None`` when it is not cached and not fitted (cached only, marked over budget by the
    suite benchmark, or killed after ``timeout`` seconds) or when its fit raised.
    """
    if cached_only or over_budget_path(name, method).exists():
        record = read_json(anchor_path(name, fold, method))
    else:
        record = anchor_fold(name, fold, method, timeout=timeout)
    return None if record is not None and record["error"] is None else record


def summarise(name, records):
    """Per-set comparison: LogDetCV against the best reference learner, on its folds."""
    cv, anchors, euclidean = records["LogDetCV"], records["references"], records["Euclidean"]
    complete = {method: folds for method, folds in anchors.items()
                if any(f is not None for f in folds)}
    row = {"data": name, "Euclidean": mean_and_standard_error(euclidean),
           "LogDetCV": mean_and_standard_error([r["error"] for r in cv])}
    for method, folds in anchors.items():
        errors = [f["error"] for f in folds if f is not None]
        row[method] = {"folds": len(errors), "error": mean_and_standard_error(errors)}
    if not complete:
        row["best_reference"] = None
        return row
    best = min(complete, key=lambda m: mean_and_standard_error(
        [f["error"] for f in complete[m] if f is not None])[0])
    on = [i for i, f in enumerate(complete[best]) if f is not None]
    best_mean, best_se = mean_and_standard_error([complete[best][i]["error"] for i in on])
    ours = float(np.mean([cv[i]["error"] for i in on]))
    row.update(best_reference=best, best_reference_folds=len(on), best_reference_error=best_mean,
               best_reference_se=best_se, cv_error_on_those_folds=ours,
               within_one_se=bool(ours <= best_mean + (0.0 if np.isnan(best_se) else best_se)),
               strictly_better=bool(ours < best_mean))
    lmnn = [i for i, f in enumerate(anchors["LMNN"]) if f is not None]
    if lmnn:
        for unit in ("fit_seconds", "fit_cpu_seconds"):
            row[f"lmnn_{unit}"] = float(np.mean([anchors["LMNN"][i][unit] for i in lmnn]))
            row[f"cv_{unit}"] = float(np.mean([cv[i][unit] for i in lmnn]))
            row[f"time_ratio_{unit}"] = row[f"cv_{unit}"] / row[f"lmnn_{unit}"]
    return row


def percent(mean_se):
    mean, se = mean_se
    if np.isnan(mean):
        return "—"
    return f"{100 * mean:.1f}%" if np.isnan(se) else f"{100 * mean:.1f}% ± {100 * se:.1f}%"


def page(rows, records, info):
    lines = [
        "# LogDetCV against metric-learn and scikit-learn",
        "",
        "Generated by `python bench/bench_cv.py`; every number comes from that run. Raw "
        "numbers: `cv.json`.",
        "",
        machine_line(info),
        "",
        "Protocol: stratified 5-fold cross-validation (shuffled, seed 0) of "
        "`StandardScaler → learner → KNeighborsClassifier(5)`; cells give the test error, "
        "mean ± standard error over the folds. `LogDetCV(random_state=0)` with its defaults "
        "searches γ ∈ {0.01, 0.1, 1} and the pair scheme (random pairs, or each sample's "
        "5 nearest same-class and other-class samples) by an inner stratified 5-fold "
        "cross-validation on the training fold, scored by the 5-NN classifier's mean "
        "predicted probability of the true class on the held-out fold, then refits; sets "
        f"with d > {MAX_RANK} get "
        f"`n_components={MAX_RANK}`. Its fit time includes the whole search and the refit "
        "(one process). Reference learners: metric-learn 0.7.0 and scikit-learn's NCA with their "
        "defaults and `random_state=0`, each in its own process; a set's best reference "
        "learner is the one with the lowest mean error over the folds it finished, and LogDetCV is "
        "compared on those folds (within one standard error: LogDetCV's mean ≤ best "
        "mean + best standard error). Times are means per fold; CPU times count every "
        "thread of the fitting process.",
        "",
        "| data | n × d, classes | Euclidean | LogDetCV | "
        + " | ".join(label for label, _ in ANCHORS.values())
        + " | best reference | within 1 SE | LogDetCV / LMNN time (CPU; wall) |",
        "|---|---|---|---|" + "---|" * len(ANCHORS) + "---|---|---|",
    ]
    for row in rows:
        shape = records[row["data"]]["shape"]
        cells = [row["data"], f"{shape[0]} × {shape[1]}, {shape[2]}",
                 percent(row["Euclidean"]), percent(row["LogDetCV"])]
        for method in ANCHORS:
            entry = row[method]
            cell = percent(entry["error"])
            if 0 < entry["folds"] < N_SPLITS:
                cell += f" [{entry['folds']}/{N_SPLITS} folds]"
            elif entry["folds"] == 0:
                cell = "not run"
            cells.append(cell)
        if row["best_reference"] is None:
            cells += ["—", "—", "—"]
        else:
            cells += [ANCHORS[row["best_reference"]][0],
                      "yes" if row["within_one_se"] else "no"]
            if "time_ratio_fit_cpu_seconds" in row:
                cells.append(
                    f"{row['time_ratio_fit_cpu_seconds']:.2f} ({row['cv_fit_cpu_seconds']:.2f} s"
                    f" / {row['lmnn_fit_cpu_seconds']:.2f} s); "
                    f"{row['time_ratio_fit_seconds']:.2f}")
            else:
                cells.append("—")
        lines.append("| " + " | ".join(cells) + " |")
    compared = [r for r in rows if r["best_reference"] is not None]
    timed = [r for r in compared if "time_ratio_fit_cpu_seconds" in r]
    lines += [
        "",
        f"Within one standard error of the best reference learner on "
        f"{sum(r['within_one_se'] for r in compared)} of {len(compared)} sets with reference "
        f"results, strictly better on {sum(r['strictly_better'] for r in compared)}. "
        f"LogDetCV's CPU time per fit is under 1/5 of LMNN's on "
        f"{sum(r['time_ratio_fit_cpu_seconds'] < 0.2 for r in timed)} of {len(timed)} sets "
        f"with LMNN results (wall time: "
        f"{sum(r['time_ratio_fit_seconds'] < 0.2 for r in timed)} of {len(timed)}).",
        "",
        "Settings LogDetCV chose (γ, n_neighbors) per outer fold:",
        "",
    ]
    for row in rows:
        chosen = ", ".join(f"({r['best_params']['gamma']:g}, {r['best_params']['n_neighbors']})"
                           for r in records[row["data"]]["LogDetCV"])
        lines.append(f"- {row['data']}: {chosen}")
    return "\n".join(lines) + "\n"


def figure(rows):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    compared = [r for r in rows if r["best_reference"] is not None]
    x = [100 * r["best_reference_error"] for r in compared]
    y = [100 * r["cv_error_on_those_folds"] for r in compared]
    ax.scatter(x, y)
    for r, xi, yi in zip(compared, x, y):
        ax.annotate(r["data"], (xi, yi), fontsize=7)
    top = max(x + y + [1.0]) * 1.1
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8)
    ax.set_xlabel("best reference learner 5-NN error (%)")
    ax.set_ylabel("LogDetCV 5-NN error (%)")
    ax.set_title("LogDetCV against the best anchor, per suite set")
    fig.tight_layout()
    return fig


def add_arguments(parser):
    parser.add_argument("--datasets", nargs="+", default=list(SUITE), choices=SUITE)
    parser.add_argument("--anchor-timeout", type=float, default=900.0,
                        help="seconds before an anchor fold that is not cached is killed")
    parser.add_argument("--cached-references", action="store_true",
                        help="fit no anchor: report the folds already cached")


def main(argv=None):
    args, out = parse_arguments(__doc__.splitlines()[0], argv, add_arguments)
    datasets = ["iris", "wine"] if args.quick else args.datasets
    info = machine()
    records = {}
    for name in datasets:
        X, y, folds = suite_data(name)
        records[name] = {"shape": [*X.shape, int(len(np.unique(y)))], "LogDetCV": [],
                         "Euclidean": []}
        for fold in range(len(folds)):
            records[name]["LogDetCV"].append(cv_fold(name, fold))
            X_train, X_test, y_train, y_test = scaled_fold(name, fold)
            records[name]["Euclidean"].append(knn_error(X_train, y_train, X_test, y_test))
            print(f"{name} fold {fold}: LogDetCV {records[name]['LogDetCV'][-1]}", flush=True)
    # Anchors last: the suite benchmark may have cached them meanwhile.
    for name in datasets:
        records[name]["references"] = {}
        for method in ANCHORS:
            cell = []
            for fold in range(N_SPLITS):
                # After a fold that was not cached and could not be fitted, fit no more.
                fit = not args.cached_references and (not cell or cell[-1] is not None)
                cell.append(reference_fold(name, fold, method, args.anchor_timeout,
                                           cached_only=not fit))
            records[name]["references"][method] = cell
        print(f"{name}: anchors done", flush=True)
    rows = [summarise(name, records[name]) for name in datasets]
    finish_machine(info)
    write(out, "cv", {"machine": info, "rows": rows, "records": records},
          page(rows, records, info), figure(rows))


if __name__ == "__main__":
    main()
