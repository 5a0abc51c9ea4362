"""Scaling of every psdmetric learner: time per cycle against constraints, dimension and n.

The quantity measured is the **time per cycle** (one pass of the learner through all its
constraints), not the time to convergence, which also depends on how many cycles the
data need. It is measured on this process's CPU clock, with BLAS held to one thread (the
sweeps are sequential; a second BLAS thread would only add spin time to the CPU clock),
as ``(t(1 + K) − t(1)) / K`` from two fits that differ only in ``max_iter`` (stopping
thresholds ``tol`` / ``beta`` at 0, so neither stops early; the cycle counts come from
``n_iter_``): set-up (validation, bounds, the kernel factor) cancels out. ``K`` is the
same at every point of a curve, so every point times the same cycles (2 … K + 1) of a
fit: late cycles of a converged fit skip most updates and cost less than early ones, and
a ``K`` that grew with the speed of a point would compare early cycles of large problems
with late cycles of small ones. Each of the two times is the fastest of up to
``repeats`` fits. For a learner whose ``max_iter`` counts something other than passes
(PSDBoost: column-generation iterations) the "cycle" is that unit, as noted in the
results. Three experiments, log-log plots:

1. time per cycle against the number of constraints m (10³…10⁶) at d=32;
2. time per constraint visit (time per cycle / m) against the dimension d (8…256), with
   a tenth of the labels drawn anew so that no learner stops after one pass;
3. the kernel learners (LogDet and VonNeumann fitted on a kernel factor ``G₀`` of shape
   (n, r) with ``prior="identity"`` and index-pair constraints — Kulis et al., 2009, Alg. 2):
   time per constraint visit against the number of points n (10³…10⁶) at fixed rank r.
   It must stay flat in n: the fitted log-log slope is reported.

Learners come from ``psdmetric.__all__`` at run time (every metric learner with a
``max_iter``); constraints of each learner's kind (pairs, target distances or triplets)
are drawn from the labels of a synthetic Gaussian mixture with the shared generators
(DefiniteBoost, run without slack, gets per-pair bounds that a planted trace-one
metric meets, so that its problems are feasible). A point runs in a child process
under a time budget; a learner's sweep ends at the first point that exceeds it (or
would, by extrapolation), and the results say so.

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
from threadpoolctl import threadpool_limits

import psdmetric
from _reporting import (loglog_slope, machine, machine_line, parse_arguments, pyplot, report,
                        run_with_time_limit)
from psdmetric import (
    PairConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    triplets_from_labels,
)

N_CLASSES = 10
# Share of relabelled points on the dimension curve (see dimension_problem).
LABEL_NOISE = 0.1
# Once a point has spent this many CPU seconds, its two times are not repeated further.
REPEAT_SECONDS = 5.0
# Extra parameters per learner: what makes it run a fixed number of cycles. Greedy
# DefiniteBoost stops once no constraint is violated; with dual corrections it keeps
# stepping on constraints whose dual is positive, so every cycle does its m steps.
SETTINGS = {"DefiniteBoost": {"dual_correction": True, "gamma": np.inf}}
# Learners without slack whose pair constraints get per-pair bounds met by a planted
# trace-one metric: with the default percentile bounds, label pairs are infeasible for
# a trace-one metric and the fit stops at the first cycle that proves it.
PLANTED_BOUNDS = {"DefiniteBoost"}
# Learners whose max_iter counts something other than passes over the constraints.
CYCLE_UNITS = {"PSDBoost": "one column-generation iteration (an LP solve and a top "
                           "eigenpair), not a pass over the triplets"}
# Why a learner's curve is not the plain O(m) / O(d²) one, from how it works.
EXPLANATIONS = {
    "DefiniteBoost": "Each greedy step recomputes tr(W C_j) for all m constraints (one "
                     "d × d × m product) to pick the most violated one, so a step costs "
                     "O(m d²) and a cycle of m steps O(m² d²)",
    "POLA": "A visit updates the matrix only when its pair has hinge loss; the more "
            "pairs, the more of them the first cycle already fits, so the timed cycles "
            "update on fewer visits and the time per visit falls as m grows",
    "KernelPOLA": "As for POLA, a visit updates only when its pair has hinge loss, and "
                  "fewer do in the timed cycles as m grows",
}
# Learners with a transductive kernel mode: fitted on a factor G₀ with these parameters.
KERNEL_LEARNERS = {
    "LogDet": {"prior": "identity"},
    "VonNeumann": {"prior": "identity"},
}

# "cycles" is K, the number of cycles timed at every point of a curve. "m_for" gives a
# learner whose cycle costs O(m²) (DefiniteBoost) fewer constraints on the dimension
# curve, so that it reaches the large d within the budget.
FULL = {
    "constraints": {"d": 32, "n": 20_000, "cycles": 4,
                    "m": [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]},
    "dimension": {"m": 10_000, "n": 5_000, "cycles": 4, "d": [8, 16, 32, 64, 128, 256],
                  "m_for": {"DefiniteBoost": 1_000}},
    "kernel": {"r": 16, "m": 20_000, "cycles": 32,
               "n": [1_000, 10_000, 100_000, 1_000_000]},
    "point_cpu_seconds": 75.0, "point_budget": 400.0, "repeats": 10,
}
QUICK = {
    "constraints": {"d": 32, "n": 5_000, "cycles": 2, "m": [1_000, 10_000, 100_000]},
    "dimension": {"m": 3_000, "n": 2_000, "cycles": 2, "d": [8, 32, 128],
                  "m_for": {"DefiniteBoost": 300}},
    "kernel": {"r": 16, "m": 10_000, "cycles": 8, "n": [1_000, 10_000, 100_000]},
    "point_cpu_seconds": 10.0, "point_budget": 60.0, "repeats": 3,
}


def cyclic_learners():
    """Exported metric learners whose ``max_iter`` counts cycles through the constraints."""
    found = {}
    for name in psdmetric.__all__:
        candidate = getattr(psdmetric, name)
        if (inspect.isclass(candidate) and issubclass(candidate, BaseEstimator)
                and hasattr(candidate, "fit") and hasattr(candidate, "transform")
                and _has_max_iter(candidate)):
            found[name] = candidate
    return found


def _has_max_iter(estimator_class):
    # From the signature: wrappers such as PairsClassifier cannot be built without a learner.
    # A cross-validated learner's max_iter (it takes cv) bounds each inner fit, not a cycle.
    parameters = inspect.signature(estimator_class).parameters
    return "max_iter" in parameters and "cv" not in parameters


def other_estimators(learners):
    """Exported estimators with a ``max_iter`` that are not metric learners measured here."""
    return [name for name in psdmetric.__all__
            if name not in learners and inspect.isclass(getattr(psdmetric, name))
            and issubclass(getattr(psdmetric, name), BaseEstimator)
            and _has_max_iter(getattr(psdmetric, name))]


def mixture(n, d, seed=0, label_noise=0.0):
    """n points of a Gaussian mixture of N_CLASSES classes in d dimensions.

    ``label_noise``: the share of points whose label is drawn anew, uniformly.
    """
    rng = np.random.RandomState(seed)
    y = rng.randint(N_CLASSES, size=n)
    centers = rng.standard_normal((N_CLASSES, d)) * 2.0
    X = np.ascontiguousarray(centers[y] + rng.standard_normal((n, d)))
    relabelled = rng.random_sample(n) < label_noise
    y[relabelled] = rng.randint(N_CLASSES, size=np.count_nonzero(relabelled))
    return X, y


def planted_trace_one_bounds(X, constraints, seed=0):
    """The pairs with per-pair bounds a random trace-one metric W* meets with 10 % margin.

    Similar pairs get ``u = 1.1 d²_W*``, dissimilar ones ``l = 0.9 d²_W*``: W* is
    feasible, while the start ``W₁ = I / d`` violates about half of them.
    """
    weights = np.random.RandomState(seed).uniform(0.05, 1.0, X.shape[1]) ** 2
    weights /= weights.sum()
    difference = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
    planted = np.einsum("ij,j,ij->i", difference, weights, difference)
    bounds = np.where(constraints.labels == 1, 1.1 * planted, 0.9 * planted)
    return PairConstraints(constraints.pairs, constraints.labels, bounds=bounds)


def constraints_for(name, kind, X, y, m, seed=0):
    """m constraints of a learner's kind, drawn from the labels."""
    if kind == "pairs":
        pairs = pairs_from_labels(y, m, random_state=seed)
        return planted_trace_one_bounds(X, pairs, seed) if name in PLANTED_BOUNDS else pairs
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
    """CPU and wall seconds, cycles run and warnings of one fit with ``max_iter=cycles``."""
    learner = learner_class(**params)
    learner.set_params(max_iter=cycles)
    with warnings.catch_warnings(record=True) as caught, \
            threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("always")  # max_iter is hit on purpose
        wall, cpu = time.perf_counter(), time.process_time()
        learner.fit(X, constraints=constraints)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"cpu": cpu, "wall": wall, "cycles": learner.n_iter_,
            "warnings": [str(w.message) for w in caught]}


