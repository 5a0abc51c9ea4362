"""MMC, SDML, LSML and SCML against metric-learn 0.7.0 on the same constraints, every suite set.

For each suite set and each of the first ``--folds`` folds of the suite protocol
(stratified 5-fold, shuffled, seed 0; ``StandardScaler`` on the training fold), the
constraints are drawn once from the training labels with the fold as seed and given to
both libraries: random similar/dissimilar pairs (MMC, SDML), quadruplets of a
same-class and a different-class pair (LSML), every sample's 3 nearest same-class x 10
nearest other-class triplets with psdmetric's local-LDA basis as an array (SCML).
metric-learn runs its weakly supervised class on index tuples in its own venv.

Per fold: the objective each library's metric reaches, evaluated by the same function
(MMC: Σ_D d_M / √(Σ_S d²_M), higher is better and scale-free; LSML: its objective,
lower is better; SCML: mean hinge + β tr(M), lower is better, exact for unit bases;
SDML: psdmetric's objective, lower is better), the 5-NN test error, and the fit's CPU
seconds of a second fit in the same process (the first, untimed, pays the one-time
costs of imports and BLAS start-up, in both libraries). A metric-learn run that exceeds
``--budget`` wall seconds (both fits) is killed: its cell says "over budget" and its
remaining folds are not run; psdmetric's fits run in a child process under the same
limit.

    python bench/bench_metric_learn_convex.py [--folds 3] [--budget 60]
"""

import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import psdmetric
from _anchors import AnchorFitError
from _datasets import SUITE
from _folds import scaled_fold
from _harness import Case, knn_error, main, read_json, run_anchor, write_json
from _reporting import run_with_time_limit
from psdmetric import QuadrupletConstraints, pairs_from_labels
from psdmetric._convex._lsml import LSMLObjective
from psdmetric._convex._mmc import dissimilar_sum
from psdmetric._convex._scml_basis import default_lda_bases, knn_triplets, lda_basis

CACHE = Path("/tmp/psdmetric-convex-cells")
LEARNERS = ("MMC", "SDML", "LSML", "SCML")
SCML_BETA = 1e-5


def _constraints(learner, X, y, fold):
    """The fold's constraints, for psdmetric and for metric-learn (index arrays)."""
    if learner in ("MMC", "SDML"):
        pairs = pairs_from_labels(y, None, fold)
        return pairs, {"pairs": pairs.pairs, "pair_labels": pairs.labels}
    if learner == "LSML":
        quadruplets = QuadrupletConstraints.from_labels(X, y, random_state=fold)
        return quadruplets, {"tuples": quadruplets.quadruplets}
    codes = np.unique(y, return_inverse=True)[1].ravel()
    triplets = psdmetric.TripletConstraints(knn_triplets(X, codes, 3, 10))
    basis = lda_basis(X, codes, default_lda_bases(*X.shape, codes.max() + 1),
                      np.random.RandomState(fold))
    return (triplets, basis), {"tuples": triplets.triplets, "basis": basis}


def _ours(learner, constraints):
    """psdmetric's learner on metric-learn's problem: every feature (n_components=None)."""
    if learner == "MMC":
        return psdmetric.MMC(n_components=None, random_state=0), constraints
    if learner == "SDML":
        return psdmetric.SDML(0.5, random_state=0), constraints
    if learner == "LSML":
        return psdmetric.LSML(n_components=None, random_state=0), constraints
    triplets, basis = constraints
    # metric-learn's solver settings: all of its 10000 updates at its rate.
    return psdmetric.SCML(SCML_BETA, basis=basis, gamma=5e-3, max_iter=10000,
                          batch_size=10, n_iter_no_change=20, random_state=0), triplets


def objective(learner, X, constraints, M):
    """The shared objective of ``M`` (see the module docstring)."""
    if learner == "MMC":
        differences = X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]
        similar = differences[constraints.labels == 1]
        spread = np.einsum("ij,ij->i", similar @ M, similar).sum()
        return float(dissimilar_sum(differences[constraints.labels == -1], M)[0]
                     / np.sqrt(spread))
    if learner == "LSML":
        q = constraints.quadruplets
        return float(LSMLObjective(X[q[:, 0]] - X[q[:, 1]], X[q[:, 2]] - X[q[:, 3]],
                                   np.eye(X.shape[1])).value(M))
    if learner == "SCML":
        t = constraints[0].triplets
        near, far = X[t[:, 0]] - X[t[:, 1]], X[t[:, 0]] - X[t[:, 2]]
        slack = 1 + np.einsum("ij,ij->i", near @ M, near) - np.einsum("ij,ij->i", far @ M, far)
        return float(np.maximum(slack, 0).mean() + SCML_BETA * np.trace(M))
    from psdmetric._convex._sdml import pair_matrix, positive_definite
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        C = positive_definite(np.eye(X.shape[1]) + 0.5 * pair_matrix(X, constraints))[0]
    scale = np.sqrt(np.diag(C))
    off = np.abs(M * np.outer(scale, scale))
    sign, log_det = np.linalg.slogdet(M)
    if sign <= 0:
        return float("inf")
    return float(np.vdot(M, C) - log_det + 0.01 * (off.sum() - np.trace(off)))


