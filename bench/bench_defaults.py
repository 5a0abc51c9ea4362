"""Leave-one-data-set-out choice of every learner's defaults on the development suite.

For each learner a small grid of candidate settings (how pairs are drawn from the labels
and how many, slack, rates) is evaluated on every (data set, fold) of the suite under
the suite protocol (``_suite``: 5-fold stratified, ``StandardScaler`` → learner →
5-NN), each fold cached. A setting's score on a data set is the mean over the folds of
``log((error + ε) / (euclidean + ε))``, ε = 0.005: scale-free, 0 for a metric as good
as Euclidean, negative when better. For each held-out data set the setting with the
best mean score over the other data sets is chosen and scored on the held-out one; the
default is the setting chosen on all data sets. Every fold is fitted with three seeds
(``random_state`` 0, 1, 2: the order of the online learners' pairs, the cyclic order,
random pairs); a setting's score is the mean over the seeds, and the held-out count is
reported for each seed, since one seed of an online learner can be a lucky draw. The
grid runs on the 12 suite sets with d ≤ 100 (the range the defaults must also fit fast
on); MNIST-5000 (d = 784) and the tissue gene expression set (d = 500) are left to the
suite table, where the chosen defaults are scored on them.

    python bench/bench_defaults.py            # writes docs/benchmarks/defaults.{json,md}
    python bench/bench_defaults.py --learners LogDet POLA --out /tmp/defaults
"""

import math
import sys
import time
import warnings

import numpy as np

import psdmetric
from _datasets import SUITE
from _reporting import (
    ERROR_RATIO_EPSILON as EPSILON,
    finish_machine,
    log_error_ratio,
    machine,
    machine_line,
    parse_arguments,
    pyplot,
    write,
)
from _suite import N_SPLITS, knn_error, learner_fold, scaled_fold, suite_data

DATASETS = tuple(name for name in SUITE
                 if name not in ("mnist5000", "tissue_gene_expression"))
SEEDS = (0, 1, 2)

# Every setting names each knob it varies, so that it does not depend on the defaults.
_PAIRS = ({"n_neighbors": None}, {"n_neighbors": 1}, {"n_neighbors": 3})
_POLA_STOPS = ({"tol": 0.01, "max_iter": 50}, {"tol": 0.001, "max_iter": 200})
GRIDS = {
    "LogDet": [{**pairs, "gamma": gamma} for gamma in (1.0, 0.1) for pairs in _PAIRS]
    + [{"n_neighbors": None, "gamma": 0.01}, {"n_neighbors": 3, "gamma": 0.01}],
    # Looser tolerances first: a tie (the same errors on every fold) goes to the first
    # setting, so to the one that stops the cycles soonest.
    "VonNeumann": [{"n_neighbors": 3, "gamma": 0.1, "tol": tol} for tol in (0.1, 0.03, 0.01)]
    + [{**pairs, "gamma": gamma, "tol": 1e-3} for gamma in (1.0, 0.1, 0.01)
       for pairs in ({"n_neighbors": None}, {"n_neighbors": 3})]
    + [{"n_neighbors": 3, "gamma": 0.01, "tol": 0.01}]
    + [{"n_neighbors": 2, "gamma": 0.1, "tol": tol} for tol in (0.01, 1e-3)],
    # gamma is the slack of the mean hinge loss over the pairs (the pull of all pairs).
    "DefiniteBoost": [{**pairs, "gamma": gamma, "dual_correction": True}
                      for gamma in (1.0, 3.0, 10.0, 30.0) for pairs in _PAIRS],
    "MEG": [{**pairs, "max_iter": 20, "tol": tol} for tol in (0.1, 0.03) for pairs in _PAIRS],
    "OnlineLogDet": [{**pairs, "eta": eta} for eta in (1.0, 0.3, 0.1, 0.01, 0.001)
                     for pairs in _PAIRS],
    # Neighbour pairs only: random pairs (40 n_classes² of them, each similar one a d³
    # projection) cannot fit in 2 s on many classes (26 s at 360 × 90, 15 classes).
    # Started from the identity, b₁ sets the margin's share of the median pair distance;
    # the stopping rule (tol, and the max_iter its passes need) is chosen with them.
    "POLA": [{"init": "identity", "n_neighbors": k, "initial_threshold": b, "gamma": gamma,
              **stop}
             for stop in _POLA_STOPS
             for b in (3.0, 10.0) for gamma in (1.0, 10.0) for k in (1, 3)]
    + [{"init": "identity", "n_neighbors": 1, "initial_threshold": 30.0, "gamma": gamma, **stop}
       for stop in _POLA_STOPS for gamma in (1.0, 10.0)],
}
# POLA's grid, on the default linear kernel: the learner is POLA in feature space.
GRIDS["KernelPOLA"] = GRIDS["POLA"]