def seconds_per_cycle(learner_class, params, X, constraints, extra, settings):
    """Time per cycle as (t(1 + K) − t(1)) / K on the CPU clock; set-up cancels out.

    The fits with 1 and 1 + K cycles alternate, ``repeats`` times each (fewer once the
    point has spent ``REPEAT_SECONDS``); each time is the fastest of its fits, the
    least disturbed by other processes.
    """
    start = time.process_time()
    base = longer = None
    repeats = 0
    while repeats < settings["repeats"] and (
            not repeats or time.process_time() - start <= REPEAT_SECONDS):
        fits = [timed_fit(learner_class, params, X, constraints, cycles)
                for cycles in (1, 1 + extra)]
        if fits[1]["cycles"] <= fits[0]["cycles"]:
            reason = f" ({fits[1]['warnings'][-1][:200]})" if fits[1]["warnings"] else ""
            raise RuntimeError("the learner stopped after one cycle with zero stopping "
                               f"thresholds{reason}")
        base = fits[0] if base is None else min(base, fits[0], key=lambda f: f["cpu"])
        longer = fits[1] if longer is None else min(longer, fits[1], key=lambda f: f["cpu"])
        repeats += 1
    cycles = longer["cycles"] - base["cycles"]
    return {"seconds_per_cycle": (longer["cpu"] - base["cpu"]) / cycles,
            "wall_seconds_per_cycle": (longer["wall"] - base["wall"]) / cycles,
            "cycles_timed": int(cycles), "first_fit_seconds": base["cpu"],
            "repeats": repeats}


