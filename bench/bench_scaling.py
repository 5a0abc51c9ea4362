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
from _harness import Case, main
from _render.scaling import (KERNEL_LEARNERS, LABEL_NOISE, N_CLASSES, PLANTED_BOUNDS,
                             REPEAT_SECONDS, SETTINGS, slopes)
from _reporting import loglog_slope, run_with_time_limit
from psdmetric import (
    PairConstraints,
    distance_targets_from_labels,
    pairs_from_labels,
    triplets_from_labels,
)

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


def constraint_curves(learners, settings):
    """Time per cycle against the number of constraints, every learner."""
    problem = constraint_problem(settings["constraints"])
    return [sweep(name, cls, settings["constraints"]["m"], problem, settings)
            for name, cls in learners.items()]


def dimension_curves(learners, settings):
    """Time per constraint visit against the dimension, every learner."""
    problem = dimension_problem(settings["dimension"])
    return [sweep(name, cls, settings["dimension"]["d"], problem, settings)
            for name, cls in learners.items()]


def kernel_curves(learners, settings):
    """Kernel mode: time per projection against n, with a cache control at the largest n."""
    k = settings["kernel"]
    curves = [sweep(name, cls, k["n"], kernel_problem(k, KERNEL_LEARNERS[name]), settings)
              for name, cls in learners.items()]
    for r in curves:
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
    return curves


def cases(args):
    learners = cyclic_learners()
    kernel_learners = {name: learners[name] for name in KERNEL_LEARNERS if name in learners}
    print(f"learners: {', '.join(learners)}; kernel mode: {', '.join(kernel_learners)}")
    return [Case(name, protocol=function, params={"learners": chosen, "settings": FULL},
                 quick={"settings": QUICK})
            for name, function, chosen in (("constraints", constraint_curves, learners),
                                           ("dimension", dimension_curves, learners),
                                           ("kernel", kernel_curves, kernel_learners))]


def setup(args):
    learners = cyclic_learners()
    return {"quick": args.quick, "settings": QUICK if args.quick else FULL,
            "learners": list(learners),
            "kernel_learners": [name for name in KERNEL_LEARNERS if name in learners],
            "not_measured": other_estimators(learners)}


def total_seconds(results, args=None):
    results["total_seconds"] = sum(results["case_seconds"][name]["wall"]
                                   for name in ("constraints", "dimension", "kernel"))


if __name__ == "__main__":
    sys.exit(main("scaling", cases, setup=setup, finish=total_seconds))
