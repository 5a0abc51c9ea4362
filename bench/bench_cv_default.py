"""LogDetCV and VonNeumannCV against their plain learner's default: error and CPU per fit.

Every suite and check set under the suite protocol (``_folds``: stratified 5-fold,
``StandardScaler`` → learner → 5-NN, every fold cached), each search with its defaults
and ``random_state=0`` next to the plain learner's default fit on the same folds. A set
counts as "worse" when the search's mean error exceeds the plain default's by more than
the plain default's standard error over the folds, "better" when it is strictly lower;
the CPU ratio is the search's mean CPU seconds per fit over the plain default's.

The ``margins`` case chooses the stepwise rule's margin by leave-one-data-set-out, for
each search on its own: per fold it keeps one inner search, replays the rule at every
margin of ``MARGINS`` on its scores, and refits every candidate on the outer training
fold; a held-out set gets, per search, the margin with the fewest sets worse than the
plain default by more than one standard error among the others, then the fewest
misclassified test points there, then the larger margin.

    python bench/bench_cv_default.py                   # writes docs/benchmarks/cv_default.*
    python bench/bench_cv_default.py --datasets iris wine --out /tmp/cv_default
"""

import sys
from unittest import mock

import numpy as np

import psdmetric
from _datasets import CHECK_SETS, SUITE
from _folds import N_NEIGHBORS, N_SPLITS, learner_fold, scaled_fold, suite_data
from _harness import Case, main, read_json
from _reporting import knn_error, mean_and_standard_error
from psdmetric._bregman import _cv, _cv_rule

PAIRS = {"LogDetCV": "LogDet", "VonNeumannCV": "VonNeumann"}
MARGINS = (1.0, 1.5, 2.0, 2.5, 3.0)


def compare(dataset):
    """Per search: its folds and the plain default's, on one data set."""
    X, y, folds = suite_data(dataset)
    record = {"shape": [*X.shape, int(len(np.unique(y)))],
              "test_sizes": [len(test) for _, test in folds]}
    for search, plain in PAIRS.items():
        for name in (plain, search):
            estimator = getattr(psdmetric, name)(random_state=0)
            record[name] = [learner_fold(dataset, fold, estimator) for fold in range(N_SPLITS)]
            print(dataset, name, [round(f["error"], 4) if f["error"] is not None else None
                                  for f in record[name]], flush=True)
    return record


def _fold_candidates(dataset, fold, search, margins):
    """The rule's choice at every margin and every candidate's misclassified test points."""
    X_train, X_test, y_train, y_test = scaled_fold(dataset, fold)
    estimator = getattr(psdmetric, search)(random_state=0)
    kept, rule = {}, {"forced": None}
    real_search = type(estimator)._search

    def search_once(self, *args, **kwargs):  # every refit reuses the fold's one search
        if "scores" not in kept:
            kept["scores"] = real_search(self, *args, **kwargs)
        return kept["scores"]

    def forced_choice(samples, default, n_gammas, *, margin):
        rule.update(samples=samples, default=default, n_gammas=n_gammas)
        choice = _cv_rule.stepwise_choice(samples, default, n_gammas, margin=margin)
        return choice if rule["forced"] is None else (rule["forced"], *choice[1:])

    errors = []
    with mock.patch.object(type(estimator), "_search", search_once), \
            mock.patch.object(_cv, "stepwise_choice", forced_choice):
        estimator.fit(X_train, y_train)
        complete = ~np.isnan(np.array([s.mean(axis=1) for s in rule["samples"]])).any(axis=0)
        for index in range(len(complete)):
            if not complete[index]:
                errors.append(None)
                continue
            rule["forced"] = index
            estimator.fit(X_train, y_train)
            errors.append(round(len(y_test) * knn_error(
                estimator.transform(X_train), y_train, estimator.transform(X_test), y_test,
                N_NEIGHBORS)))
    chosen = {str(m): _cv_rule.stepwise_choice(rule["samples"], rule["default"],
                                               rule["n_gammas"], margin=m)[0]
              for m in margins}
    return {"errors": errors, "default": rule["default"], "chosen": chosen}


