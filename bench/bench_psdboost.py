"""PSDBoost against the SDP (3) solved directly, Shen, Welsh & Wang (2008) §6, and timings.

Sections 1-3 solve the SDP (3) as printed (``margin="absolute"``, ``min_rank=1``,
``shrinkage=0``, ``tol=1e-5``) on the paper's triplets: each point's ``k`` nearest
same-class samples against its ``k`` nearest other-class samples. Measures, in one run:

1. ``sdp``: PSDBoost against cvxpy with Clarabel (interior point) and SCS (first
   order) on the same triplets at D = 16, 32, 64, hard (C = 1) and soft (C = 0.01)
   margin. Targets: objective within 1e-3 relative of Clarabel's, and at least 10x
   less time than the conic solver at D = 64.
2. ``synthetic``: Shen et al., 2008, §6's first experiment: 600 points in 24 dimensions, 550
   triplets (nearest same-class and other-class neighbour, subsampled); the dual
   objective π per iteration (the paper's Fig. 1) for Algorithm 1 as printed
   (``smoothing=0, bases_per_iter=1``) and for the defaults, against the SDP optimum.
3. ``digits``: Shen et al., 2008, §6's second experiment on scikit-learn's bundled digits
   restricted to 1, 5, 7, 9 (the paper used UCI Pendigits): 80 training points per
   digit, 1-NN test error with PSDBoost's metric, the direct SDP's and the Euclidean.
4. ``eigen``: the base learner's dense and Lanczos paths at D = 256…1536, which
   sets ``_DENSE_MAX_FEATURES``.
5. ``timing``: PSDBoost with its defaults on the five training folds of the suite's
   ``cells`` (1,600 × 56, 2 classes), with the restricted master LP warm-started in
   ``highspy`` and solved from scratch by scipy's ``linprog``. Target: under 10 s.
6. ``overlap``: the defaults, and ``tol=0.1``, on heavily overlapping classes, where
   column generation tails off: ``make_classification`` with 20 informative features
   and 5 % of the labels flipped, fitted on four fifths (1,600 × 57 with 7 classes,
   2,000 × 100 with 10), 5-NN error on the last fifth against Euclidean's.

Every fit runs with BLAS limited to one thread (Clarabel and SCS are single-threaded
too; on a shared two-core machine OpenBLAS's second thread made small products ten
times slower) and is timed on the wall clock and on this process's CPU clock.

    python bench/bench_psdboost.py            # writes docs/benchmarks/psdboost.{json,md,png}
    python bench/bench_psdboost.py --quick    # D = 16, 32 only, no digits SDP; scratch dir
    python bench/bench_psdboost.py --only timing digits_defaults   # after new defaults
"""

import sys
import warnings

import cvxpy as cp
import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

import psdmetric._boost._master_lp as master_lp
import psdmetric._boost._pricing as pricing
from _datasets import load_suite
from _harness import Case, knn_error, main
from _render.psdboost import HARD, SOFT
from _reporting import Stopwatch
from psdmetric import PSDBoost, TripletConstraints

# (samples, features, classes) of the overlapping problems; a fifth is held out.
OVERLAP_SHAPES = ((2000, 57, 7), (2500, 100, 10))


def synthetic(n_samples, n_features, random_state, n_informative=4, n_classes=3):
    """Classes apart in ``n_informative`` directions, unit Gaussian noise in all."""
    rng = np.random.RandomState(random_state)
    y = np.arange(n_samples) % n_classes
    centers = np.zeros((n_classes, n_features))
    centers[:, :n_informative] = 2.0 * rng.randn(n_classes, n_informative)
    return centers[y] + rng.randn(n_samples, n_features), y


# The SDP (3) as printed, solved to the accuracy the oracle comparisons need.
PAPER = {"margin": "absolute", "min_rank": 1, "shrinkage": 0.0, "tol": 1e-5}


