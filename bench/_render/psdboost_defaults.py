"""The PSDBoost defaults page (``bench_psdboost_defaults.py``)."""

from _datasets import SUITE
from _render._text import command, machine_line
from _reporting import ERROR_RATIO_EPSILON

N_NEIGHBORS, MAX_TRIPLETS, MAX_RANK = 3, 5000, 32


def page(results):
    table, overall, mean_scores = results["table"], results["default"], results["mean_scores"]
    lines = [
        "# PSDBoost defaults: leave-one-data-set-out over the suite", "",
        f"Command: `{command(results, 'bench_psdboost_defaults')}`. "
        + machine_line(results["machine"]), "",
        "Protocol: stratified 5-fold cross-validation (`random_state=0`), `StandardScaler` "
        "fitted on the training fold, then PSDBoost, then 5-NN. Candidate settings "
        "(ν, rank fraction, tol, shrinkage): `C = 1 / (ν · n_triplets)`, `min_rank = "
        f"⌈fraction · n_features⌉` (at most {MAX_RANK}); triplets from "
        f"`triplets_from_labels` with {N_NEIGHBORS} target neighbours, at most "
        f"{MAX_TRIPLETS:,}. A setting's score on a set is the mean over the folds of "
        f"log((error + {ERROR_RATIO_EPSILON}) / (Euclidean error + "
        f"{ERROR_RATIO_EPSILON})), as for the other learners (`defaults.md`). For each "
        "set the setting with the best mean score on the other sets is chosen and "
        "scored on the held-out set (errors are mean ± standard error over the folds). "
        "Rank: eigenvalues above 1e-3 of the largest, per fold. Times: mean "
        "of one fit (triplets included), wall and CPU seconds. Every fold is kept in "
        "`psdboost_defaults_folds.jsonl` and reused by later runs, so its times are those "
        "of the run that fitted it; the machine line is the last run's.", "",
        "| set | n × d | chosen (ν, fraction, tol, shrinkage) | PSDBoost error | Euclidean error | "
        "best reference | ranks per fold | fit s (CPU s) | iterations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table:
        references = row["references"]
        best = min(references.items(), key=lambda item: item[1][0]) if references else None
        reference = f"{best[1][0]:.3f} ± {best[1][1]:.3f} ({best[0]})" if best else "–"
        lines.append(
            f"| {row['set']} | {row['n_samples']} × {row['n_features']} | "
            f"{tuple(row['chosen'])} | {row['error'][0]:.3f} ± {row['error'][1]:.3f} | "
            f"{row['euclidean'][0]:.3f} ± {row['euclidean'][1]:.3f} | {reference} | "
            f"{', '.join(map(str, row['ranks']))} | {row['fit_seconds']:.2f} "
            f"({row['fit_cpu_seconds']:.2f}) | {', '.join(map(str, row['n_iter']))} |")
    n_sets = len(table)
    not_worse = sum(r["error"][0] <= r["euclidean"][0] for r in table)
    within = sum(r["error"][0] <= r["euclidean"][0] + r["euclidean"][1] for r in table)
    missing = [name for name in SUITE if name not in {r["set"] for r in table}]
    lines += [
        "",
        f"Held-out PSDBoost error ≤ Euclidean on {not_worse} of {n_sets} sets, and within "
        f"one standard error of it on {within} of {n_sets}."
        + (f" Not in this run: {', '.join(missing)}." if missing else ""),
        "",
        "Mean score on all sets, per setting (ν, fraction, tol, shrinkage): "
        + ", ".join(f"{k}: {v:+.4f}" for k, v in mean_scores.items()) + ".",
        "",
        "Chosen on all sets (the default): ν, rank fraction, tol, shrinkage = "
        f"{overall if overall is None else tuple(overall)}.",
    ]
    warned = [(r["set"], w) for r in table for w in r["warnings"]]
    if warned:
        lines += ["", "Warnings raised during the held-out fits:", ""]
        lines += [f"- {name}: {w}…" for name, w in warned]
    return "\n".join(lines) + "\n"