def predicted_cycle_seconds(points, axis, size):
    """Extrapolate the time per cycle to ``size`` with the last measured growth (≥ linear
    for the constraint and dimension axes, where costs cannot fall)."""
    points = [p for p in points if p["seconds_per_cycle"] > 0]  # noise on tiny points
    if not points:
        return 0.0
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


def measure_point(name, learner_class, params, problem, size, settings):
    """Child process: build the problem at ``size`` and time its cycles."""
    X, constraints = problem["build"](size, name, learner_class._constraint_kind)
    timing = seconds_per_cycle(learner_class, params, X, constraints, problem["cycles"],
                               settings)
    return {"n_constraints": n_constraints(constraints), **timing}


def measure(name, learner_class, params, problem, size, settings):
    """One point in a forked child process killed after ``point_budget`` wall seconds
    (the parent runs no OpenMP code, so forking is safe)."""
    status, value = run_with_time_limit(
        measure_point, (name, learner_class, params, problem, size, settings),
        settings["point_budget"], start_method="fork")
    if status != "ok":
        return None, f"{status} at {problem['axis']}={size:,}: {value}"[:400]
    value["seconds_per_visit"] = value["seconds_per_cycle"] / value["n_constraints"]
    return value, ""


def sweep(name, learner_class, sizes, problem, settings):
    """Time per cycle at each size, until a point would exceed the budget.

    A point is not started when its K + 2 cycles, extrapolated from the previous points,
    would take more than ``point_cpu_seconds``.
    """
    points, note = [], ""
    axis = problem["axis"]
    params = learner_parameters(name, learner_class, problem.get("params"))
    for size in sizes:
        if points and axis != "n":
            predicted = predicted_cycle_seconds(points, axis, size)
            if (problem["cycles"] + 2) * predicted > settings["point_cpu_seconds"]:
                note = (f"not run at {axis}={size:,} and above: a cycle would take about "
                        f"{predicted:.0f} s (extrapolated), so the {problem['cycles'] + 2} "
                        f"cycles of one measurement over the "
                        f"{settings['point_cpu_seconds']:.0f} s CPU budget of a point")
                break
        value, note = measure(name, learner_class, params, problem, size, settings)
        if value is None:
            break
        point = {axis: size, **value}
        points.append(point)
        size_text = "" if axis == "m" else f"{axis}={size:>9,}  "
        print(f"  {name:<14} {size_text}m={point['n_constraints']:>9,}  "
              f"{point['seconds_per_cycle']:.4g} s/cycle  "
              f"{point['seconds_per_visit'] * 1e6:.3g} µs/visit  "
              f"(cycles 2–{point['cycles_timed'] + 1}, wall "
              f"{point['wall_seconds_per_cycle']:.4g} s/cycle)", flush=True)
    return {"learner": name, "points": points, "note": note}