def nearest_neighbour_triplets(X, y, n_neighbors=1, max_triplets=None, random_state=0):
    """The paper's triplets: each point's k nearest same-class × k nearest other-class."""
    distances = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.fill_diagonal(distances, np.inf)
    triplets = []
    for i in range(len(X)):
        same = np.flatnonzero(y == y[i])
        other = np.flatnonzero(y != y[i])
        targets = same[np.argsort(distances[i, same], kind="stable")[:n_neighbors]]
        impostors = other[np.argsort(distances[i, other], kind="stable")[:n_neighbors]]
        triplets += [(i, j, k) for j in targets for k in impostors]
    triplets = np.array(triplets)
    if max_triplets is not None and max_triplets < len(triplets):
        rng = np.random.RandomState(random_state)
        triplets = triplets[np.sort(rng.choice(len(triplets), max_triplets, replace=False))]
    return triplets


def fit_psdboost(X, triplets, C, **params):
    learner = PSDBoost(C=C, random_state=0, **{**PAPER, **params})
    with warnings.catch_warnings(record=True) as caught, Stopwatch() as clock:
        warnings.simplefilter("always", ConvergenceWarning)
        learner.fit(X, constraints=TripletConstraints(triplets))
    return learner, clock, bool(caught)


def solve_sdp(X, triplets, C, solver):
    """The SDP (3) in cvxpy; returns (objective, X, wall, cpu, solver seconds, status)."""
    i, j, k = triplets.T
    P, Q = X[i] - X[k], X[i] - X[j]
    # At unit scale Clarabel's and SCS's absolute tolerances mean something; the
    # objective scales with the squared scale.
    scale = np.sqrt(max(np.einsum("ij,ij->i", P, P).max(), np.einsum("ij,ij->i", Q, Q).max()))
    P, Q = P / scale, Q / scale
    M = cp.Variable((X.shape[1], X.shape[1]), PSD=True)
    rho = cp.Variable()
    xi = cp.Variable(len(triplets), nonneg=True)
    margins = cp.sum(cp.multiply(P @ M, P), axis=1) - cp.sum(cp.multiply(Q @ M, Q), axis=1)
    problem = cp.Problem(cp.Maximize(rho - C * cp.sum(xi)),
                         [cp.trace(M) == 1, margins >= rho - xi])
    with warnings.catch_warnings(), Stopwatch() as clock:
        warnings.simplefilter("ignore")  # "inaccurate" shows in the status column
        problem.solve(solver=solver)
    return {"objective": problem.value * scale**2, "matrix": M.value, "wall": clock.wall,
            "cpu": clock.cpu, "solver_seconds": problem.solver_stats.solve_time,
            "status": problem.status}


def rank(matrix, relative=1e-3):
    """Numerical rank: eigenvalues above ``relative`` times the largest (both solvers
    stop at ~1e-4 relative accuracy, so smaller directions are solver noise)."""
    values = np.linalg.eigvalsh((matrix + matrix.T) / 2)
    return int(np.sum(values > relative * values.max()))


def sdp_comparison(dimensions, n_samples=400):
    rows = []
    for n_features in dimensions:
        X, y = synthetic(n_samples, n_features, random_state=n_features)
        triplets = nearest_neighbour_triplets(X, y)
        for C in (HARD, SOFT):
            learner, clock, capped = fit_psdboost(X, triplets, C)
            row = {"n_features": n_features, "n_triplets": len(triplets), "C": C,
                   "psdboost_objective": learner.objective_, "psdboost_wall": clock.wall,
                   "psdboost_cpu": clock.cpu, "iterations": learner.n_iter_,
                   "bases": len(learner.bases_),
                   "psdboost_rank": rank(learner.get_mahalanobis_matrix()),
                   "max_iter_reached": capped}
            for solver in ("CLARABEL", "SCS"):
                result = solve_sdp(X, triplets, C, solver)
                name = solver.lower()
                row.update({f"{name}_objective": result["objective"],
                            f"{name}_wall": result["wall"], f"{name}_cpu": result["cpu"],
                            f"{name}_status": result["status"]})
                if solver == "CLARABEL":
                    row["sdp_rank"] = rank(result["matrix"])
            reference = row["clarabel_objective"]
            row["relative_error"] = abs(row["psdboost_objective"] - reference) / abs(reference)
            row["speedup_clarabel"] = row["clarabel_wall"] / row["psdboost_wall"]
            row["speedup_scs"] = row["scs_wall"] / row["psdboost_wall"]
            rows.append(row)
            print(f"D={n_features:3d} C={C:<5} PSDBoost {row['psdboost_wall']:7.2f} s "
                  f"({row['iterations']} it, {row['bases']} bases, rank "
                  f"{row['psdboost_rank']})  Clarabel {row['clarabel_wall']:7.2f} s  SCS "
                  f"{row['scs_wall']:6.2f} s  rel. err {row['relative_error']:.1e}  "
                  f"speed-up {row['speedup_clarabel']:.1f}x / {row['speedup_scs']:.1f}x",
                  flush=True)
    return rows


