"""LogDet (ITML) speed: against metric-learn 0.7.0, against the machine's BLAS, at scale.

Measures, in one run:

1. Fit time and k-NN test error of psdmetric's ``LogDet`` and metric-learn 0.7.0's
   ``ITML`` on identical pairs, bounds, slack, prior and tolerance (digits after
   StandardScaler, d=64; MNIST-5000 reduced to 100 PCA dimensions). Target: psdmetric
   at least 10x faster at equal or lower error.
2. Time per LogDet projection against the cost of its 4d² flops at the machine's DGEMV
   rate, measured in the same run. Target: ratio at most 2.5.
3. 100,000 and 1,000,000 constraints on MNIST-5000 at 100 dimensions, one BLAS
   thread, to tol 1e-3: under 5 s and under 60 s (Kulis et al., 2009, §7.2 reports
   11.3 minutes for 100,000). 100,000 also runs without the cyclic driver's
   screening, to show what it buys.

Every time is taken on two clocks: wall (what a user waits) and CPU time of this
process (what the work costs, robust to other jobs on a shared machine).
metric-learn runs in its own venv (see ``_anchors.py``; created on first use).

    python bench/bench_logdet.py            # writes docs/benchmarks/logdet.{json,md,png}
    python bench/bench_logdet.py --quick    # digits only, fewer constraints, scratch dir
    python bench/bench_logdet.py --reuse-metric-learn   # part 1 from the last logdet.json
"""

import json
import statistics
import sys
import warnings

import numpy as np
import psdmetric._logdet
from scipy.linalg.blas import dgemv
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _anchors import run_anchor
from _datasets import knn_error, load
from _reporting import Stopwatch, machine, parse_arguments, pyplot, report, tallied
from psdmetric import LogDet, PairConstraints, pairs_from_labels, squared_distance_bounds
from psdmetric._solvers import cyclic_projections, logdet_sweep, screen_violations

N_NEIGHBORS = 4  # k of the k-NN experiments of Kulis et al., 2009, §7.2
GAMMA, TOL, MAX_ITER = 1.0, 1e-3, 1000
SPEEDUP_TARGET, FLOP_RATIO_TARGET = 10.0, 2.5
# Number of constraints: the wall and CPU seconds a fit should stay under.
LARGE_SECONDS_TARGET = {100_000: 5.0, 1_000_000: 60.0}
CLOCKS = ("wall", "cpu")


def split(name):
    """Stratified 70/30 hold-out split; digits are standardised on the training part."""
    X, y = load(name)
    X_train, X_test, y_train, y_test = train_test_split(
        X.astype(np.float64), y, test_size=0.3, stratify=y, random_state=0)
    if name == "digits":
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    return np.ascontiguousarray(X_train), np.ascontiguousarray(X_test), y_train, y_test


def shared_constraints(X, y, n_constraints):
    """Pairs and squared-distance bounds both libraries fit on.

    Pairs of identical rows are dropped: psdmetric skips them, metric-learn would
    divide by their zero distance. (metric-learn visits the similar pairs first, then
    the dissimilar ones, in a fixed order; psdmetric visits all in a fresh random order
    every cycle.)
    """
    drawn = pairs_from_labels(y, n_constraints, random_state=0)
    distinct = np.any(X[drawn.pairs[:, 0]] != X[drawn.pairs[:, 1]], axis=1)
    bounds = squared_distance_bounds(X, random_state=0)
    return drawn.pairs[distinct], drawn.labels[distinct], bounds