def constraint_problem(config):
    def build(m, name, kind):
        X, y = mixture(config["n"], config["d"])
        return X, constraints_for(name, kind, X, y, m)
    return {"axis": "m", "build": build, "cycles": config["cycles"]}


def dimension_problem(config):
    def build(d, name, kind):
        # The classes separate ever more cleanly as d grows, and a learner that meets
        # every pair's margin in one pass (POLA from d = 64) stops there: relabelled
        # points keep some pairs violated at every d.
        X, y = mixture(config["n"], d, label_noise=LABEL_NOISE)
        return X, constraints_for(name, kind, X, y, config["m_for"].get(name, config["m"]))
    return {"axis": "d", "build": build, "cycles": config["cycles"]}


def kernel_problem(config, params, touched=None):
    """A rank-r factor G₀ of n points and index-pair constraints among them.

    With ``touched``, the pairs join only the first ``touched`` rows: the same work as
    at n = ``touched``, with the rest of G₀ in memory but never read (the cache control).
    """
    def build(n, name, kind):
        G0, y = mixture(n, config["r"])
        rows = n if touched is None else touched
        return G0, constraints_for(name, kind, G0[:rows], y[:rows], config["m"])
    return {"axis": "n", "build": build, "params": params, "cycles": config["cycles"]}


def slopes(result, axis, quantity, at_least=None):
    # A difference at or below zero is timing noise on a point too small to resolve.
    points = [p for p in result["points"]
              if (at_least is None or p[axis] >= at_least) and p[quantity] > 0]
    if len(points) < 2:
        return None
    return loglog_slope([p[axis] for p in points], [p[quantity] for p in points])


def in_m(slope, last=None):
    """Plain reading of the slope of time per cycle against m and of its last step."""
    if slope is None:
        return "too few points"
    if abs(slope - 1.0) <= 0.15:
        return ("linear in m, but steeper over the last step" if last is not None
                and last > 1.3 else "linear in m")
    return "super-linear in m" if slope > 1.0 else "sub-linear in m"


def in_d(slope, last=None):
    """Plain reading of the slope of time per visit against d (d ≥ 64) and of the last
    doubling of d."""
    if slope is None:
        return "too few points"
    if slope > 2.2:
        return "above O(d²)" if slope <= 2.6 else (
            "about O(d³)" if slope <= 3.4 else "above O(d³)")
    if last is not None and last > 2.2:
        return "about O(d²), steeper at the largest d"
    return "O(d²) or less"


LARGE_D = 64  # the d-slope is fitted from here on, where the leading term dominates


def last_step(result, axis, quantity):
    """Log-log slope between the two largest sizes measured."""
    points = [p for p in result["points"] if p[quantity] > 0][-2:]
    if len(points) < 2:
        return None
    return loglog_slope([p[axis] for p in points], [p[quantity] for p in points])


def text(slope, form=".2f"):
    return "—" if slope is None else f"{slope:{form}}"


def in_n(slope):
    """Plain reading of the slope of time per projection against n."""
    if slope is None:
        return "too few points"
    return "flat in n" if abs(slope) <= 0.1 else "not flat in n"


def cell(points, axis, size, quantity, scale, unit):
    by = {p[axis]: p for p in points}
    return f"{by[size][quantity] * scale:.3g} {unit}" if size in by else "—"


