"""The PSDBoost page (``bench_psdboost.py``): against the SDP, Shen, Welsh & Wang (2008)."""

import numpy as np

from _render._text import command, machine_line, pyplot
from psdmetric import PSDBoost

RELATIVE_TARGET, SPEEDUP_TARGET = 1e-3, 10.0
HARD, SOFT = 1.0, 0.01
PAPER_ERROR = 0.013  # Shen et al., 2008, §6: 1-NN test error on Pendigits 1/5/7/9, both metrics


def figure(results):
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ax = axes[0]
    for C, style in ((HARD, "-"), (SOFT, "--")):
        rows = [row for row in results["sdp"] if row["C"] == C]
        dims = [row["n_features"] for row in rows]
        for key, color in (("psdboost", "C0"), ("clarabel", "C1"), ("scs", "C2")):
            ax.plot(dims, [row[f"{key}_wall"] for row in rows], style, color=color,
                    marker="o", label=f"{key}, C={C}")
    ax.set(xscale="log", yscale="log", xlabel="D", ylabel="wall seconds",
           title="SDP (3): PSDBoost vs cvxpy")
    dims = sorted({row["n_features"] for row in results["sdp"]})
    ax.minorticks_off()
    ax.set_xticks(dims, labels=[str(d) for d in dims])
    ax.legend(fontsize=7)
    ax = axes[1]
    paper = results["synthetic"]
    for (name, run), color in zip(paper["runs"].items(), ("C0", "C3")):
        iterations = np.arange(1, run["iterations"] + 1)
        ax.plot(iterations, run["dual_objective"], color=color, label=f"π, {name}")
        ax.plot(iterations, run["upper_bound"], ":", color=color,
                label=f"best λmax(H), {name}")
    ax.axhline(paper["sdp_objective"], color="k", ls="--", label="SDP (3), Clarabel")
    low = min(min(run["dual_objective"][1:]) for run in paper["runs"].values())
    span = paper["sdp_objective"] - low
    ax.set(xlabel="iteration", ylabel="Opt(D1)",
           ylim=(low - 0.05 * span, paper["sdp_objective"] + 0.5 * span),
           title="Shen, Welsh & Wang (2008) §6: 600 points, 24 dims, 550 triplets")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def sdp_section(results):
    rows = results["sdp"]
    lines = [
        "# PSDBoost: column generation against the SDP solved directly",
        "",
        f"Command: `{command(results, 'bench_psdboost')}`. "
        + machine_line(results["machine"]),
        "BLAS limited to one thread for every fit (Clarabel and SCS are single-threaded "
        "too). Times are wall seconds of one fit; `cpu` columns are in the JSON.",
        "",
        "## 1. Same SDP (3), same triplets: PSDBoost vs cvxpy (Clarabel, SCS)",
        "",
        f"Synthetic data: {rows[0]['n_triplets']} points in 3 classes, apart in 4 "
        "directions, unit noise in all D; triplets from labels (nearest same-class and "
        "other-class neighbour). PSDBoost solving the SDP (3) as printed (`margin="
        "\"absolute\"`, `min_rank=1`, `shrinkage=0`, `tol=1e-5`, smoothing 0.9, 8 bases per "
        "iteration). Relative error against Clarabel's objective; rank = "
        "eigenvalues above 1e-3 of the largest.",
        "",
        "| D | C | PSDBoost s | iterations | bases | rank | Clarabel s | SCS s | "
        "rel. error | speed-up vs Clarabel | vs SCS |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['n_features']} | {row['C']} | {row['psdboost_wall']:.2f} | "
            f"{row['iterations']} | {row['bases']} | {row['psdboost_rank']} "
            f"(SDP {row['sdp_rank']}) | {row['clarabel_wall']:.2f} | {row['scs_wall']:.2f} | "
            f"{row['relative_error']:.1e} | {row['speedup_clarabel']:.1f}x | "
            f"{row['speedup_scs']:.1f}x |")
    largest = [row for row in rows if row["n_features"] == max(r["n_features"] for r in rows)]
    lines += ["", "Summary at D = {}:".format(largest[0]["n_features"]), ""]
    for row in largest:
        lines.append(
            f"- C = {row['C']}: PSDBoost's objective is {row['relative_error']:.1e} "
            f"from the SDP's (target {RELATIVE_TARGET:g}: "
            f"{'met' if row['relative_error'] <= RELATIVE_TARGET else 'missed'}); it takes "
            f"{row['speedup_clarabel']:.1f} times less time than Clarabel and "
            f"{row['speedup_scs']:.1f} times less than SCS (target {SPEEDUP_TARGET:g} "
            "times: " + ("met" if row['speedup_clarabel'] >= SPEEDUP_TARGET else "missed")
            + " against Clarabel, " + ("met" if row['speedup_scs'] >= SPEEDUP_TARGET
                                       else "missed") + " against SCS).")
    return lines