def _psdmetric_fold(learner, X, Xte, y, yte, constraints):
    estimator, given = _ours(learner, constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _ours(learner, constraints)[0].fit(X, constraints=given)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        estimator.fit(X, constraints=given)
        cpu = time.process_time() - start
    M = estimator.get_mahalanobis_matrix()
    return {"objective": objective(learner, X, constraints, M), "cpu": cpu,
            "error": knn_error(estimator.transform(X), y, estimator.transform(Xte), yte),
            "warnings": sorted({str(w.category.__name__) for w in caught})}


def _metric_learn_fold(learner, X, Xte, y, yte, constraints, given, budget):
    params = {"SCML": {"beta": SCML_BETA, "random_state": 0}}.get(learner, {})
    try:
        result = run_anchor(f"metric_learn:{learner}", X, params=params, timeout=budget,
                            warm_up=True, **given)
    except subprocess.TimeoutExpired:
        return {"over_budget": True}
    except AnchorFitError as exc:
        # metric-learn's SDML wraps the solver's error at the end of a long message.
        return {"failed": str(exc)[-300:]}
    return {"objective": objective(learner, X, constraints, result.metric),
            "cpu": result.fit_cpu_seconds,
            "error": knn_error(result.transform(X), y, result.transform(Xte), yte),
            "warnings": sorted({w.split(":")[0] for w in result.warnings})}


def cell(learner, dataset, folds, budget):
    """Both libraries on the first ``folds`` folds of one data set (cached per cell)."""
    CACHE.mkdir(exist_ok=True)
    path = _cache_path(learner, dataset, folds, budget)
    cached = read_json(path)
    if cached is not None:
        return cached
    record = {"learner": learner, "dataset": dataset, "psdmetric": [], "metric_learn": []}
    over = ours_over = False
    for fold in range(folds):
        X, Xte, y, yte = scaled_fold(dataset, fold)
        record["shape"] = [len(X) + len(Xte), X.shape[1], len(np.unique(y))]
        constraints, given = _constraints(learner, X, y, fold)
        if not ours_over:
            status, ours = run_with_time_limit(_psdmetric_fold,
                                               (learner, X, Xte, y, yte, constraints), budget)
            ours_over = status != "ok"
            record["psdmetric"].append(ours if status == "ok" else {status: ours})
        if not over:
            theirs = _metric_learn_fold(learner, X, Xte, y, yte, constraints, given, budget)
            over = theirs.get("over_budget", False)
            record["metric_learn"].append(theirs)
        print(f"  {learner} {dataset} fold {fold}: ours {record['psdmetric'][-1]}, "
              f"metric-learn {record['metric_learn'][-1]}", flush=True)
        if over and ours_over:
            break
    write_json(path, record)
    return record


def _arguments(parser):
    parser.add_argument("--folds", type=int, default=3, help="folds of the 5 to run")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="wall seconds per metric-learn fit before it is killed")
    parser.add_argument("--learners", nargs="+", default=LEARNERS, choices=LEARNERS)
    parser.add_argument("--sets", nargs="+", default=SUITE, choices=SUITE)
    parser.add_argument("--cached-only", action="store_true",
                        help="render only the cells already measured (a run cut short)")


def cases(args):
    folds = 1 if args.quick else args.folds
    sets = ("iris", "wine") if args.quick else args.sets
    return [Case(f"{learner} / {dataset}", protocol=cell, into="cells",
                 params={"learner": learner, "dataset": dataset, "folds": folds,
                         "budget": args.budget})
            for dataset in sets for learner in args.learners
            if not args.cached_only or _cache_path(learner, dataset, folds, args.budget).exists()]


def _cache_path(learner, dataset, folds, budget):
    return CACHE / f"{learner}__{dataset}__{folds}__{budget}.json"


if __name__ == "__main__":
    sys.exit(main("convex", cases, add_arguments=_arguments))