def markdown(results):
    s = results["settings"]
    c, k = s["constraints"], s["kernel"]
    lines = [
        "# Scaling: time per cycle against constraints, dimension and number of points",
        "",
        "Generated by `python bench/bench_scaling.py`"
        + (" **--quick** (smoke run, smaller ranges; not the committed numbers)"
           if results["quick"] else "")
        + f"; raw numbers in `scaling.json`. The run took "
        f"{results['total_seconds'] / 60:.0f} minutes.",
        "",
        machine_line(results["machine"]),
        "",
        "Measured: **time per cycle**, one pass of the learner through all its "
        "constraints, on this process's **CPU clock** with BLAS held to one thread "
        "(the sweeps are sequential, and the CPU clock is what other jobs on a shared "
        "machine disturb least; the wall-clock figures are in `scaling.json`). It is "
        "`(t(1 + K) − t(1)) / K` from two fits that differ only in `max_iter` (stopping "
        "thresholds `tol` / `beta` at 0; cycles counted by `n_iter_`), so set-up "
        "(validation, bounds, the factor `X L₀ᵀ`) cancels. `K` is the same at every point "
        f"of a curve (K = {c['cycles']} for the constraint and dimension curves, "
        f"{k['cycles']} for the kernel curve), so every point times the same cycles "
        "2 … K + 1 of a fit: cycles late in a fit skip most updates (their constraints "
        "already hold) and cost less, so a `K` that varied from point to point would "
        "compare unlike cycles. Each of the two times is the fastest of up to "
        f"{s['repeats']} fits (fewer once a point has spent {REPEAT_SECONDS:.0f} CPU "
        "seconds). Each point runs in a child process; it is not started when its "
        f"K + 2 cycles, extrapolated from the previous points, would exceed "
        f"{s['point_cpu_seconds']:.0f} CPU seconds, and is stopped after "
        f"{s['point_budget']:.0f} wall seconds. Time per visit = time per cycle / number "
        f"of constraints. Constraints come from the labels of a {N_CLASSES}-class "
        "Gaussian mixture through psdmetric's generators (pairs, target distances or "
        "triplets, as each learner takes); on the dimension curve "
        f"{LABEL_NOISE:.0%} of the points are relabelled at random, so that no learner "
        "meets every pair's margin in one pass and stops. Slopes are least-squares fits "
        "of log time "
        "against log size.",
        "",
    ]
    lines += constraints_section(results) + dimension_section(results)
    lines += kernel_section(results) + reading_section(results) + notes_section(results)
    lines += ["", "![scaling](scaling.png)", ""]
    return "\n".join(lines)


def constraints_section(results):
    """Part 1 of the page: time per cycle against the number of constraints."""
    c = results["settings"]["constraints"]
    lines = [
        f"## 1. Time per cycle against the number of constraints (d={c['d']}, "
        f"n={c['n']:,})",
        "",
        "| learner | " + " | ".join(f"m = {m:,}" for m in c["m"])
        + " | slope (1 = linear) | slope, last step | reading |",
        "|---|" + "---|" * (len(c["m"]) + 3),
    ]
    for r in results["constraints"]:
        slope = slopes(r, "m", "seconds_per_cycle")
        last = last_step(r, "m", "seconds_per_cycle")
        cells = [cell(r["points"], "m", m, "seconds_per_cycle", 1, "s") for m in c["m"]]
        lines.append(f"| {r['learner']} | " + " | ".join(cells) + f" | {text(slope)} | "
                     f"{text(last)} | {in_m(slope, last)} |")
    lines += ["", "Time per constraint visit (µs) along the same curve:", "",
              "| learner | " + " | ".join(f"m = {m:,}" for m in c["m"]) + " |",
              "|---|" + "---|" * len(c["m"])]
    for r in results["constraints"]:
        cells = [cell(r["points"], "m", m, "seconds_per_visit", 1e6, "") for m in c["m"]]
        lines.append(f"| {r['learner']} | " + " | ".join(cells) + " |")
    return lines


