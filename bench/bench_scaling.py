"""Scaling of every psdmetric learner: time per cycle against constraints, dimension and n.

The quantity measured is the **time per cycle** (one pass of the learner through all its
constraints), not the time to convergence, which also depends on how many cycles the
data need. It is measured as ``(t(1 + K) − t(1)) / K`` from two fits that differ only in
``max_iter`` (stopping thresholds ``tol`` / ``beta`` at 0, so neither stops early; the
cycle counts come from ``n_iter_``): set-up (validation, bounds, the kernel factor)
cancels out; ``K`` grows until the ``K`` extra cycles take about a second, and each
time is the fastest of three fits. For a learner whose ``max_iter`` counts something
other than passes (PSDBoost: column-generation iterations) the "cycle" is that unit, as
noted in the results. Three experiments, log-log plots:

1. time per cycle against the number of constraints m (10³…10⁶) at d=32;
2. time per constraint visit (time per cycle / m) against the dimension d (8…256);
3. the kernel learners (LogDet fitted on a kernel factor ``G₀`` of shape (n, r) with
   ``prior="identity"`` and index-pair constraints — seed 002 Alg. 2 — and any other
   learner of ``KERNEL_LEARNERS`` that is exported): time per constraint visit against
   the number of points n (10³…10⁶) at fixed rank r. It must stay flat in n: the
   fitted log-log slope is reported.

Learners come from ``psdmetric.__all__`` at run time (every metric learner with a
``max_iter``); constraints of each learner's kind (pairs, target distances or triplets)
are drawn from the labels of a synthetic Gaussian mixture with the shared generators. A
point runs in a child process under a time budget; a learner's sweep ends at the first
point that exceeds it (or would, by extrapolation), and the results say so.

    python bench/bench_scaling.py            # writes docs/benchmarks/scaling.{json,md,png}
    python bench/bench_scaling.py --quick    # smaller ranges, written to a scratch dir
"""

import inspect
import math
import sys
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator

import psdmetric
from _reporting import (
    finish_machine,
    loglog_slope,
    machine,
    machine_line,
    parse_arguments,
    pyplot,
    run_with_time_limit,
    write,
)
from psdmetric import distance_targets_from_labels, pairs_from_labels, triplets_from_labels

N_CLASSES = 10
REPEAT_SECONDS = 10.0
MAX_EXTRA_CYCLES = 2000
# Extra parameters per learner: what makes it run a fixed number of cycles. Greedy
# DefiniteBoost stops once no constraint is violated; with dual corrections it keeps
# stepping on constraints whose dual is positive, so every cycle does its m steps.
SETTINGS = {"DefiniteBoost": {"dual_correction": True}}
# Learners whose max_iter counts something other than passes over the constraints.
CYCLE_UNITS = {"PSDBoost": "one column-generation iteration (an LP solve and a top "
                           "eigenpair), not a pass over the triplets"}
# Learners with a transductive kernel mode: fitted on a factor G₀ with these parameters.
KERNEL_LEARNERS = {
    "LogDet": {"prior": "identity"},
    "VonNeumann": {"prior": "identity"},
}

FULL = {
    "constraints": {"d": 32, "n": 20_000,
                    "m": [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]},
    "dimension": {"m": 10_000, "n": 5_000, "d": [8, 16, 32, 64, 128, 256]},
    "kernel": {"r": 16, "m": 10_000, "n": [1_000, 10_000, 100_000, 1_000_000]},
    "cycle_seconds": 1.0, "point_budget": 60.0, "repeats": 3,
}
QUICK = {
    "constraints": {"d": 32, "n": 5_000, "m": [1_000, 10_000, 100_000]},
    "dimension": {"m": 3_000, "n": 2_000, "d": [8, 32, 128]},
    "kernel": {"r": 16, "m": 3_000, "n": [1_000, 10_000, 100_000]},
    "cycle_seconds": 0.2, "point_budget": 20.0, "repeats": 1,
}


