"""The von Neumann family: projection cost, MNIST-5000, MEG rate, Kulis et al., 2009, §7.

Measures, in one run:

1. The cost of an exact von Neumann projection against a LogDet projection at
   r = 25, 50 and 100, both kernels sweeping the same 10,000 MNIST-5000 pairs (the first
   r PCA dimensions) from the identity (``psdmetric._bregman._logdet_kernels.logdet_sweep`` and
   ``von_neumann_sweep``, which keeps the eigenbasis, and ``von_neumann_krylov_sweep``,
   which keeps the logarithm and projects through Lanczos, as ``VonNeumann`` does from
   r = 32). Target: at most 10× at r = 100. The dense ``W ← W U`` product
   of one projection (an r×r DGEMM, timed alone in the same run, with its flop rate) and
   the share of W's columns that do not deflate are reported beside it.
2. ``VonNeumann`` on MNIST-5000 (stratified 70/30 split) with 10,000 random constraints
   drawn from the training labels: time to converge to tol 1e-3 and 1-NN test error
   against Euclidean, for γ chosen by 3-fold cross-validation on the training part (the
   paper cross-validates γ) and for γ = 1; ``LogDet`` on the same pairs, bounds, γ and
   tol for the total-time ratio. Targets: < 60 s, error no worse than Euclidean, total
   fit time at most 5× LogDet's.
3. ``MEG`` rank-one updates per second at d = 100 (MNIST-5000 pairs with label-derived
   targets). Target: at least 2,000.
4. Kulis et al., 2009, §7: from the scaled identity with the same 100 constraints, cycles to
   converge for exact von Neumann projections (``DefiniteBoost(projection="exact")``,
   the paper's algorithm on the DefiniteBoost problem, §6.3) and for DefiniteBoost's
   approximate projections, without and with dual corrections (the paper: 11 vs 3220), and
   whether they reach the same matrix. The paper's GyrB kernel (52 proteins, 3 species)
   is not public; its stand-in is a 52-object RBF kernel on wine (3 cultivars), trace
   one, and the 100 pairs closest under it with ``½‖x_a − x_b‖² ≤ γ`` (Tsuda et al., 2005, §5).

Every time is taken on the wall clock and on this process's CPU clock (the machine may
be shared with other jobs), with one BLAS thread (set before numpy loads), as in
``bench_speed.py``, so that CPU seconds compare across the two pages.

    python bench/bench_von_neumann.py          # writes docs/benchmarks/von_neumann.*
    python bench/bench_von_neumann.py --quick  # smaller runs, written to a scratch dir
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy.linalg.blas import dgemm  # noqa: E402
from sklearn.datasets import load_wine  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import StratifiedKFold, train_test_split  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _datasets import mnist_split  # noqa: E402
from _harness import Case, knn_error, main  # noqa: E402
from _render.von_neumann import MNIST_TOL  # noqa: E402
from _reporting import Stopwatch  # noqa: E402
from psdmetric import (  # noqa: E402
    MEG,
    DefiniteBoost,
    LogDet,
    PairConstraints,
    VonNeumann,
    pairs_from_labels,
    squared_distance_bounds,
)
from psdmetric._bregman._definite_boost_kernels import definite_boost_steps  # noqa: E402
from psdmetric._bregman._logdet_kernels import logdet_sweep  # noqa: E402
from psdmetric._bregman._von_neumann_kernels import von_neumann_sweep  # noqa: E402
from psdmetric._bregman._von_neumann_krylov import von_neumann_krylov_sweep  # noqa: E402

RANKS = (25, 50, 100)


# --------------------------------------------------------------------------------------
# 1. Projection cost at r = 100
# --------------------------------------------------------------------------------------

def dgemm_rate(r, repeats=2000):
    """DGEMM flop rate at r×r×r, one BLAS thread: 2r³ flops over the call time less the
    call overhead (a 1×1 call), best of 3 batches per clock."""
    rng = np.random.default_rng(0)
    operands = {size: (np.asfortranarray(rng.standard_normal((size, size))),
                       np.asfortranarray(rng.standard_normal((size, size)))) for size in (1, r)}
    best = {(size, clock): np.inf for size in (1, r) for clock in ("wall", "cpu")}
    with threadpool_limits(limits=1, user_api="blas"):
        for batch in range(4):  # batch 0 warms caches and the CPU clock
            for size, (a, b) in operands.items():
                with Stopwatch() as watch:
                    for _ in range(repeats):
                        dgemm(1.0, a, b)
                if batch:
                    for clock, seconds in watch.seconds().items():
                        best[size, clock] = min(best[size, clock], seconds / repeats)
    seconds = {clock: max(best[r, clock] - best[1, clock], 1e-12) for clock in ("wall", "cpu")}
    return dict(us=seconds["cpu"] * 1e6, us_wall=seconds["wall"] * 1e6,
                flops_per_second={clock: 2.0 * r**3 / t for clock, t in seconds.items()})


def von_neumann_sweeps(sweep, F, pairs, labels, bounds, r, orders):
    """Time ``sweep`` from the identity over the cycle orders; returns times and counters."""
    targets = np.where(labels == 1, *bounds)
    slack, dual, direction = targets.copy(), np.zeros(len(pairs)), labels.astype(np.float64)
    Q, W, stats = np.zeros(r), np.eye(r, order="F"), np.zeros(4, dtype=np.intp)
    run = dict(visits=0, wall=0.0, cpu=0.0)
    for order in orders:
        with Stopwatch() as watch:
            sweep(F, pairs, direction, targets, slack, dual, Q, W, order, counters=stats)
        run["visits"] += len(pairs)
        run["wall"] += watch.wall
        run["cpu"] += watch.cpu
    return run, stats


def projection_cost(X, y, n_constraints, cycles, r):
    """LogDet and von Neumann sweeps over the same pairs on the first r PCA dimensions."""
    constraints = pairs_from_labels(y, n_constraints, random_state=0)
    pairs, labels = constraints.pairs, constraints.labels
    F = np.ascontiguousarray(X[:, :r])
    bounds = squared_distance_bounds(F, random_state=0)
    direction = labels.astype(np.float64)
    orders = [np.random.RandomState(c).permutation(len(pairs)).astype(np.intp)
              for c in range(cycles)]
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        # LogDet (γ = 1): B ← B · chol(I + β w wᵀ); a projection is a visit whose dual moved.
        targets = np.where(labels == 1, *bounds)
        dual, B = np.zeros(len(pairs)), np.eye(r, order="F")
        logdet = dict(visits=0, projections=0, wall=0.0, cpu=0.0)
        for order in orders:
            before = dual.copy()
            with Stopwatch() as watch:
                logdet_sweep(F, pairs, direction, targets, dual, B, 0.5, 1.0, order)
            logdet["visits"] += len(pairs)
            logdet["projections"] += int(np.count_nonzero(dual != before))
            logdet["wall"] += watch.wall
            logdet["cpu"] += watch.cpu
        # von Neumann (γ = 1, the relative slack penalty), through the eigenbasis, then
        # the same projections by Lanczos on the logarithm (VonNeumann's sweep from r = 32).
        vn, stats = von_neumann_sweeps(von_neumann_sweep, F, pairs, labels, bounds, r, orders)
        vn.update(projections=int(stats[0]), evaluations=int(stats[1]), passes=int(stats[2]),
                  rotated=int(stats[3]))
        krylov, stats = von_neumann_sweeps(von_neumann_krylov_sweep, F, pairs, labels, bounds,
                                           r, orders)
        krylov.update(projections=int(stats[0]), lanczos=int(stats[3]))
    for name, run in (("LogDet", logdet), ("von Neumann", vn),
                      ("von Neumann, Lanczos", krylov)):
        for clock in ("wall", "cpu"):
            rows.append(dict(solver=name, clock=clock, cycles=cycles, visits=run["visits"],
                             projections=run["projections"],
                             us_per_visit=run[clock] / run["visits"] * 1e6,
                             us_per_projection=run[clock] / run["projections"] * 1e6))
    ratio = {clock: (vn[clock] / vn["projections"]) / (logdet[clock] / logdet["projections"])
             for clock in ("wall", "cpu")}
    ratio_krylov = {clock: (krylov[clock] / krylov["projections"])
                    / (logdet[clock] / logdet["projections"]) for clock in ("wall", "cpu")}
    ratio_visit = {clock: (vn[clock] / vn["visits"]) / (logdet[clock] / logdet["visits"])
                   for clock in ("wall", "cpu")}
    return dict(r=r, pairs=len(pairs), rows=rows, ratio_per_projection=ratio,
                ratio_per_visit=ratio_visit, ratio_krylov_per_projection=ratio_krylov,
                lanczos_per_visit=krylov["lanczos"] / krylov["visits"], gemm=dgemm_rate(r),
                rotated_fraction=vn["rotated"] / (vn["projections"] * r),
                evaluations_per_projection=vn["evaluations"] / vn["projections"],
                passes_per_evaluation=vn["passes"] / vn["evaluations"])


# --------------------------------------------------------------------------------------
# 2. MNIST-5000 with 10,000 constraints
# --------------------------------------------------------------------------------------

def fit_timed(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        with Stopwatch() as watch:
            model.fit(X, y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return watch, converged


def mnist(X_train, X_test, y_train, y_test, n_constraints, gammas, folds):
    euclidean = knn_error(X_train, y_train, X_test, y_test, 1)
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=1).split(X_train, y_train))
    euclidean_cv = float(np.mean([
        knn_error(X_train[fit], y_train[fit], X_train[held], y_train[held], 1)
        for fit, held in splits]))
    selection = []
    for gamma in gammas:
        errors, walls, cycles, converged = [], [], [], []
        for fit_index, validation_index in splits:
            model = VonNeumann(gamma=gamma, n_neighbors=None, n_constraints=n_constraints,
                               tol=MNIST_TOL, random_state=0)
            watch, done = fit_timed(model, X_train[fit_index], y_train[fit_index])
            errors.append(knn_error(
                model.transform(X_train[fit_index]), y_train[fit_index],
                model.transform(X_train[validation_index]), y_train[validation_index], 1))
            walls.append(watch.wall)
            cycles.append(model.n_iter_)
            converged.append(done)
        selection.append(dict(gamma=gamma, validation_error=float(np.mean(errors)),
                              wall=float(np.mean(walls)), cycles=float(np.mean(cycles)),
                              converged=all(converged)))
        print(f"  gamma={gamma:g}: cross-validated 1-NN error {np.mean(errors):.4f} "
              f"(mean fit {np.mean(walls):.1f} s, {np.mean(cycles):.0f} cycles)", flush=True)
    chosen = min(selection, key=lambda row: row["validation_error"])["gamma"]
    finals = []
    for label, gamma in (("selected", chosen), ("default", VonNeumann().gamma), ("γ = 1", 1.0)):
        earlier = next((row for row in finals if row["gamma"] == gamma), None)
        if earlier is not None:
            finals.append(dict(earlier, fit=label))
            continue
        model = VonNeumann(gamma=gamma, n_neighbors=None, n_constraints=n_constraints,
                           tol=MNIST_TOL, random_state=0)
        watch, converged = fit_timed(model, X_train, y_train)
        error = knn_error(model.transform(X_train), y_train, model.transform(X_test), y_test,
                          1)
        # LogDet on the same pairs, bounds, γ and tol: the total-time reference.
        logdet = LogDet(gamma=gamma, n_neighbors=None, n_constraints=n_constraints,
                        tol=MNIST_TOL, random_state=0)
        logdet_watch, logdet_converged = fit_timed(logdet, X_train, y_train)
        assert np.array_equal(logdet.constraints_.pairs, model.constraints_.pairs)
        finals.append(dict(fit=label, gamma=gamma, wall=watch.wall, cpu=watch.cpu,
                           cycles=model.n_iter_, converged=converged, test_error=error,
                           logdet_wall=logdet_watch.wall, logdet_cpu=logdet_watch.cpu,
                           logdet_cycles=logdet.n_iter_, logdet_converged=logdet_converged))
        print(f"  {label} gamma={gamma:g}: {watch.wall:.1f} s wall ({watch.cpu:.1f} s CPU), "
              f"{model.n_iter_} cycles, test 1-NN error {error:.4f} (Euclidean "
              f"{euclidean:.4f}); LogDet {logdet_watch.cpu:.2f} s CPU, {logdet.n_iter_} cycles",
              flush=True)
    return dict(n_train=len(X_train), n_test=len(X_test), euclidean_error=euclidean,
                euclidean_cv_error=euclidean_cv, selection=selection, fits=finals)


# --------------------------------------------------------------------------------------
# 3. MEG updates per second at d = 100
# --------------------------------------------------------------------------------------

def meg_rate(X, y, n_pairs):
    model = MEG(n_constraints=n_pairs, random_state=0)
    constraints = model._constraints_from_labels(X, y, np.random.RandomState(0))
    MEG(eta="auto").partial_fit(X[:50], constraints=type(constraints)(
        np.array([[0, 1]]), np.array([1.0])))  # warm-up: imports, first allocation
    with Stopwatch() as watch:
        model.partial_fit(X, constraints=constraints)
    updates = len(constraints.pairs)
    return dict(d=X.shape[1], updates=updates, wall=watch.wall, cpu=watch.cpu,
                updates_per_second_wall=updates / watch.wall,
                updates_per_second_cpu=updates / watch.cpu)


# --------------------------------------------------------------------------------------
# 4. Kulis et al., 2009, §7: exact projections against DefiniteBoost
# --------------------------------------------------------------------------------------

def wine_kernel_problem(n_objects=52, n_constraints=100):
    X, y = load_wine(return_X_y=True)
    _, X, _, y = train_test_split(X, y, test_size=n_objects, stratify=y, random_state=0)
    X = StandardScaler().fit_transform(X)
    squared = ((X[:, None] - X[None]) ** 2).sum(-1)
    target = np.exp(-squared / (2 * X.shape[1]))
    target /= np.trace(target)
    half = 0.5 * (np.diag(target)[:, None] + np.diag(target) - 2 * target)
    upper = np.triu_indices(n_objects, k=1)
    closest = np.argsort(half[upper], kind="stable")[:n_constraints]
    pairs = np.column_stack([upper[0][closest], upper[1][closest]])
    bound = half[upper][closest].max()  # the target kernel meets all of them
    return pairs, bound, target, y


def relative_error(W, reference):
    return float(np.linalg.norm(W - reference) / np.linalg.norm(reference))


def trace_one(Q, W):
    M = (W * np.exp(Q - Q.max())) @ W.T
    return M / np.trace(M)


def trajectories(pairs, bound, n_objects, cycles, reference):
    """Distance to the optimum after each cycle, by the kernels DefiniteBoost runs."""
    F = np.eye(n_objects) / np.sqrt(2)
    m = len(pairs)
    direction, targets = np.ones(m), np.full(m, bound)
    differences = F[pairs[:, 0]] - F[pairs[:, 1]]
    lengths = np.einsum("ij,ij->i", differences, differences)
    top, bottom = lengths - targets, -targets
    curves = {}
    rng = np.random.RandomState(0)
    Q, W, dual = np.zeros(n_objects), np.eye(n_objects, order="F"), np.zeros(m)
    curve = []
    for _ in range(cycles["exact"]):
        von_neumann_sweep(F, pairs, direction, targets.copy(), np.zeros(m), dual, Q, W,
                          rng.permutation(m).astype(np.intp), relative=True)
        curve.append(relative_error(trace_one(Q, W), reference))
    curves["exact"] = curve
    for name, correction in (("approximate", False), ("approximate, corrected", True)):
        Q, W, dual, curve = np.zeros(n_objects), np.eye(n_objects, order="F"), np.zeros(m), []
        for _ in range(cycles["approximate"]):
            definite_boost_steps(F, pairs.astype(np.intp), direction,
                                 np.arange(m + 1, dtype=np.intp), targets, bottom, top, dual,
                                 Q, W, offset=np.zeros(1), max_steps=m, tol=0.0,
                                 correction=correction, floor=-np.inf)
            curve.append(relative_error(trace_one(Q, W), reference))
        curves[name] = curve
    return curves


def first_below(curve, level):
    hits = np.flatnonzero(np.asarray(curve) <= level)
    return int(hits[0]) + 1 if len(hits) else None


def definite_boost_trajectories(max_cycles):
    pairs, bound, target, classes = wine_kernel_problem()
    n = len(target)
    X = np.eye(n) / np.sqrt(2)
    constraints = PairConstraints(pairs, np.ones(len(pairs)), bounds=np.full(len(pairs), bound))
    # The paper's hard constraints: gamma=np.inf.
    reference = DefiniteBoost(projection="exact", gamma=np.inf, tol=1e-12,
                              max_iter=100_000).fit(X, constraints=constraints)
    reference = reference.get_mahalanobis_matrix()
    runs = []
    for name, params in (("exact von Neumann", {"projection": "exact"}),
                         ("DefiniteBoost", {"dual_correction": False}),
                         ("DefiniteBoost, dual corrections", {"dual_correction": True})):
        model = DefiniteBoost(gamma=np.inf, tol=1e-3, max_iter=max_cycles, **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            with Stopwatch() as watch:
                model.fit(X, constraints=constraints)
        W = model.get_mahalanobis_matrix()
        runs.append(dict(learner=name, cycles=model.n_iter_, projections=model.n_projections_,
                         wall=watch.wall, converged=not caught,
                         error_to_optimum=relative_error(W, reference),
                         dual_objective=model.dual_objective_))
        print(f"  {name}: {model.n_iter_} cycles, {model.n_projections_} projections, "
              f"‖W − W*‖/‖W*‖ = {runs[-1]['error_to_optimum']:.2e}", flush=True)
    cycles = {"exact": max(r["cycles"] for r in runs if r["learner"].startswith("exact")) * 3,
              "approximate": max_cycles}
    curves = trajectories(pairs, bound, n, cycles, reference)
    reach = {name: {str(level): first_below(curve, level) for level in (1e-2, 1e-3, 1e-4)}
             for name, curve in curves.items()}
    # Kept at about 100 log-spaced cycles: enough for the log-log plot.
    sampled = {}
    for name, curve in curves.items():
        kept = np.unique(np.geomspace(1, len(curve), 100).astype(int))
        sampled[name] = {"cycle": kept.tolist(), "error": [curve[c - 1] for c in kept]}
    return dict(n_objects=n, n_constraints=len(pairs), bound=bound, runs=runs,
                curves=sampled, cycles_to_reach=reach)


def projection_costs(n_constraints, repeats):
    """Part 1 at every r of ``RANKS``."""
    X_train, _, y_train, _ = mnist_split()
    costs = []
    for r in RANKS:
        print(f"1. projection cost at r = {r}", flush=True)
        cost = projection_cost(X_train, y_train, n_constraints, repeats, r)
        costs.append(cost)
        print(f"  ratio {cost['ratio_per_projection']['cpu']:.1f}× per projection (CPU), "
              f"{cost['rotated_fraction']:.1%} of the columns rotated; by Lanczos "
              f"{cost['ratio_krylov_per_projection']['cpu']:.1f}×, "
              f"{cost['lanczos_per_visit']:.1f} steps per visit", flush=True)
    return costs


def mnist_fits(n_constraints, gammas, repeats):
    """Part 2 on the MNIST-5000 split."""
    return mnist(*mnist_split(), n_constraints, gammas, repeats)


def meg_updates(n_pairs):
    """Part 3: MEG's updates per second on the MNIST-5000 training part."""
    X_train, _, y_train, _ = mnist_split()
    rate = meg_rate(X_train, y_train, n_pairs)
    print(f"  {rate['updates_per_second_cpu']:,.0f} updates/s (CPU)", flush=True)
    return rate


CASES = [
    Case("projection", protocol=projection_costs,
         params={"n_constraints": 10_000, "repeats": 3},
         quick={"n_constraints": 2000, "repeats": 2}),
    Case("mnist", protocol=mnist_fits,
         params={"n_constraints": 10_000, "gammas": [0.001, 0.01, 0.1, 1.0], "repeats": 3},
         quick={"n_constraints": 2000, "gammas": [0.01, 1.0], "repeats": 2}),
    Case("meg", protocol=meg_updates, params={"n_pairs": 20_000}, quick={"n_pairs": 5000}),
    Case("definite_boost", protocol=definite_boost_trajectories,
         params={"max_cycles": 5000}, quick={"max_cycles": 300}),
]


if __name__ == "__main__":
    sys.exit(main("von_neumann", CASES))