def dimension_section(results):
    """Part 2 of the page: time per visit against the dimension."""
    d = results["settings"]["dimension"]
    exceptions = "".join(f"; {name}: m={m:,}, since its cycle costs O(m²)"
                         for name, m in d["m_for"].items() if name in results["learners"])
    lines = ["", f"## 2. Time per constraint visit against the dimension (m={d['m']:,}"
             f"{exceptions}; n={d['n']:,})", "",
             "| learner | " + " | ".join(f"d={x}" for x in d["d"])
             + f" | slope, d ≥ {LARGE_D} (2 = O(d²)) | slope, last doubling | reading |",
             "|---|" + "---|" * (len(d["d"]) + 3)]
    for r in results["dimension"]:
        slope = slopes(r, "d", "seconds_per_visit", at_least=LARGE_D)
        last = last_step(r, "d", "seconds_per_visit")
        cells = [cell(r["points"], "d", x, "seconds_per_visit", 1e6, "µs") for x in d["d"]]
        lines.append(f"| {r['learner']} | " + " | ".join(cells)
                     + f" | {text(slope)} | {text(last)} | {in_d(slope, last)} |")
    return lines


def kernel_section(results):
    """Part 3 of the page: the kernel learners' time per projection against n."""
    k = results["settings"]["kernel"]
    lines = ["", f"## 3. Kernel learners: time per projection against n (rank r={k['r']}, "
             f"m={k['m']:,} index pairs)", "",
             "Fitted on the kernel factor `G₀` (n × r, the only n-sized array) with "
             "`prior=\"identity\"`, the transductive mode of Kulis et al., 2009, Alg. 2. The work "
             "of a projection does not depend on n: it must be flat in n, slope 0. The "
             "last column is the cache control: G₀ at the largest n, but the pairs join "
             f"only its first {k['n'][0]:,} rows, so the work and the memory are those "
             "of the largest n while the rows read fit in cache; a rise of time with n "
             "that this column does not show is the latency of reading two random rows "
             "of a G₀ larger than the cache, not work that grows with n.", "",
             "| learner | " + " | ".join(f"n={x:,}" for x in k["n"])
             + " | slope (0 = flat in n) | reading | control: largest n, pairs among "
             f"the first {k['n'][0]:,} rows |",
             "|---|" + "---|" * (len(k["n"]) + 3)]
    for r in results["kernel"]:
        slope = slopes(r, "n", "seconds_per_visit")
        cells = [cell(r["points"], "n", x, "seconds_per_visit", 1e6, "µs") for x in k["n"]]
        control = r.get("cache_control")
        control_text = (f"{control['seconds_per_visit'] * 1e6:.3g} µs at n={control['n']:,}"
                        if control else "—")
        lines.append(f"| {r['learner']} | " + " | ".join(cells)
                     + f" | {text(slope, '+.3f')} | {in_n(slope)} | "
                     + control_text + " |")
    return lines


def reading_section(results):
    """What each learner's slopes say."""
    lines = ["", "## Reading", ""]
    for name in results["learners"]:
        parts = []
        for part, axis, quantity, at_least, what in (
                ("constraints", "m", "seconds_per_cycle", None, "time per cycle"),
                ("dimension", "d", "seconds_per_visit", LARGE_D, "time per visit"),
                ("kernel", "n", "seconds_per_visit", None, "time per projection")):
            r = next((r for r in results[part] if r["learner"] == name), None)
            if r is None:
                continue
            slope = slopes(r, axis, quantity, at_least)
            if slope is None:
                continue
            if axis == "d":
                last = last_step(r, axis, quantity)
                parts.append(f"{what} {in_d(slope, last)} (slope {slope:.2f} for "
                             f"d ≥ {LARGE_D}, {last:.2f} over the last doubling)")
            elif axis == "m":
                last = last_step(r, axis, quantity)
                parts.append(f"{what} {in_m(slope, last)} (slope {slope:.2f}, "
                             f"{last:.2f} over the last step)")
            else:
                control = r.get("cache_control")
                parts.append(f"{what} {in_n(slope)} (slope {slope:+.3f}; "
                             f"{r['points'][0]['seconds_per_visit'] * 1e6:.3g} µs at "
                             f"n={r['points'][0]['n']:,}, "
                             f"{r['points'][-1]['seconds_per_visit'] * 1e6:.3g} µs at "
                             f"n={r['points'][-1]['n']:,}"
                             + (f", {control['seconds_per_visit'] * 1e6:.3g} µs there with "
                                f"the pairs among its first {control['rows_touched']:,} "
                                "rows" if control else "") + ")")
        lines.append(f"- **{name}**: " + ("; ".join(parts) if parts else "no curve")
                     + (f". {EXPLANATIONS[name]}" if name in EXPLANATIONS else "") + ".")
    return lines