def cyclic_learners():
    """Exported metric learners whose ``max_iter`` counts cycles through the constraints."""
    found = {}
    for name in psdmetric.__all__:
        candidate = getattr(psdmetric, name)
        if (inspect.isclass(candidate) and issubclass(candidate, BaseEstimator)
                and hasattr(candidate, "fit") and hasattr(candidate, "transform")
                and "max_iter" in candidate().get_params()):
            found[name] = candidate
    return found


def mixture(n, d, seed=0):
    """n points of a Gaussian mixture of N_CLASSES classes in d dimensions."""
    rng = np.random.RandomState(seed)
    y = rng.randint(N_CLASSES, size=n)
    centers = rng.standard_normal((N_CLASSES, d)) * 2.0
    return np.ascontiguousarray(centers[y] + rng.standard_normal((n, d))), y


def constraints_for(kind, X, y, m, seed=0):
    """m constraints of a learner's kind, drawn from the labels."""
    if kind == "pairs":
        return pairs_from_labels(y, m, random_state=seed)
    if kind == "targets":
        return distance_targets_from_labels(X, y, m, random_state=seed)
    neighbours = max(1, math.ceil(math.sqrt(m / len(y))))
    return triplets_from_labels(X, y, neighbours, max_triplets=m, random_state=seed)


def n_constraints(constraints):
    for field in ("pairs", "triplets"):
        if hasattr(constraints, field):
            return len(getattr(constraints, field))
    raise TypeError(f"unknown constraint type {type(constraints).__name__}")


def timed_fit(learner_class, params, X, constraints, cycles):
    """Wall seconds, cycles run and warnings of one fit with ``max_iter=cycles``."""
    learner = learner_class(**params)
    learner.set_params(max_iter=cycles)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # max_iter is hit on purpose
        start = time.perf_counter()
        learner.fit(X, constraints=constraints)
        seconds = time.perf_counter() - start
    return seconds, learner.n_iter_, [str(w.message) for w in caught]


def seconds_per_cycle(learner_class, params, X, constraints, settings):
    """Time per cycle as (t(1 + K) − t(1)) / K; set-up cancels out.

    K grows (at most eightfold a step, since small differences are mostly noise) until
    the K extra cycles take ``cycle_seconds``. Each of the two times is then the fastest
    of ``repeats`` fits, the least disturbed by other processes (fewer once the point
    has taken ``REPEAT_SECONDS``).
    """
    start = time.perf_counter()

    def fastest(cycles, first=None):
        best = first or timed_fit(learner_class, params, X, constraints, cycles)
        for _ in range(settings["repeats"] - 1):
            if time.perf_counter() - start > REPEAT_SECONDS:
                break
            again = timed_fit(learner_class, params, X, constraints, cycles)
            best = min(best, again, key=lambda fit: fit[0])
        return best

    base, base_cycles, _ = fastest(1)
    extra = 1
    while True:
        longer = timed_fit(learner_class, params, X, constraints, 1 + extra)
        if longer[1] <= base_cycles:
            reason = f" ({longer[2][-1][:160]})" if longer[2] else ""
            raise RuntimeError("the learner stopped after one cycle with zero stopping "
                               f"thresholds{reason}")
        taken = longer[0] - base
        if taken >= settings["cycle_seconds"] or extra >= MAX_EXTRA_CYCLES:
            break
        wanted = (math.ceil(extra * settings["cycle_seconds"] / taken) if taken > 0
                  else 2 * extra)
        extra = min(MAX_EXTRA_CYCLES, max(2 * extra, min(wanted, 8 * extra)))
    seconds, cycles, _ = fastest(1 + extra, first=longer)
    return {"seconds_per_cycle": (seconds - base) / (cycles - base_cycles),
            "cycles_timed": int(cycles - base_cycles),
            "first_fit_seconds": base}