def setting_text(setting):
    return ", ".join(f"{key}={value!r}" for key, value in setting.items()) or "defaults"


def build(learner, setting, seed):
    estimator = getattr(psdmetric, learner)(**setting)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=seed)
    return estimator


def euclidean_errors(name):
    errors = []
    for fold in range(N_SPLITS):
        X_train, X_test, y_train, y_test = scaled_fold(name, fold)
        errors.append(knn_error(X_train, y_train, X_test, y_test))
    return errors


def evaluate(learner, setting, name, seed):
    """The folds of one (learner, setting, seed) on one data set (cached by ``_suite``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [learner_fold(name, fold, build(learner, setting, seed))
                for fold in range(N_SPLITS)]


def score(folds, euclidean):
    """Mean log error ratio against Euclidean over the folds; +inf if a fold failed."""
    if any(fold["error"] is None for fold in folds):
        return math.inf
    return log_error_ratio([f["error"] for f in folds], euclidean)


def misclassified(test_sizes, errors):
    """Points misclassified over the folds: each fold's error times its size."""
    return int(sum(round(error * size) for error, size in zip(errors, test_sizes)))


def leave_one_out(scores, datasets):
    """For each held-out data set: the setting best on the others, and its score there."""
    held_out = {}
    for name in datasets:
        others = [d for d in datasets if d != name]
        chosen = min(range(len(scores)), key=lambda s: np.mean([scores[s][d] for d in others]))
        held_out[name] = chosen
    return held_out