def notes_section(results):
    """Notes on settings and on points not measured."""
    notes = [f"- {part}: {r['learner']} — {r['note']}"
             for part in ("constraints", "dimension", "kernel") for r in results[part]
             if r["note"]]
    notes += [f"- kernel control: {r['learner']} — {r['cache_control_note']}"
              for r in results["kernel"] if r.get("cache_control_note")]
    notes += [f"- {name}: a cycle is {unit}." for name, unit in CYCLE_UNITS.items()
              if name in results["learners"]]
    notes += [f"- {name} runs with " + ", ".join(f"`{k}={v!r}`" for k, v in extra.items())
              + " (besides the zero stopping thresholds)."
              for name, extra in SETTINGS.items() if name in results["learners"]]
    notes += [f"- {name} gets per-pair bounds that a random trace-one metric meets with "
              "a 10 % margin: it has no slack, and with the default percentile bounds "
              "label pairs are infeasible for a trace-one metric (the fit stops at the "
              "first cycle that proves it)." for name in PLANTED_BOUNDS
              if name in results["learners"]]
    if results["not_measured"]:
        notes.append(f"- not measured: {', '.join(results['not_measured'])} (no "
                     "`transform`: not a metric learner of constraints).")
    absent = [name for name in KERNEL_LEARNERS if name not in results["kernel_learners"]]
    if absent:
        notes.append(f"- kernel: {', '.join(absent)} not exported by psdmetric at run "
                     "time, so not measured.")
    return ["", "Notes:", ""] + notes if notes else []


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
            shown = [p for p in r["points"] if p[quantity] > 0]
            line, = ax.plot([p[axis] for p in shown], [p[quantity] for p in shown], "o-",
                            label=r["learner"])
            control = r.get("cache_control")
            if control:
                ax.plot([control["n"]], [control[quantity]], "s", mfc="none",
                        color=line.get_color(), label=f"{r['learner']}, pairs among the "
                        f"first {control['rows_touched']:,} rows")
        measured = [p for r in results[part] for p in r["points"] if p[quantity] > 0]
        if measured:  # the reference slope from the lowest point at the smallest size
            x0 = min(p[axis] for p in measured)
            y0 = min(p[quantity] for p in measured if p[axis] == x0)
            xs = np.array([x0, max(p[axis] for p in measured)], dtype=float)
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
               "learners": list(learners), "kernel_learners": list(kernel_learners),
               "not_measured": other_estimators(learners)}
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
    k = settings["kernel"]
    results["kernel"] = [
        sweep(name, cls, k["n"], kernel_problem(k, KERNEL_LEARNERS[name]), settings)
        for name, cls in kernel_learners.items()]
    for r in results["kernel"]:
        r["slope"] = slopes(r, "n", "seconds_per_visit")
        if len(r["points"]) < 2:
            continue
        # The same pairs' work with G₀ at the largest n but only the first rows read.
        largest = r["points"][-1]["n"]
        value, note = measure(r["learner"], learners[r["learner"]],
                              learner_parameters(r["learner"], learners[r["learner"]],
                                                 KERNEL_LEARNERS[r["learner"]]),
                              kernel_problem(k, KERNEL_LEARNERS[r["learner"]],
                                             touched=k["n"][0]), largest, settings)
        r["cache_control"] = None if value is None else {"n": largest,
                                                         "rows_touched": k["n"][0], **value}
        r["cache_control_note"] = note
        print(f"  {r['learner']}: slope of time per projection against n = "
              f"{r['slope']:+.3f}; at n={largest:,} with pairs among the first "
              f"{k['n'][0]:,} rows: " + (note if value is None else
                                         f"{value['seconds_per_visit'] * 1e6:.3g} µs/visit"),
              flush=True)

    results["total_seconds"] = time.perf_counter() - start
    report(out, "scaling", results, markdown, plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