def fit_converged(model, X, **fit_params):
    """Fit ``model``; return its wall/CPU fit seconds and whether it converged."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        with Stopwatch() as watch:
            model.fit(X, **fit_params)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return watch.seconds(), converged


def replay_metric_learn_schedule(X, pairs, labels, bounds, cycles):
    """psdmetric's kernel on metric-learn's schedule: similar pairs, then dissimilar
    pairs, in a fixed order, for ``cycles`` cycles.

    The arithmetic is then the same as metric-learn's, so the matrices must agree to
    rounding: the check that both libraries were given the same problem. Its time is
    psdmetric's cost of exactly metric-learn's work.
    """
    order = np.concatenate([np.flatnonzero(labels == 1), np.flatnonzero(labels == -1)])
    order = order.astype(np.intp)
    targets = np.where(labels == 1, bounds[0], bounds[1])
    direction = labels.astype(np.float64)
    dual = np.zeros(len(pairs))
    B = np.eye(X.shape[1], order="F")
    with Stopwatch() as watch:
        for _ in range(cycles):
            logdet_sweep(X, pairs, direction, targets, dual, B,
                         GAMMA / (GAMMA + 1.0), 1.0 / GAMMA, order)
    return B @ B.T, watch.seconds()


def relative_difference(matrix, reference):
    return float(np.linalg.norm(matrix - reference) / np.linalg.norm(reference))


def against_metric_learn(name, repeats):
    """Target 1: same pairs, bounds, gamma, prior and tol for both libraries."""
    X_train, X_test, y_train, y_test = split(name)
    pairs, labels, bounds = shared_constraints(X_train, y_train, None)
    print(f"\n[{name}] {X_train.shape[0]} train / {X_test.shape[0]} test, "
          f"d={X_train.shape[1]}, {len(pairs)} pairs, squared bounds "
          f"u={bounds[0]:.4g} l={bounds[1]:.4g}", flush=True)

    fits = []
    for _ in range(repeats):
        model = LogDet(gamma=GAMMA, bounds=bounds, tol=TOL, max_iter=MAX_ITER,
                       random_state=0)
        fits.append(fit_converged(model, X_train,
                                  constraints=PairConstraints(pairs, labels)))
    ours = {clock: statistics.median(seconds[clock] for seconds, _ in fits)
            for clock in CLOCKS}
    print(f"  psdmetric LogDet:  {ours['wall']:.3f} s, {model.n_iter_} cycles", flush=True)

    anchor = run_anchor(
        "metric_learn:ITML", X_train, pairs=pairs, pair_labels=labels,
        params={"gamma": GAMMA, "tol": TOL, "max_iter": MAX_ITER, "prior": "identity"},
        fit_params={"bounds": [float(bounds[0]), float(bounds[1])]},
    )
    theirs = {"wall": anchor.fit_seconds, "cpu": anchor.fit_cpu_seconds}
    anchor_cycles = anchor.n_iter + 1  # metric-learn's n_iter_ is the 0-based last cycle
    print(f"  metric-learn ITML: {theirs['wall']:.3f} s, {anchor_cycles} cycles", flush=True)

    replayed, replay_seconds = replay_metric_learn_schedule(
        X_train, pairs, labels, bounds, anchor_cycles)
    print(f"  psdmetric kernel on metric-learn's schedule: {replay_seconds['wall']:.3f} s",
          flush=True)

    errors = {
        "euclidean": knn_error(X_train, y_train, X_test, y_test, N_NEIGHBORS),
        "psdmetric": knn_error(model.transform(X_train), y_train,
                               model.transform(X_test), y_test),
        "metric_learn": knn_error(anchor.transform(X_train), y_train,
                                  anchor.transform(X_test), y_test),
    }
    # Binomial standard error of metric-learn's hold-out error.
    standard_error = float(np.sqrt(errors["metric_learn"] * (1 - errors["metric_learn"])
                                   / len(y_test)))
    speedup = {clock: theirs[clock] / ours[clock] for clock in CLOCKS}
    return {
        "dataset": name,
        "n_train": int(X_train.shape[0]), "n_test": int(X_test.shape[0]),
        "n_features": int(X_train.shape[1]), "n_pairs": int(len(pairs)),
        "n_similar": int((labels == 1).sum()), "bounds_squared": bounds.tolist(),
        "psdmetric": {"fit_seconds": ours, "fit_seconds_all": [s for s, _ in fits],
                      "cycles": int(model.n_iter_), "converged": fits[-1][1]},
        "metric_learn": {"fit_seconds": theirs, "cycles": anchor_cycles,
                         "converged": anchor_cycles < MAX_ITER,
                         "versions": anchor.versions},
        "speedup": speedup,
        "speedup_per_cycle": {clock: speedup[clock] * model.n_iter_ / anchor_cycles
                              for clock in CLOCKS},
        "same_schedule": {
            "seconds": replay_seconds,
            "speedup": {clock: theirs[clock] / replay_seconds[clock] for clock in CLOCKS},
            "metric_relative_difference": relative_difference(replayed, anchor.metric)},
        "knn_test_error": errors,
        "knn_error_standard_error": standard_error,
        "test_points_more_errors": int(round(
            (errors["psdmetric"] - errors["metric_learn"]) * len(y_test))),
        "metric_relative_difference": relative_difference(
            model.get_mahalanobis_matrix(), anchor.metric),
        "target_met": bool(speedup["wall"] >= SPEEDUP_TARGET
                           and errors["psdmetric"] <= errors["metric_learn"]),
        "_data": (X_train, pairs, labels, bounds),
    }


def reused_comparisons(out, datasets):
    """Part 1 as the last full run wrote it into ``logdet.json`` (metric-learn's fits take
    minutes), with the pairs of part 1 rebuilt for part 2."""
    previous = json.loads((out / "logdet.json").read_text())["against_metric_learn"]
    comparisons = [r for r in previous if r["dataset"] in datasets]
    for r in comparisons:
        X_train, _, y_train, _ = split(r["dataset"])
        r["_data"] = (X_train, *shared_constraints(X_train, y_train, None))
    return comparisons


def dgemv_rate(d, calls, repeats):
    """DGEMV flop rate at size d: 2d² flops over the call time less the call overhead.

    The overhead of the Python wrapper is the time of a 1×1 call. Batches of ``calls``
    d×d and 1×1 calls alternate so both see the same load; each clock keeps the best
    of ``repeats`` batches. Measured with one BLAS thread and with the default
    threads; the faster rate is the reference, which makes the target the stricter.
    """
    rng = np.random.default_rng(0)
    operands = {size: (np.asfortranarray(rng.standard_normal((size, size))),
                       rng.standard_normal(size)) for size in (1, d)}
    result = {"d": d, "flops_per_second": {}}
    for label, threads in (("one_thread", 1), ("default_threads", None)):
        best = {(size, clock): np.inf for size in (1, d) for clock in CLOCKS}
        with threadpool_limits(threads, user_api="blas"):
            # Batch 0 only warms caches and the CPU clock.
            for batch in range(repeats + 1):
                for size, (a, x) in operands.items():
                    with Stopwatch() as watch:
                        for _ in range(calls):
                            dgemv(1.0, a, x)
                    for clock, seconds in watch.seconds().items():
                        if batch:
                            best[size, clock] = min(best[size, clock], seconds / calls)
        result[label] = {
            "call_seconds": {clock: best[d, clock] for clock in CLOCKS},
            "overhead_seconds": {clock: best[1, clock] for clock in CLOCKS},
            "flops_per_second": {
                clock: 2 * d * d / max(best[d, clock] - best[1, clock], 1e-12)
                for clock in CLOCKS}}
    for clock in CLOCKS:
        result["flops_per_second"][clock] = max(
            result[label]["flops_per_second"][clock]
            for label in ("one_thread", "default_threads"))
    return result


def projection_cost(X, pairs, labels, bounds, rate, repeats):
    """Target 2: sweep time per projection over a whole fit, against 4d² / DGEMV rate.

    Runs the fit's own driver, screen and kernel (identity prior, full rank: the
    factor is X itself) with every sweep timed; the fit with the least CPU time of
    ``repeats`` counts. A constraint counts as projected when its dual changed;
    visiting one that is satisfied with a zero dual costs only the d² flops of
    ``w = Bᵀv``.
    """
    d = X.shape[1]
    direction = labels.astype(np.float64)
    runs = []
    for _ in range(repeats):
        targets = np.where(labels == 1, bounds[0], bounds[1])
        dual = np.zeros(len(pairs))
        B = np.eye(d, order="F")
        watch, tally = Stopwatch(), {"projections": 0, "visits": 0}

        def sweep(order):
            before = dual[order]
            with watch:
                n_violated = logdet_sweep(X, pairs, direction, targets, dual, B,
                                          GAMMA / (GAMMA + 1.0), 1.0 / GAMMA, order)
            tally["projections"] += int(np.count_nonzero(dual[order] != before))
            tally["visits"] += len(order)
            return n_violated

        def screen():
            return screen_violations(X @ B, pairs, direction, targets)

        with threadpool_limits(1, user_api="blas"):
            cycles = cyclic_projections(sweep, dual, (targets, B), tol=TOL, max_iter=MAX_ITER,
                                        verbose=0, name="LogDet",
                                        random_state=np.random.RandomState(0), screen=screen)
        runs.append((watch.seconds(), tally["projections"], cycles, tally["visits"]))
    seconds, projections, cycles, visits = min(runs, key=lambda run: run[0]["cpu"])
    result = {"d": d, "n_constraints": int(len(pairs)), "cycles": int(cycles),
              "constraints_visited": int(visits), "projections_performed": int(projections),
              "sweep_seconds": seconds, "sweep_seconds_all": [run[0] for run in runs]}
    for clock in CLOCKS:
        flop_seconds = 4 * d * d / rate["flops_per_second"][clock]
        result[clock] = {
            "seconds_per_visit": seconds[clock] / visits,
            "seconds_per_projection": seconds[clock] / projections,
            "four_d2_flops_seconds": flop_seconds,
            "ratio_per_visit": seconds[clock] / visits / flop_seconds,
            "ratio_per_projection": seconds[clock] / projections / flop_seconds,
        }
    result["target_met"] = bool(result["cpu"]["ratio_per_projection"] <= FLOP_RATIO_TARGET)
    return result


def large_scale(n_constraints, screening=True):
    """Target 3: n_constraints pairs on MNIST-5000 (training part), default bounds, one
    BLAS thread; ``screening=False`` runs the full sweeps of the driver before it
    screened."""
    X_train, X_test, y_train, y_test = split("mnist5000")
    with Stopwatch() as watch:
        constraints = pairs_from_labels(y_train, n_constraints, random_state=0)
    model = LogDet(gamma=GAMMA, tol=TOL, max_iter=MAX_ITER, random_state=0)
    with threadpool_limits(1, user_api="blas"), \
            tallied(psdmetric._logdet, screening) as tally:
        seconds, converged = fit_converged(model, X_train, constraints=constraints)
    limit = LARGE_SECONDS_TARGET.get(n_constraints)
    return {
        "n_train": int(X_train.shape[0]), "n_features": int(X_train.shape[1]),
        "n_constraints": int(len(constraints.pairs)), "tol": TOL, "screening": screening,
        "pair_generation_seconds": watch.seconds(), "fit_seconds": seconds,
        "n_iter": int(model.n_iter_), "converged": converged, **tally,
        "active_at_end": int(np.count_nonzero(model.dual_coef_)),
        "knn_test_error": {
            "euclidean": knn_error(X_train, y_train, X_test, y_test, N_NEIGHBORS),
            "psdmetric": knn_error(model.transform(X_train), y_train,
                                   model.transform(X_test), y_test, N_NEIGHBORS)},
        "seconds_target": limit,
        "target_met": None if limit is None or not screening else bool(
            converged and max(seconds.values()) < limit),
    }


def fmt_load(load):
    return ", ".join(f"{x:.2f}" for x in load)


def yes(flag):
    return "yes" if flag else "no"


def met(flag):
    return "yes" if flag else "**no**"


def summary(results):
    """One line per target: the measured number and whether it is met."""
    parts = []
    for r in results["against_metric_learn"]:
        e = r["knn_test_error"]
        fewer = r["metric_learn"]["cycles"] / r["psdmetric"]["cycles"]
        parts.append(
            f"{r['dataset']} {r['speedup']['wall']:.0f}× "
            f"({r['speedup_per_cycle']['wall']:.1f}× cheaper cycles × {fewer:.0f}× fewer "
            f"cycles; {r['same_schedule']['speedup']['wall']:.1f}× on equal work), error "
            f"{e['psdmetric']:.2%} vs {e['metric_learn']:.2%} "
            f"({r['test_points_more_errors']:+d} test points, SE "
            f"{r['knn_error_standard_error']:.2%}): {met(r['target_met'])}")
    lines = ["- ≥10× faster than metric-learn at equal or lower error (wall): "
             + "; ".join(parts) + "."]
    parts = [f"d={r['d']} {r['cpu']['ratio_per_projection']:.2f} per projection "
             f"({r['cpu']['ratio_per_visit']:.2f} per visit): {met(r['target_met'])}"
             for r in results["projection_cost"]]
    lines.append(f"- time per projection ≤ {FLOP_RATIO_TARGET}× its 4d² flops at the DGEMV "
                 "rate (CPU): " + "; ".join(parts) + ".")
    for r in results["large_scale"]:
        if r["target_met"] is None:
            continue
        lines.append(
            f"- {r['n_constraints']:,} constraints on MNIST-5000 converge in "
            f"< {r['seconds_target']:.0f} s (wall and CPU, one BLAS thread): "
            f"{r['fit_seconds']['wall']:.1f} s wall, {r['fit_seconds']['cpu']:.1f} s CPU, "
            f"{r['n_iter']} cycles, converged: {yes(r['converged'])}: {met(r['target_met'])}.")
    return lines


def markdown(results):
    """The results page, written from the numbers of this run only."""
    m = results["machine"]
    busy = max(m["load_average_start"][0], m["load_average_end"][0]) > 0.5
    lines = [
        "# LogDet (ITML) performance",
        "",
        "Generated by `python bench/bench_logdet.py"
        + (" --reuse-metric-learn`; part 1 comes from an earlier run, every other "
           "number from one run of that script." if results.get("metric_learn_reused")
           else "`; every number below comes from one run of that script.")
        + " Raw numbers, with both clocks everywhere: `logdet.json`.",
        "",
        f"Machine: {m['cpu']}, {m['logical_cpus']} logical CPUs, BLAS "
        + ", ".join(f"{b['internal_api']} {b['version']} ({b['architecture']})"
                    for b in m["blas"])
        + f"; Python {m['python']}, numpy {m['numpy']}. Load average (1, 5, 15 min) at "
        f"start {fmt_load(m['load_average_start'])}, at end "
        f"{fmt_load(m['load_average_end'])}: "
        + ("the machine was shared with other jobs, so wall times are pessimistic; "
           "CPU times (this process only) are the load-robust measure."
           if busy else "the machine was quiet."),
        "",
        "## Summary",
        "",
        *summary(results),
        "",
        *metric_learn_section(results),
        *projection_section(results),
        *large_scale_section(results),
    ]
    return "\n".join(lines)


def metric_learn_section(results):
    """Part 1 of the page: the comparison with metric-learn's ITML."""
    lines = [
        "## 1. Against metric-learn 0.7.0 ITML",
        "",
        *(["This part is copied from an earlier full run of the script (before the "
           "cyclic driver screened its constraints; metric-learn's fits take minutes); "
           "parts 2 and 3 are from this run.", ""]
          if results.get("metric_learn_reused") else []),
        "Both libraries fit the same pairs (40c² drawn from the training labels, pairs "
        "of identical points dropped), the same squared-distance bounds (5th/95th "
        f"percentiles of the training data), gamma={GAMMA}, identity prior and "
        f"tol={TOL} on the same ITML dual-change criterion, max_iter={MAX_ITER}. "
        "metric-learn runs `ITML.fit(pairs, labels, bounds=...)` in its own venv "
        "(scikit-learn < 1.8), timed around the `fit` call only; psdmetric runs "
        f"`LogDet(...).fit(X, constraints=PairConstraints(...))`, median of "
        f"{results['repeats']} fits. The two differ in one design choice: metric-learn "
        "visits the similar pairs, then the dissimilar pairs, in a fixed order; "
        "psdmetric visits all pairs in a fresh random order every cycle. Speed-up per "
        "cycle compares the cost of one pass, whatever the number of passes. To check "
        "that both got the same problem, psdmetric's kernel is also run on "
        "metric-learn's exact schedule for metric-learn's number of cycles: the "
        "matrices must agree to rounding, and its time is psdmetric's cost of exactly "
        "metric-learn's work (equal-work speed-up). Error: "
        f"{N_NEIGHBORS}-NN on a stratified 30% hold-out, in the learned space.",
        "",
        "| data | d | pairs | psdmetric fit (s) | metric-learn fit (s) | speed-up "
        "(wall / CPU) | cycles (ours / theirs) | converged (ours / theirs) | speed-up "
        "per cycle (wall / CPU) | our kernel on their schedule (s) | equal-work "
        "speed-up (wall / CPU) | its ‖M−M_ml‖/‖M_ml‖ |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["against_metric_learn"]:
        s, c, same = r["speedup"], r["speedup_per_cycle"], r["same_schedule"]
        lines.append(
            f"| {r['dataset']} | {r['n_features']} | {r['n_pairs']} | "
            f"{r['psdmetric']['fit_seconds']['wall']:.3f} | "
            f"{r['metric_learn']['fit_seconds']['wall']:.2f} | "
            f"{s['wall']:.0f}× / {s['cpu']:.0f}× | {r['psdmetric']['cycles']} / "
            f"{r['metric_learn']['cycles']} | {yes(r['psdmetric']['converged'])} / "
            f"{yes(r['metric_learn']['converged'])} | {c['wall']:.1f}× / {c['cpu']:.1f}× | "
            f"{same['seconds']['wall']:.2f} | {same['speedup']['wall']:.1f}× / "
            f"{same['speedup']['cpu']:.1f}× | {same['metric_relative_difference']:.1e} |")
    lines += [
        "",
        f"k-NN test error ({N_NEIGHBORS}-NN on the hold-out points; SE is the binomial "
        "standard error of metric-learn's error):",
        "",
        "| data | Euclidean | psdmetric | metric-learn | psdmetric − metric-learn "
        "(test points) | SE | ‖M−M_ml‖/‖M_ml‖ | ≥10× faster (wall), error ≤ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results["against_metric_learn"]:
        e = r["knn_test_error"]
        lines.append(
            f"| {r['dataset']} | {e['euclidean']:.2%} | {e['psdmetric']:.2%} | "
            f"{e['metric_learn']:.2%} | {r['test_points_more_errors']:+d} of {r['n_test']} | "
            f"{r['knn_error_standard_error']:.2%} | {r['metric_relative_difference']:.2f} | "
            f"{met(r['target_met'])} |")
    return lines


def projection_section(results):
    """Part 2 of the page: time per projection against the DGEMV rate."""
    lines = []
    lines += [
        "",
        "## 2. Time per projection against 4d² flops at the DGEMV rate",
        "",
        "A LogDet projection needs `w = Bᵀv` (d² flops, B triangular) and CHOLUPDATEMULT "
        "(3d² flops). The DGEMV rate is measured in the same run with "
        "`scipy.linalg.blas.dgemv` on a d×d matrix: 2d² flops over the call time minus "
        "the time of a 1×1 call (the Python wrapper's overhead), best of several "
        "batches, the faster of one BLAS thread and the default threads. The sweep "
        "(`psdmetric._solvers.logdet_sweep`, driven by the fit's own "
        "`cyclic_projections` and screen) is timed over every cycle of a fit on the "
        "pairs of part 1 and divided by the projections performed (constraints whose "
        "dual changed) and by the constraints visited (those the screen kept; a visit "
        "that projects nothing still costs `w = Bᵀv`). The ratio is judged on CPU "
        "time, which on a quiet machine equals wall time.",
        "",
        "| d | clock | DGEMV rate (GFlop/s) | 4d² at that rate (µs) | cycles | visits | "
        "projections | µs per visit | µs per projection | ratio per visit | "
        f"ratio per projection | ≤{FLOP_RATIO_TARGET} (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["projection_cost"]:
        rate = next(x for x in results["dgemv"] if x["d"] == r["d"])
        for clock in CLOCKS:
            t = r[clock]
            lines.append(
                f"| {r['d']} | {clock} | {rate['flops_per_second'][clock] / 1e9:.2f} | "
                f"{t['four_d2_flops_seconds'] * 1e6:.2f} | {r['cycles']} | "
                f"{r['constraints_visited']} | {r['projections_performed']} | "
                f"{t['seconds_per_visit'] * 1e6:.2f} | "
                f"{t['seconds_per_projection'] * 1e6:.2f} | {t['ratio_per_visit']:.2f} | "
                f"{t['ratio_per_projection']:.2f} | "
                f"{met(r['target_met']) if clock == 'cpu' else ''} |")
    lines += ["", "DGEMV calls, wall clock (µs per call including the wrapper):", ""]
    for rate in results["dgemv"]:
        parts = []
        for label in ("one_thread", "default_threads"):
            x = rate[label]
            parts.append(
                f"{label.replace('_', ' ')} {x['call_seconds']['wall'] * 1e6:.2f} µs "
                f"(overhead {x['overhead_seconds']['wall'] * 1e6:.2f} µs, "
                f"{x['flops_per_second']['wall'] / 1e9:.2f} GFlop/s)")
        lines.append(f"- d={rate['d']}: " + "; ".join(parts))
    return lines


def large_scale_section(results):
    """Part 3 of the page: 100,000 and 1,000,000 constraints on MNIST-5000."""
    runs = results["large_scale"]
    r = runs[0]
    lines = [
        "",
        f"## 3. Many constraints on MNIST-5000 at {r['n_features']} dimensions",
        "",
        f"`LogDet(gamma={GAMMA}, tol={TOL})` with its default bounds (5th/95th "
        f"percentiles of squared distances) on the {r['n_train']} training points, pairs "
        "drawn at random from the labels, one BLAS thread; Kulis, Sustik & Dhillon "
        "(2009), §7.2 report 11.3 minutes for 100,000 constraints (60,000 deskewed "
        "MNIST points, gamma cross-validated, 2009 hardware). Screening: each cycle "
        "projects only the constraints violated or with a nonzero dual at a screen of "
        "all of them (one matrix product); 'no' runs full sweeps. 'swept': constraints "
        "handed to the projections over the fit; 'projected': those whose dual changed; "
        "'active': nonzero duals at the end.",
        "",
        "| constraints | screening | fit wall (s) | fit CPU (s) | cycles | swept | "
        "projected | active | converged | pair generation (s) | k-NN error Euclidean | "
        "psdmetric | under the time (wall and CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        target = "" if r["target_met"] is None else (
            f"< {r['seconds_target']:.0f} s: {met(r['target_met'])}")
        lines.append(
            f"| {r['n_constraints']:,} | {yes(r['screening'])} | "
            f"{r['fit_seconds']['wall']:.2f} | {r['fit_seconds']['cpu']:.2f} | {r['n_iter']} | "
            f"{r['swept']:,} | {r['projected']:,} | {r['active_at_end']:,} | "
            f"{yes(r['converged'])} | {r['pair_generation_seconds']['wall']:.2f} | "
            f"{r['knn_test_error']['euclidean']:.2%} | "
            f"{r['knn_test_error']['psdmetric']:.2%} | {target} |")
    lines += ["", "![fit time and per-projection cost](logdet.png)", ""]
    return lines


def plot(results):
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(11, 4.2))
    runs = results["against_metric_learn"]
    x = np.arange(len(runs))
    bars = [("psdmetric LogDet", lambda r: r["psdmetric"]["fit_seconds"]["wall"],
             lambda r: r["psdmetric"]["cycles"]),
            ("psdmetric kernel, metric-learn's schedule",
             lambda r: r["same_schedule"]["seconds"]["wall"],
             lambda r: r["metric_learn"]["cycles"]),
            ("metric-learn 0.7.0 ITML", lambda r: r["metric_learn"]["fit_seconds"]["wall"],
             lambda r: r["metric_learn"]["cycles"])]
    for k, (label, seconds, cycles) in enumerate(bars):
        heights = [seconds(r) for r in runs]
        left.bar(x + (k - 1) * 0.27, heights, 0.27, label=label)
        for i, r in enumerate(runs):
            left.text(i + (k - 1) * 0.27, heights[i], str(cycles(r)), ha="center",
                      va="bottom", fontsize=8)
    left.set_xticks(x, [f"{r['dataset']} (d={r['n_features']})" for r in runs])
    left.set_yscale("log")
    left.set_ylim(top=20 * max(r["metric_learn"]["fit_seconds"]["wall"] for r in runs))
    left.set_ylabel("fit time, wall (s)")
    left.set_title("Same pairs, bounds, gamma and tol (bar labels: cycles)")
    left.legend(loc="upper left", fontsize=8)
    costs = results["projection_cost"]
    x = np.arange(len(costs))
    bars = [("four_d2_flops_seconds", "4d² flops at DGEMV rate"),
            ("seconds_per_projection", "per projection performed"),
            ("seconds_per_visit", "per constraint visited")]
    for k, (key, label) in enumerate(bars):
        right.bar(x + (k - 1) * 0.27, [c["cpu"][key] * 1e6 for c in costs], 0.27,
                  label=label)
    right.set_xticks(x, [f"d={c['d']}" for c in costs])
    right.set_ylim(top=1.4 * max(c["cpu"]["seconds_per_projection"] * 1e6 for c in costs))
    right.set_ylabel("CPU µs")
    right.set_title("Cost of one LogDet projection")
    right.legend(loc="upper left")
    fig.tight_layout()
    return fig


def main(argv=None):
    def reuse_option(parser):
        parser.add_argument("--reuse-metric-learn", action="store_true",
                            help="take part 1 from the last logdet.json in the output "
                                 "directory")

    args, out = parse_arguments(__doc__.splitlines()[0], argv, reuse_option)
    datasets = ["digits"] if args.quick else ["digits", "mnist5000"]
    repeats = 1 if args.quick else 3
    results = {"machine": machine(), "repeats": repeats, "quick": args.quick,
               "metric_learn_reused": args.reuse_metric_learn}
    print(f"load average at start: {fmt_load(results['machine']['load_average_start'])}")

    if args.reuse_metric_learn:
        comparisons = reused_comparisons(out, datasets)
    else:
        print("\n== 1. against metric-learn 0.7.0 ITML ==")
        comparisons = [against_metric_learn(name, repeats) for name in datasets]

    print("\n== 2. time per projection vs 4d² flops at the DGEMV rate ==", flush=True)
    results["dgemv"] = [dgemv_rate(r["n_features"], 10_000, 4 + 2 * repeats)
                        for r in comparisons]
    results["projection_cost"] = [projection_cost(*r["_data"], rate, repeats)
                                  for r, rate in zip(comparisons, results["dgemv"])]
    for r in results["projection_cost"]:
        t = r["cpu"]
        print(f"  d={r['d']}: {t['seconds_per_projection'] * 1e6:.2f} CPU µs per projection "
              f"({r['projections_performed']} of {r['constraints_visited']} visits), "
              f"4d²/rate = {t['four_d2_flops_seconds'] * 1e6:.2f} µs, ratio "
              f"{t['ratio_per_projection']:.2f} (per visit {t['ratio_per_visit']:.2f})")

    sizes = ([(20_000, True), (20_000, False)] if args.quick else
             [(100_000, True), (100_000, False), (1_000_000, True)])
    results["large_scale"] = []
    for n_large, screening in sizes:
        print(f"\n== 3. {n_large:,} constraints on MNIST-5000, d=100, screening "
              f"{screening} ==", flush=True)
        r = large_scale(n_large, screening)
        results["large_scale"].append(r)
        print(f"  {r['fit_seconds']['wall']:.2f} s wall, {r['fit_seconds']['cpu']:.2f} s CPU, "
              f"{r['n_iter']} cycles, {r['swept']:,} swept, {r['projected']:,} projected, "
              f"converged={r['converged']}, {N_NEIGHBORS}-NN error "
              f"{r['knn_test_error']['psdmetric']:.2%} "
              f"(Euclidean {r['knn_test_error']['euclidean']:.2%})", flush=True)

    for r in comparisons:
        del r["_data"]
    results["against_metric_learn"] = comparisons
    report(out, "logdet", results, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