def markdown(results):
    lines = [
        "# Defaults chosen by leave-one-data-set-out",
        "",
        f"Generated by `{results['command']}`; raw numbers: `defaults.json`.",
        "",
        machine_line(results["machine"]),
        "",
        "Protocol: the suite's 5-fold stratified cross-validation of `StandardScaler` → "
        "learner → `KNeighborsClassifier(5)` on "
        f"{len(results['datasets'])} data sets ({', '.join(results['datasets'])}). "
        "A setting's score on a data set is the mean over the folds of "
        f"log((error + {EPSILON}) / (Euclidean error + {EPSILON})): 0 is as good as "
        "Euclidean 5-NN, negative is better. For each held-out data set the setting "
        "with the best mean score on the other data sets is chosen and scored on the "
        "held-out one (the held-out, or leave-one-data-set-out, score); the default is "
        "the setting with the best mean score on all of them. Every fold is fitted with "
        f"the seeds {list(SEEDS)} (random_state: pair order, cyclic order, random pairs); "
        "scores are means over the seeds.",
        "",
    ]
    for learner, entry in results["learners"].items():
        settings = entry["settings"]
        lines += [f"## {learner}", "", "Candidate settings (mean score over all data sets, "
                  "mean fit CPU seconds over all folds, worst data set's mean):", ""]
        lines += ["| setting | mean score | mean fit CPU (s) | worst set's fit CPU (s) |",
                  "|---|---|---|---|"]
        for index, setting in enumerate(settings):
            mark = " **(default)**" if index == entry["chosen_on_all"] else ""
            lines.append(f"| `{setting_text(setting)}`{mark} | {entry['mean_score'][index]:+.3f} "
                         f"| {entry['mean_cpu'][index]:.3f} | {entry['worst_cpu'][index]:.3f} |")
        seeds = "/".join(str(seed) for seed in entry["seeds"])
        lines += ["", "Held-out scores (error ± se over the folds for the first seed; the "
                  "other seeds' errors; ≤ Euclidean for each seed; points misclassified "
                  "over the five folds, for each seed, against Euclidean's):", "",
                  "| held-out set | setting chosen on the others | error ± se | other seeds | "
                  f"Euclidean | ≤ Euclidean (seeds {seeds}) | misclassified (of n) | Euclidean |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, row in entry["held_out"].items():
            first, *others = row["errors_by_seed"]
            lines.append(
                f"| {name} | `{setting_text(settings[row['chosen']])}` | "
                f"{first:.2%} ± {row['error_se']:.2%} | "
                f"{', '.join(f'{e:.2%}' for e in others)} | {row['euclidean']:.2%} | "
                f"{'/'.join('yes' if ok else 'no' for ok in row['not_worse_by_seed'])} | "
                f"{'/'.join(map(str, row['misclassified_by_seed']))} (of {row['n_samples']}) | "
                f"{row['euclidean_misclassified']} |")
        counts = entry["n_not_worse_by_seed"]
        lines += ["", f"Held-out error ≤ Euclidean's on {', '.join(map(str, counts))} of "
                  f"{len(entry['held_out'])} data sets for seeds "
                  f"{', '.join(map(str, entry['seeds']))} "
                  f"(mean {entry['fraction_not_worse']:.0%}). Counted in misclassified points "
                  "(the mean of the fold errors weighs a point by its fold's size, which differ "
                  "by one point when n is not a multiple of 5), ≤ Euclidean's on "
                  f"{', '.join(map(str, entry['n_not_worse_by_count_by_seed']))} of "
                  f"{len(entry['held_out'])}.", ""]
    return "\n".join(lines)


def plot(results):
    plt = pyplot()
    learners = list(results["learners"])
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, learner in enumerate(learners):
        rows = results["learners"][learner]["held_out"].values()
        ratios = [(r["error"] + EPSILON) / (r["euclidean"] + EPSILON) for r in rows]
        ax.scatter(np.full(len(ratios), i), ratios, color="tab:blue", alpha=0.6)
    ax.axhline(1.0, color="grey", ls="--", lw=1)
    ax.set_xticks(range(len(learners)), learners)
    ax.set_yscale("log")
    ax.set_ylabel("held-out (error + ε) / (Euclidean + ε)")
    fig.tight_layout()
    return fig


def main(argv=None):
    def add_arguments(parser):
        parser.add_argument("--learners", nargs="+", choices=list(GRIDS), default=list(GRIDS))

    args, out = parse_arguments(__doc__.splitlines()[0], argv, add_arguments)
    datasets = DATASETS
    results = {"machine": machine(), "datasets": list(datasets), "epsilon": EPSILON,
               "command": "python bench/bench_defaults.py " + " ".join(sys.argv[1:]),
               "learners": {}}
    euclidean = {name: euclidean_errors(name) for name in datasets}
    results["euclidean"] = euclidean
    for learner in args.learners:
        settings = GRIDS[learner]
        folds = {}
        for index, setting in enumerate(settings):
            for name in datasets:
                for seed in SEEDS:
                    start = time.perf_counter()
                    folds[index, name, seed] = evaluate(learner, setting, name, seed)
                    print(f"{learner:14s} {setting_text(setting):36s} {name:24s} seed {seed} "
                          f"{score(folds[index, name, seed], euclidean[name]):+.3f} "
                          f"[{time.perf_counter() - start:.1f} s]", flush=True)
        scores = [{name: float(np.mean([score(folds[s, name, seed], euclidean[name])
                                        for seed in SEEDS])) for name in datasets}
                  for s in range(len(settings))]
        chosen = leave_one_out(scores, datasets)
        held_out = {}
        for name, s in chosen.items():
            by_seed = [float(np.mean([f["error"] for f in folds[s, name, seed]]))
                       for seed in SEEDS]
            first = [f["error"] for f in folds[s, name, SEEDS[0]]]
            euclidean_error = float(np.mean(euclidean[name]))
            test_sizes = [len(test) for _, test in suite_data(name)[2]]
            points = [misclassified(test_sizes, [f["error"] for f in folds[s, name, seed]])
                      for seed in SEEDS]
            euclidean_points = misclassified(test_sizes, euclidean[name])
            held_out[name] = {
                "chosen": s, "error": float(np.mean(by_seed)), "errors_by_seed": by_seed,
                "error_se": float(np.std(first, ddof=1) / np.sqrt(len(first))),
                "euclidean": euclidean_error, "score": scores[s][name],
                "not_worse_by_seed": [e <= euclidean_error + 1e-12 for e in by_seed],
                "misclassified_by_seed": points, "euclidean_misclassified": euclidean_points,
                "n_samples": sum(test_sizes)}
        not_worse = [sum(r["not_worse_by_seed"][i] for r in held_out.values())
                     for i in range(len(SEEDS))]
        not_worse_by_count = [
            sum(r["misclassified_by_seed"][i] <= r["euclidean_misclassified"]
                for r in held_out.values()) for i in range(len(SEEDS))]
        cpu = [[np.mean([f.get("fit_cpu_seconds", math.nan)
                         for seed in SEEDS for f in folds[s, name, seed]])
                for name in datasets] for s in range(len(settings))]
        results["learners"][learner] = {
            "settings": settings, "seeds": list(SEEDS),
            "mean_score": [float(np.mean(list(row.values()))) for row in scores],
            "scores": scores,
            "mean_cpu": [float(np.mean(row)) for row in cpu],
            "worst_cpu": [float(np.max(row)) for row in cpu],
            "chosen_on_all": min(range(len(settings)),
                                 key=lambda s: np.mean(list(scores[s].values()))),
            "held_out": held_out, "n_not_worse_by_seed": not_worse,
            "n_not_worse_by_count_by_seed": not_worse_by_count,
            "fraction_not_worse": float(np.mean(not_worse)) / len(held_out),
            "folds": {f"{s}/{name}/{seed}": folds[s, name, seed] for s, name, seed in folds},
        }
    finish_machine(results["machine"])
    page = markdown(results)
    print(page)
    write(out, "defaults", results, page, plot(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