def paper_synthetic(max_iter):
    X, y = synthetic(600, 24, random_state=2008)
    triplets = nearest_neighbour_triplets(X, y, max_triplets=550)
    runs = {}
    for name, params in [("algorithm 1", {"smoothing": 0.0, "bases_per_iter": 1}),
                         ("defaults", {})]:
        learner, clock, capped = fit_psdboost(X, triplets, SOFT, max_iter=max_iter, **params)
        runs[name] = {"dual_objective": learner.dual_objective_,
                      "upper_bound": learner.max_eigenvalue_, "iterations": learner.n_iter_,
                      "bases": len(learner.bases_), "objective": learner.objective_,
                      "wall": clock.wall, "cpu": clock.cpu, "max_iter_reached": capped}
    sdp = solve_sdp(X, triplets, SOFT, "CLARABEL")
    result = {"n_samples": 600, "n_features": 24, "n_triplets": len(triplets), "C": SOFT,
              "sdp_objective": sdp["objective"], "sdp_wall": sdp["wall"], "runs": runs}
    for name, run in runs.items():
        error = abs(run["objective"] - sdp["objective"])
        run["relative_error"] = error / abs(sdp["objective"])
        print(f"§6 synthetic, {name}: {run['iterations']} iterations, {run['bases']} "
              f"bases, {run['wall']:.2f} s, objective {run['objective']:.6f} vs SDP "
              f"{sdp['objective']:.6f} (rel. {run['relative_error']:.1e})", flush=True)
    return result


def digits_split(per_digit=80):
    """Digits 1/5/7/9, ``per_digit`` training points each, and the 1-NN test error."""
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [1, 5, 7, 9])
    X, y = X[keep], y[keep]
    rng = np.random.RandomState(0)
    train = np.concatenate([rng.choice(np.flatnonzero(y == digit), per_digit, replace=False)
                            for digit in (1, 5, 7, 9)])
    test = np.setdiff1d(np.arange(len(y)), train)

    def error(transform):
        knn = KNeighborsClassifier(1).fit(transform(X[train]), y[train])
        return float(1.0 - knn.score(transform(X[test]), y[test]))

    return X, y, train, test, error


def digits_defaults():
    """PSDBoost with its defaults, fitted on the labels of the digits split."""
    X, y, train, _, error = digits_split()
    with Stopwatch() as clock:
        learner = PSDBoost(random_state=0).fit(X[train], y[train])
    result = {
        "psdboost_error": error(learner.transform), "psdboost_wall": clock.wall,
        "psdboost_cpu": clock.cpu, "n_triplets": len(learner.constraints_.triplets),
        "iterations": learner.n_iter_, "psdboost_rank": rank(learner.get_mahalanobis_matrix()),
        "euclidean_error": error(lambda Z: Z),
    }
    print(f"digits, defaults from labels: error {result['psdboost_error']:.2%}", flush=True)
    return result