def synthetic_section(results):
    paper = results["synthetic"]
    lines = [
        "",
        "## 2. Shen, Welsh & Wang (2008) §6, synthetic: convergence of the dual objective",
        "",
        f"600 points in 24 dimensions, {paper['n_triplets']} triplets, C = {paper['C']}. "
        f"SDP (3) by Clarabel: {paper['sdp_objective']:.6f} ({paper['sdp_wall']:.2f} s).",
        "",
        "| run | iterations | bases | seconds | objective | rel. error | max_iter hit |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, run in paper["runs"].items():
        lines.append(f"| {name} | {run['iterations']} | {run['bases']} | {run['wall']:.2f} | "
                     f"{run['objective']:.6f} | {run['relative_error']:.1e} | "
                     f"{run['max_iter_reached']} |")
    return lines + ["", "![convergence and timings](psdboost.png)", ""]


def optional(run, key, spec):
    """A number of ``run``, or "—" where it was not measured."""
    return format(run[key], spec) if key in run else "—"


def digits_section(results):
    digits = results["digits"]
    lines = [
        "## 3. Shen, Welsh & Wang (2008) §6, handwritten digits 1, 5, 7, 9",
        "",
        f"scikit-learn's bundled digits (8×8, D = {digits['n_features']}; the paper used UCI "
        f"Pendigits, D = 16): {digits['n_train']} training points (80 per digit), "
        f"{digits['n_test']} test points (all the rest: the bundled set has about 180 per "
        f"digit, so the paper's 500 per digit are not available); triplets from the "
        "1, 3 or 5 nearest same-class and other-class neighbours of each training point "
        f"(1, 9 or 25 per point). Euclidean 1-NN test error {digits['euclidean_error']:.2%}. "
        f"The paper reports {PAPER_ERROR:.1%} for both PSDBoost and the SDP on Pendigits, "
        "other data than these: the run on Pendigits itself is on [the papers' page]"
        "(papers.md). The SDP is solved for up to 3 neighbours only (its time grows with "
        "the triplets); \"—\" marks the runs without it.",
        "",
        "| neighbours | triplets | C | PSDBoost error | SDP error | PSDBoost s | SDP s | "
        "PSDBoost objective | SDP objective | rank (SDP) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in digits["runs"]:
        lines.append(
            f"| {run['n_neighbors']} | {run['n_triplets']} | {run['C']} | "
            f"{run['psdboost_error']:.2%} | "
            f"{optional(run, 'sdp_error', '.2%')} | {run['psdboost_wall']:.2f} | "
            f"{optional(run, 'sdp_wall', '.2f')} | {run['psdboost_objective']:.6f} | "
            f"{optional(run, 'sdp_objective', '.6f')} | {run['psdboost_rank']} "
            f"({run.get('sdp_rank', '–')}) |")
    default = results["digits_defaults"]
    return lines + [
        "",
        f"PSDBoost with its defaults, fitted on the labels ({default['n_triplets']} "
        "triplets from 3 target neighbours and their impostors, relative margins, "
        "`min_rank` from the defaults): 1-NN test error "
        f"{default['psdboost_error']:.2%}, rank {default['psdboost_rank']}, "
        f"{default['psdboost_wall']:.2f} s ({default['psdboost_cpu']:.2f} CPU s).",
        "",
    ]


def eigen_and_timing_sections(results):
    lines = [
        "## 4. Base learner: dense H against Lanczos",
        "",
        "CPU seconds per call (2,000 weighted difference vectors), for 8 top eigenpairs "
        "and for the 39 that the defaults ask for at `min_rank` 32:",
        "",
        "| D | 8 pairs, dense | 8 pairs, Lanczos | 39 pairs, dense | 39 pairs, Lanczos |",
        "|---|---|---|---|---|",
    ]
    for row in results["eigen"]:
        lines.append(f"| {row['n_features']} | {row['dense_8']:.3f} | {row['lanczos_8']:.3f} | "
                     f"{row['dense_39']:.3f} | {row['lanczos_39']:.3f} |")
    timing = results["timing"]["folds"]
    lines += [
        "",
        f"## 5. Fit time of the defaults on {results['timing']['set']} "
        f"({timing[0]['n_samples']:,} × {timing[0]['n_features']} per training fold)",
        "",
        "PSDBoost with its defaults on each standardised training fold of the suite's "
        "5-fold split; the restricted master LP warm-started in `highspy` against "
        "solved from scratch by scipy's `linprog`. 5-NN test error of the learned metric.",
        "",
        "| fold | highspy s (CPU s) | linprog s (CPU s) | iterations | objectives differ "
        "(relative) | error | rank |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in timing:
        warm, cold = row["highspy"], row["linprog"]
        lines.append(
            f"| {row['fold']} | {warm['wall']:.2f} ({warm['cpu']:.2f}) | {cold['wall']:.2f} "
            f"({cold['cpu']:.2f}) | {warm['iterations']} / {cold['iterations']} | "
            f"{row['relative_difference']:.1e} | {warm['error']:.3f} | {warm['rank']} |")
    slowest = max(row["highspy"]["wall"] for row in timing)
    return lines + ["", f"Slowest fit with highspy: {slowest:.2f} s wall."]


def overlap_section(results):
    lines = []
    if "overlap" in results:
        lines += [
            "",
            "## 6. Heavily overlapping classes",
            "",
            "`make_classification` with 20 informative features and 5 % of the labels "
            "flipped, standardised, fitted on a stratified four fifths; 5-NN error on the "
            "last fifth. Column generation tails off where no metric separates the "
            "classes: the upper bound λmax(H) closes on the LP's π slowly.",
            "",
            "| training set | classes | Euclidean error | defaults: CPU s, iterations, "
            "error | `tol=0.1`: CPU s, iterations, error |",
            "|---|---|---|---|---|",
        ]
        for row in results["overlap"]:
            cells = [f"{row[key]['cpu']:.1f}, {row[key]['iterations']}, "
                     f"{row[key]['error']:.3f}" for key in ("defaults", "tol=0.1")]
            lines.append(f"| {row['n_samples']:,} × {row['n_features']} | "
                         f"{row['n_classes']} | {row['euclidean_error']:.3f} | "
                         f"{cells[0]} | {cells[1]} |")
    return lines


def reading_section(results):
    rows, digits, timing = results["sdp"], results["digits"], results["timing"]["folds"]
    first, last = rows[0], rows[-1]
    best = min(digits["runs"], key=lambda run: run["psdboost_error"])
    return [
        "",
        "## Reading the numbers",
        "",
        "- Column generation pays per base, not per dimension: its time follows the "
        "number of iterations and bases the optimum needs (its rank, and the tailing-off), "
        "while the interior-point solver's grows steeply with D (Clarabel "
        f"{first['clarabel_wall']:.2f} s at D = {first['n_features']}, "
        f"{last['clarabel_wall']:.2f} s at D = {last['n_features']}). So PSDBoost loses at "
        "small D, where the optimum here has nearly full rank, and wins at D = 64.",
        "- SCS, a first-order conic solver, is much faster than Clarabel on these "
        "problems; PSDBoost is 10x faster than Clarabel at D = 64, not than SCS.",
        "- §6 synthetic: Algorithm 1 as printed shows the tailing-off the paper describes "
        "(π creeps up, the gap closes slowly); dual smoothing and several bases per "
        "iteration (the defaults) close it. π never decreases in either run.",
        "- Digits: PSDBoost and the SDP reach the same objective, and the 1-NN errors of "
        "their metrics agree as in the paper. With one neighbour per point (320 "
        "triplets in 64 dimensions) the max-margin optimum has low rank and throws away "
        "directions the 1-NN classifier needs; more triplets raise the rank and bring "
        "the error down towards the paper's 1.3 % (Pendigits, 16 dimensions). Best "
        f"PSDBoost error {best['psdboost_error']:.2%} ({best['n_neighbors']} neighbours, "
        f"C = {best['C']}) against Euclidean {digits['euclidean_error']:.2%}.",
        "- Fit time: warm-starting the restricted master LP in `highspy` takes "
        f"{np.mean([r['linprog']['cpu'] / r['highspy']['cpu'] for r in timing]):.1f}x less "
        "CPU than solving it from scratch with `linprog`. Both stop at the default "
        f"`tol={PSDBoost().tol:g}`, where the gap is measured against the first "
        "iteration's when the optimum is near 0 (as on cells), so their objectives may "
        "differ by a few "
        "percent; at a tight `tol` they agree (tested at 1e-6).",
        "",
    ]


def page(results):
    return "\n".join([*sdp_section(results), *synthetic_section(results),
                      *digits_section(results), *eigen_and_timing_sections(results),
                      *overlap_section(results), *reading_section(results)])