def predicted_cycle_seconds(points, axis, size):
    """Extrapolate the time per cycle to ``size`` with the last measured growth (≥ linear
    for the constraint and dimension axes, where costs cannot fall)."""
    last = points[-1]
    exponent = 1.0
    if len(points) >= 2:
        exponent = max(exponent, loglog_slope([points[-2][axis], last[axis]],
                                              [points[-2]["seconds_per_cycle"],
                                               last["seconds_per_cycle"]]))
    return last["seconds_per_cycle"] * (size / last[axis]) ** exponent


def learner_parameters(name, learner_class, extra=None):
    params = dict(SETTINGS.get(name, {}))
    defaults = learner_class().get_params()
    for stopping_threshold in ("tol", "beta"):  # so that no fit stops early
        if stopping_threshold in defaults:
            params[stopping_threshold] = 0.0
    if "random_state" in defaults:
        params["random_state"] = 0
    params.update(extra or {})
    return params


def measure_point(learner_class, params, problem, size, settings):
    """Child process: build the problem at ``size`` and time its cycles."""
    X, constraints = problem["build"](size, learner_class._constraint_kind)
    timing = seconds_per_cycle(learner_class, params, X, constraints, settings)
    return {"n_constraints": n_constraints(constraints), **timing}


def sweep(name, learner_class, sizes, problem, settings):
    """Time per cycle at each size, until a point would exceed the budget.

    Each point is built and measured in a forked child process killed after
    ``point_budget`` seconds (the parent runs no OpenMP code, so forking is safe). A
    point is not started when its cycle, extrapolated from the previous points, would
    make one measurement (about four cycles) exceed the budget.
    """
    points, note = [], ""
    axis = problem["axis"]
    params = learner_parameters(name, learner_class, problem.get("params"))
    for size in sizes:
        if points and axis != "n":
            predicted = predicted_cycle_seconds(points, axis, size)
            if 4 * predicted > settings["point_budget"]:
                note = (f"not run at {axis}={size:,} and above: a cycle would take about "
                        f"{predicted:.0f} s (extrapolated), over the "
                        f"{settings['point_budget']:.0f} s budget of a point")
                break
        status, value = run_with_time_limit(
            measure_point, (learner_class, params, problem, size, settings),
            settings["point_budget"], start_method="fork")
        if status != "ok":
            note = f"{status} at {axis}={size:,}: {value}"[:400]
            break
        point = {axis: size, **value,
                 "seconds_per_visit": value["seconds_per_cycle"] / value["n_constraints"]}
        points.append(point)
        size_text = "" if axis == "m" else f"{axis}={size:>9,}  "
        print(f"  {name:<14} {size_text}m={point['n_constraints']:>9,}  "
              f"{point['seconds_per_cycle']:.4g} s/cycle  "
              f"{point['seconds_per_visit'] * 1e6:.3g} µs/visit  "
              f"({point['cycles_timed']} cycles timed)", flush=True)
    return {"learner": name, "points": points, "note": note}


def constraint_problem(config):
    def build(m, kind):
        X, y = mixture(config["n"], config["d"])
        return X, constraints_for(kind, X, y, m)
    return {"axis": "m", "build": build}


def dimension_problem(config):
    def build(d, kind):
        X, y = mixture(config["n"], d)
        return X, constraints_for(kind, X, y, config["m"])
    return {"axis": "d", "build": build}


def kernel_problem(config, params):
    """A rank-r factor G₀ of n points and index-pair constraints among them."""
    def build(n, kind):
        G0, y = mixture(n, config["r"])
        return G0, constraints_for(kind, G0, y, config["m"])
    return {"axis": "n", "build": build, "params": params}


def slopes(result, axis, quantity, at_least=None):
    points = [p for p in result["points"] if at_least is None or p[axis] >= at_least]
    if len(points) < 2:
        return None
    return loglog_slope([p[axis] for p in points], [p[quantity] for p in points])