def margin_replay(dataset, margins=MARGINS):
    """Per search and outer fold: the rule's choices and the candidates' test errors."""
    return {search: [_fold_candidates(dataset, fold, search, margins)
                     for fold in range(N_SPLITS)] for search in PAIRS}


def _margin_outcomes(results):
    """Per margin, set and search: misclassified points and worse-by-one-SE verdict."""
    outcomes = {}
    for case, record in results.get("margins", {}).items():
        dataset = case.removeprefix("margins ")
        sizes = results["sets"][dataset]["test_sizes"]
        for search, folds in record.items():
            plain = [f["error"] for f in results["sets"][dataset][PAIRS[search]]]
            plain_mean, plain_se = mean_and_standard_error(plain)
            for margin in folds[0]["chosen"]:
                missed = [f["errors"][f["chosen"][margin]] for f in folds]
                error = float(np.mean([m / n for m, n in zip(missed, sizes)]))
                outcomes.setdefault(margin, {})[(dataset, search)] = (
                    sum(missed), bool(error > plain_mean + plain_se + 1e-12))
    return outcomes


def leave_one_set_out(results):
    """Per held-out set and search: the margin chosen on the others and its outcome there.

    Each search gets its own margin, chosen on its own outcomes on the other sets.
    """
    outcomes = _margin_outcomes(results)
    if not outcomes:
        return []
    sets = sorted({dataset for dataset, _ in next(iter(outcomes.values()))})
    rows = []
    for held_out in sets:
        row = {"data": held_out}
        for search in PAIRS:
            def cost(margin):
                others = [v for (d, s), v in outcomes[margin].items()
                          if d != held_out and s == search]
                return (sum(w for _, w in others), sum(m for m, _ in others), -float(margin))
            margin = min(outcomes, key=cost)
            row[search] = {"margin": float(margin),
                           "missed": outcomes[margin][(held_out, search)][0],
                           "worse": outcomes[margin][(held_out, search)][1],
                           "by_margin": {m: outcomes[m][(held_out, search)][0]
                                         for m in outcomes}}
        rows.append(row)
    return rows


def summarise(results, args=None):
    """Per (set, search): errors, the one-SE verdict and the CPU ratio."""
    rows = []
    for dataset, record in results["sets"].items():
        for search, plain in PAIRS.items():
            ours = [f["error"] for f in record[search]]
            theirs = [f["error"] for f in record[plain]]
            mean, _ = mean_and_standard_error(ours)
            plain_mean, plain_se = mean_and_standard_error(theirs)
            cpu = float(np.mean([f["fit_cpu_seconds"] for f in record[search]]))
            plain_cpu = float(np.mean([f["fit_cpu_seconds"] for f in record[plain]]))
            rows.append({
                "data": dataset, "search": search, "n": record["shape"][0],
                "error": mean, "plain_error": plain_mean, "plain_se": plain_se,
                "worse": bool(mean > plain_mean + plain_se + 1e-12),
                "better": bool(mean < plain_mean - 1e-12),
                "cpu": cpu, "plain_cpu": plain_cpu, "cpu_ratio": cpu / plain_cpu,
            })
    results["rows"] = rows
    results["margin_rows"] = leave_one_set_out(results)


def add_arguments(parser):
    sets = list(SUITE) + list(CHECK_SETS)
    parser.add_argument("--datasets", nargs="+", default=sets, choices=sets)


def setup(args):
    """Empty tables, or under ``--only`` the tables already in the output's JSON."""
    kept = (read_json(args.out / "cv_default.json") or {}) if args.only else {}
    return {"sets": kept.get("sets", {}), "margins": kept.get("margins", {})}


def cases(args):
    return ([Case(name, protocol=compare, params={"dataset": name}, into="sets")
             for name in args.datasets]
            + [Case(f"margins {name}", protocol=margin_replay, params={"dataset": name},
                    into="margins") for name in args.datasets])


if __name__ == "__main__":
    sys.exit(main("cv_default", cases, add_arguments=add_arguments,
                  setup=setup, finish=summarise))