def digits_experiment(with_sdp, per_digit=80, neighbours=(1, 3, 5), sdp_max_neighbours=3):
    """1-NN test error on digits 1/5/7/9 with triplets from 1, 3 and 5 neighbours.

    The paper does not say how many neighbours its triplets used; with one (320
    triplets) the 64-dimensional problem has a low-rank optimum, so the count matters.
    The direct SDP runs for up to ``sdp_max_neighbours`` neighbours (Clarabel's time
    grows with the number of triplets).
    """
    X, y, train, test, error = digits_split(per_digit)

    result = {"n_train": len(train), "n_test": len(test), "n_features": X.shape[1],
              "euclidean_error": error(lambda Z: Z), "runs": []}
    print(f"digits 1/5/7/9: {len(train)} train, {len(test)} test, Euclidean 1-NN error "
          f"{result['euclidean_error']:.2%}", flush=True)
    for n_neighbors in neighbours:
        triplets = nearest_neighbour_triplets(X[train], y[train], n_neighbors)
        for C in (HARD, SOFT):
            learner, clock, capped = fit_psdboost(X[train], triplets, C)
            run = {"n_neighbors": n_neighbors, "n_triplets": len(triplets), "C": C,
                   "psdboost_error": error(learner.transform),
                   "psdboost_objective": learner.objective_, "psdboost_wall": clock.wall,
                   "iterations": learner.n_iter_, "bases": len(learner.bases_),
                   "psdboost_rank": rank(learner.get_mahalanobis_matrix()),
                   "max_iter_reached": capped}
            if with_sdp and n_neighbors <= sdp_max_neighbours:
                sdp = solve_sdp(X[train], triplets, C, "CLARABEL")
                values, vectors = np.linalg.eigh((sdp["matrix"] + sdp["matrix"].T) / 2)
                factor = (np.sqrt(np.maximum(values, 0)) * vectors).T
                run.update({"sdp_error": error(lambda Z: Z @ factor.T),
                            "sdp_objective": sdp["objective"], "sdp_wall": sdp["wall"],
                            "sdp_status": sdp["status"], "sdp_rank": rank(sdp["matrix"])})
            result["runs"].append(run)
            sdp_text = (f", SDP error {run['sdp_error']:.2%} ({run['sdp_wall']:.2f} s)"
                        if "sdp_error" in run else "")
            print(f"  {n_neighbors} neighbours ({len(triplets)} triplets), C={C}: PSDBoost "
                  f"error {run['psdboost_error']:.2%} ({run['psdboost_wall']:.2f} s, "
                  f"{run['iterations']} it){sdp_text}", flush=True)
    return result


def suite_timing(name="cells"):
    """Fit time of the defaults on each training fold of a suite set, highspy vs linprog."""
    X, y = load_suite(name)
    rows = []
    splits = StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(X, y)
    for fold, (train, test) in enumerate(splits):
        scaler = StandardScaler().fit(X[train])
        X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
        row = {"fold": fold, "n_samples": len(train), "n_features": X.shape[1]}
        for backend in ("highspy", "linprog"):
            saved = master_lp.highspy
            if backend == "linprog":
                master_lp.highspy = None
            try:
                with warnings.catch_warnings(record=True) as caught, Stopwatch() as clock:
                    warnings.simplefilter("always", ConvergenceWarning)
                    learner = PSDBoost(random_state=0).fit(X_train, y[train])
            finally:
                master_lp.highspy = saved
            row[backend] = {
                "wall": clock.wall, "cpu": clock.cpu, "iterations": learner.n_iter_,
                "objective": learner.objective_, "warned": bool(caught),
                "error": knn_error(learner.transform(X_train), y[train],
                                   learner.transform(X_test), y[test]),
                "rank": rank(learner.get_mahalanobis_matrix()),
            }
        row["relative_difference"] = abs(row["highspy"]["objective"] - row["linprog"][
            "objective"]) / abs(row["linprog"]["objective"])
        rows.append(row)
        print(f"{name} fold {fold}: highspy {row['highspy']['wall']:.2f} s "
              f"({row['highspy']['cpu']:.2f} CPU s), linprog {row['linprog']['wall']:.2f} s "
              f"({row['linprog']['cpu']:.2f} CPU s), objectives differ by "
              f"{row['relative_difference']:.1e}", flush=True)
    return {"set": name, "folds": rows}