def markdown(results):
    s = results["settings"]
    lines = [
        "# Scaling: time per cycle against constraints, dimension and number of points",
        "",
        "Generated by `python bench/bench_scaling.py`"
        + (" **--quick** (smoke run, smaller ranges; not the committed numbers)"
           if results["quick"] else "")
        + "; raw numbers in `scaling.json`.",
        "",
        machine_line(results["machine"]),
        "",
        "Measured: **time per cycle**, one pass of the learner through all its "
        "constraints, as `(t(1 + K) − t(1)) / K` from two fits that differ only in "
        "`max_iter` (stopping thresholds `tol` / `beta` at 0; cycles counted by "
        "`n_iter_`), so set-up cost cancels; "
        f"`K` grows until the extra cycles take {s['cycle_seconds']} s (at most "
        f"{MAX_EXTRA_CYCLES}); each of the two times is the fastest of {s['repeats']} fits "
        f"(fewer once a point has taken {REPEAT_SECONDS:.0f} s). Each point runs in a child "
        f"process stopped after {s['point_budget']:.0f} s; a learner's sweep ends at the "
        "first point that is stopped, fails, or would take longer than that by "
        "extrapolation. Time per "
        "visit = time per cycle / number of constraints. Constraints come from the "
        f"labels of a {N_CLASSES}-class Gaussian mixture through psdmetric's generators "
        "(pairs, target distances or triplets, as each learner takes). Slopes are "
        "least-squares fits of log time against log size.",
        "",
    ]
    c = s["constraints"]
    lines += [f"## 1. Time per cycle against the number of constraints (d={c['d']}, "
              f"n={c['n']:,})", "",
              "| learner | " + " | ".join(f"m={m:,}" for m in c["m"])
              + " | slope (1 = linear) |",
              "|---|" + "---|" * (len(c["m"]) + 1)]
    for r in results["constraints"]:
        by = {p["m"]: p for p in r["points"]}
        cells = [f"{by[m]['seconds_per_cycle']:.3g} s" if m in by else "—" for m in c["m"]]
        slope = slopes(r, "m", "seconds_per_cycle")
        lines.append(f"| {r['learner']} | " + " | ".join(cells)
                     + f" | {'—' if slope is None else f'{slope:.2f}'} |")
    d = s["dimension"]
    lines += ["", f"## 2. Time per constraint visit against the dimension (m={d['m']:,}, "
              f"n={d['n']:,})", "",
              "| learner | " + " | ".join(f"d={x}" for x in d["d"])
              + " | slope, d ≥ 32 (2 = O(d²)) |",
              "|---|" + "---|" * (len(d["d"]) + 1)]
    for r in results["dimension"]:
        by = {p["d"]: p for p in r["points"]}
        cells = [f"{by[x]['seconds_per_visit'] * 1e6:.3g} µs" if x in by else "—"
                 for x in d["d"]]
        slope = slopes(r, "d", "seconds_per_visit", at_least=32)
        lines.append(f"| {r['learner']} | " + " | ".join(cells)
                     + f" | {'—' if slope is None else f'{slope:.2f}'} |")
    k = s["kernel"]
    lines += ["", f"## 3. Kernel learners: time per projection against n (rank r={k['r']}, "
              f"m={k['m']:,} index pairs)", "",
              "Fitted on the kernel factor `G₀` (n × r) with `prior=\"identity\"`, the "
              "transductive mode of seed 002 Alg. 2. Per-projection cost must be flat "
              "in n: slope 0.", "",
              "| learner | " + " | ".join(f"n={x:,}" for x in k["n"])
              + " | slope (0 = flat in n) |",
              "|---|" + "---|" * (len(k["n"]) + 1)]
    for r in results["kernel"]:
        by = {p["n"]: p for p in r["points"]}
        cells = [f"{by[x]['seconds_per_visit'] * 1e6:.3g} µs" if x in by else "—"
                 for x in k["n"]]
        slope = slopes(r, "n", "seconds_per_visit")
        lines.append(f"| {r['learner']} | " + " | ".join(cells)
                     + f" | {'—' if slope is None else f'{slope:+.3f}'} |")
    notes = [f"- {part}: {r['learner']} — {r['note']}"
             for part in ("constraints", "dimension", "kernel") for r in results[part]
             if r["note"]]
    notes += [f"- {name}: a cycle is {unit}." for name, unit in CYCLE_UNITS.items()
              if name in results["learners"]]
    notes += [f"- {name} runs with " + ", ".join(f"`{k}={v!r}`" for k, v in extra.items())
              + " (besides the zero stopping thresholds)."
              for name, extra in SETTINGS.items() if name in results["learners"]]
    absent = [name for name in KERNEL_LEARNERS if name not in results["kernel_learners"]]
    if absent:
        notes.append(f"- kernel: {', '.join(absent)} not exported by psdmetric at run "
                     "time, so not measured.")
    if notes:
        lines += ["", "Notes:", ""] + notes
    lines += ["", "![scaling](scaling.png)", ""]
    return "\n".join(lines)


