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
import psdmetric._bregman._logdet as logdet_module
from scipy.linalg.blas import dgemv
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _datasets import load
from _harness import Case, knn_error, main, run_anchor
from _render.logdet import CLOCKS, FLOP_RATIO_TARGET, GAMMA, MAX_ITER, N_NEIGHBORS, TOL
from _reporting import Stopwatch, tallied
from psdmetric import LogDet, PairConstraints, pairs_from_labels, squared_distance_bounds
from psdmetric._bregman._logdet_kernels import logdet_sweep
from psdmetric._core import cyclic_projections, screen_violations

SPEEDUP_TARGET = 10.0
# Number of constraints: the wall and CPU seconds a fit should stay under.
LARGE_SECONDS_TARGET = {100_000: 5.0, 1_000_000: 60.0}


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
    }


def part_one_data(name):
    """The training points and the pairs of part 1 on ``name``, for part 2."""
    X_train, _, y_train, _ = split(name)
    return (X_train, *shared_constraints(X_train, y_train, None))


def previous_comparisons(out, datasets):
    """Part 1 as the last full run wrote it into ``logdet.json`` (metric-learn's fits take
    minutes)."""
    previous = json.loads((out / "logdet.json").read_text())["against_metric_learn"]
    return [r for r in previous if r["dataset"] in datasets]


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


def rates(repeats, results):
    """The DGEMV rate at every d of part 1."""
    return [dgemv_rate(r["n_features"], 10_000, 4 + 2 * repeats)
            for r in results["against_metric_learn"]]


def projection_costs(repeats, results):
    """Part 2 on the pairs of part 1, against the rates of ``rates``."""
    costs = [projection_cost(*part_one_data(r["dataset"]), rate, repeats)
             for r, rate in zip(results["against_metric_learn"], results["dgemv"])]
    for r in costs:
        t = r["cpu"]
        print(f"  d={r['d']}: {t['seconds_per_projection'] * 1e6:.2f} CPU µs per projection "
              f"({r['projections_performed']} of {r['constraints_visited']} visits), "
              f"4d²/rate = {t['four_d2_flops_seconds'] * 1e6:.2f} µs, ratio "
              f"{t['ratio_per_projection']:.2f} (per visit {t['ratio_per_visit']:.2f})")
    return costs


def large_scale_runs(sizes):
    """Part 3 at each ``(n_constraints, screening)``."""
    runs = []
    for n_large, screening in sizes:
        print(f"\n== 3. {n_large:,} constraints on MNIST-5000, d=100, screening "
              f"{screening} ==", flush=True)
        r = large_scale(n_large, screening)
        runs.append(r)
        print(f"  {r['fit_seconds']['wall']:.2f} s wall, {r['fit_seconds']['cpu']:.2f} s CPU, "
              f"{r['n_iter']} cycles, {r['swept']:,} swept, {r['projected']:,} projected, "
              f"converged={r['converged']}, {N_NEIGHBORS}-NN error "
              f"{r['knn_test_error']['psdmetric']:.2%} "
              f"(Euclidean {r['knn_test_error']['euclidean']:.2%})", flush=True)
    return runs


def large_scale(n_constraints, screening=True):
    """Target 3: n_constraints pairs on MNIST-5000 (training part), default bounds, one
    BLAS thread; ``screening=False`` runs the full sweeps of the driver before it
    screened."""
    X_train, X_test, y_train, y_test = split("mnist5000")
    with Stopwatch() as watch:
        constraints = pairs_from_labels(y_train, n_constraints, random_state=0)
    model = LogDet(gamma=GAMMA, tol=TOL, max_iter=MAX_ITER, random_state=0)
    with threadpool_limits(1, user_api="blas"), \
            tallied(logdet_module, screening) as tally:
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


def cases(args):
    datasets, repeats = (["digits"], 1) if args.quick else (["digits", "mnist5000"], 3)
    if args.reuse_metric_learn:
        part_one = Case("against_metric_learn", protocol=previous_comparisons,
                        params={"out": args.out, "datasets": datasets})
    else:
        part_one = Case("against_metric_learn", protocol=lambda: [
            against_metric_learn(name, repeats) for name in datasets])
    return [
        part_one,
        Case("dgemv", protocol=rates, params={"repeats": repeats}),
        Case("projection_cost", protocol=projection_costs, params={"repeats": repeats}),
        Case("large_scale", protocol=large_scale_runs,
             params={"sizes": [(100_000, True), (100_000, False), (1_000_000, True)]},
             quick={"sizes": [(20_000, True), (20_000, False)]}),
    ]


def add_arguments(parser):
    parser.add_argument("--reuse-metric-learn", action="store_true",
                        help="take part 1 from the last logdet.json in the output directory")


if __name__ == "__main__":
    sys.exit(main("logdet", cases, add_arguments=add_arguments,
                  setup=lambda args: {"repeats": 1 if args.quick else 3,
                                      "metric_learn_reused": args.reuse_metric_learn}))