def overlapping_classes():
    """Fit time and held-out 5-NN error of the defaults, and of tol=0.1, on overlap."""
    rows = []
    for n_samples, n_features, n_classes in OVERLAP_SHAPES:
        X, y = make_classification(n_samples, n_features, n_informative=20,
                                   n_classes=n_classes, flip_y=0.05, random_state=0)
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.2, stratify=y, random_state=0)
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
        row = {"n_samples": len(X_train), "n_features": n_features, "n_classes": n_classes,
               "euclidean_error": knn_error(X_train, y_train, X_test, y_test)}
        for label, params in (("defaults", {}), ("tol=0.1", {"tol": 0.1})):
            with warnings.catch_warnings(), Stopwatch() as clock:
                warnings.simplefilter("ignore", ConvergenceWarning)
                learner = PSDBoost(random_state=0, **params).fit(X_train, y_train)
            row[label] = {
                "wall": clock.wall, "cpu": clock.cpu, "iterations": learner.n_iter_,
                "error": knn_error(learner.transform(X_train), y_train,
                                   learner.transform(X_test), y_test),
            }
            print(f"overlap {len(X_train)} x {n_features}, {label}: {clock.cpu:.1f} CPU s, "
                  f"{learner.n_iter_} iterations, error {row[label]['error']:.3f} "
                  f"(Euclidean {row['euclidean_error']:.3f})", flush=True)
        rows.append(row)
    return rows


def eigen_paths(dimensions, n_weighted=1000, pair_counts=(8, 39)):
    """CPU seconds per call of the base learner, dense H vs Lanczos.

    39 pairs is what the defaults ask for at ``min_rank`` 32 and 8 bases per iteration.
    """
    rng = np.random.RandomState(0)
    rows = []
    default_threshold = pricing._DENSE_MAX_FEATURES
    for n_features in dimensions:
        differences = rng.randn(2 * n_weighted, n_features)
        w = rng.rand(n_weighted)
        w /= w.sum()
        row = {"n_features": n_features, "difference_vectors": 2 * n_weighted}
        for n_pairs in pair_counts:
            for path, threshold in (("dense", 10**9), ("lanczos", 0)):
                pricing._DENSE_MAX_FEATURES = threshold
                with Stopwatch() as clock:
                    for _ in range(3):
                        pricing.top_eigenpairs(differences, w, n_pairs,
                                               np.random.RandomState(0))
                row[f"{path}_{n_pairs}"] = clock.cpu / 3
            print(f"eigen D={n_features}, {n_pairs} pairs: dense "
                  f"{row[f'dense_{n_pairs}'] * 1e3:.0f} ms, Lanczos "
                  f"{row[f'lanczos_{n_pairs}'] * 1e3:.0f} ms (CPU)", flush=True)
        pricing._DENSE_MAX_FEATURES = default_threshold
        rows.append(row)
    return rows


def cases(args):
    """One case a section of the page, each with its smaller quick version."""
    return [
        Case("timing", protocol=suite_timing),
        Case("sdp", protocol=sdp_comparison, params={"dimensions": [16, 32, 64]},
             quick={"dimensions": [16, 32]}),
        Case("synthetic", protocol=paper_synthetic, params={"max_iter": 500},
             quick={"max_iter": 150}),
        Case("digits", protocol=digits_experiment, params={"with_sdp": True},
             quick={"with_sdp": False}),
        Case("digits_defaults", protocol=digits_defaults),
        Case("eigen", protocol=eigen_paths, params={"dimensions": [256, 512, 1024, 1536]},
             quick={"dimensions": [256, 512]}),
        Case("overlap", protocol=overlapping_classes),
    ]


if __name__ == "__main__":
    sys.exit(main("psdboost", cases, blas_threads=1))