def plot(results):
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = [("constraints", "m", "seconds_per_cycle", "number of constraints m",
               "time per cycle (s)", 1.0),
              ("dimension", "d", "seconds_per_visit", "dimension d",
               "time per constraint visit (s)", 2.0),
              ("kernel", "n", "seconds_per_visit", "number of points n (kernel mode)",
               "time per projection (s)", 0.0)]
    for ax, (part, axis, quantity, xlabel, ylabel, reference) in zip(axes, panels):
        for r in results[part]:
            if not r["points"]:
                continue
            x = [p[axis] for p in r["points"]]
            y = [p[quantity] for p in r["points"]]
            ax.plot(x, y, "o-", label=r["learner"])
        if any(r["points"] for r in results[part]):
            first = next(r for r in results[part] if r["points"])["points"]
            x0, y0 = first[0][axis], first[0][quantity]
            xs = np.array([first[0][axis], first[-1][axis]], dtype=float)
            ax.plot(xs, y0 * (xs / x0) ** reference, "k:", lw=1,
                    label=f"slope {reference:g}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        values = [p[quantity] for r in results[part] for p in r["points"] if p[quantity] > 0]
        if values:  # at least a decade of y, so that noise does not look like a trend
            low, high = min(values), max(values)
            middle = math.sqrt(low * high)
            ax.set_ylim(min(low, middle / 3.2) / 1.2, max(high, middle * 3.2) * 1.2)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main(argv=None):
    args, out = parse_arguments(__doc__.splitlines()[0], argv)
    settings = QUICK if args.quick else FULL
    learners = cyclic_learners()
    kernel_learners = {name: learners[name] for name in KERNEL_LEARNERS if name in learners}
    results = {"machine": machine(), "quick": args.quick, "settings": settings,
               "learners": list(learners), "kernel_learners": list(kernel_learners)}
    print(f"learners: {', '.join(learners)}; kernel mode: {', '.join(kernel_learners)}")
    start = time.perf_counter()

    print("\n== 1. time per cycle against the number of constraints ==", flush=True)
    problem = constraint_problem(settings["constraints"])
    results["constraints"] = [sweep(name, cls, settings["constraints"]["m"], problem, settings)
                              for name, cls in learners.items()]
    print("\n== 2. time per constraint visit against the dimension ==", flush=True)
    problem = dimension_problem(settings["dimension"])
    results["dimension"] = [sweep(name, cls, settings["dimension"]["d"], problem, settings)
                            for name, cls in learners.items()]
    print("\n== 3. kernel mode: time per projection against n ==", flush=True)
    results["kernel"] = [
        sweep(name, cls, settings["kernel"]["n"],
              kernel_problem(settings["kernel"], KERNEL_LEARNERS[name]), settings)
        for name, cls in kernel_learners.items()]
    for r in results["kernel"]:
        r["slope"] = slopes(r, "n", "seconds_per_visit")
        print(f"  {r['learner']}: log-log slope of time per projection against n = "
              f"{r['slope']}")

    results["total_seconds"] = time.perf_counter() - start
    finish_machine(results["machine"])
    page = markdown(results)
    print("\n" + page)
    print(f"total {results['total_seconds']:.0f} s")
    write(out, "scaling", results, page, plot(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
