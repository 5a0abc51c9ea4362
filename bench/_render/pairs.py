"""The pair-data model selection page (``bench_pairs.py``)."""

from _render._text import machine_line, paired_bars, pyplot

N_FOLDS = 3


def page(results):
    lines = [
        "# Model selection on pair data: psdmetric vs metric-learn's ITML",
        "",
        "`GridSearchCV(PairsClassifier(LogDet()), {\"learner__gamma\": "
        f"{list(results['gammas'])}}}, scoring=\"roc_auc\")` against metric-learn "
        "0.7.0's `ITML` with the same grid, folds and pairs (see `bench/bench_pairs.py`): "
        f"{N_FOLDS}-fold cross-validation over the training pairs, refit of the best "
        "`gamma`, ROC AUC of the negative learned distance on pairs of held-out samples. "
        "Fit time: the sum over the search's fits (cross-validation and refit), one BLAS "
        "thread, wall clock and CPU; psdmetric's CPU time is that of the same fits "
        "repeated outside `GridSearchCV`, which records wall time only. The whole "
        "`GridSearchCV.fit` of psdmetric (fits and scoring) took "
        + ", ".join(f"{row['psdmetric']['search_seconds']:.2f} s on {row['name']}"
                    for row in results["datasets"]) + ".",
        "",
        "| data set | pairs (train / test) | psdmetric test AUC | ITML test AUC | "
        "best γ (psdmetric / ITML) | psdmetric fit s (CPU) | ITML fit s (CPU) | "
        "wall ratio | CPU ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results["datasets"]:
        ours, theirs = row["psdmetric"], row["itml"]
        lines.append(
            f"| {row['name']} | {row['n_train_pairs']} / {row['n_test_pairs']} | "
            f"{ours['test_auc']:.4f} | {theirs['test_auc']:.4f} | "
            f"{ours['best_gamma']:g} / {theirs['best_gamma']:g} | "
            f"{ours['fit_seconds']:.2f} ({ours['fit_cpu_seconds']:.2f}) | "
            f"{theirs['fit_seconds']:.2f} ({theirs['fit_cpu_seconds']:.2f}) | "
            f"{row['wall_ratio']:.1f}× | {row['cpu_ratio']:.1f}× |")
    lines += [
        "",
        "Cross-validated AUC per `gamma` (psdmetric / ITML):",
        "",
        "| data set | " + " | ".join(f"γ = {g:g}" for g in results["gammas"]) + " |",
        "|---|" + "---|" * len(results["gammas"]),
    ]
    for row in results["datasets"]:
        cells = [f"{a:.4f} / {b:.4f}" for a, b in zip(row["psdmetric"]["cv_auc"],
                                                      row["itml"]["cv_auc"])]
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    lines += ["", machine_line(results["machine"]), ""]
    return "\n".join(lines)


def figure(results):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    rows = results["datasets"]
    paired_bars(ax, [row["name"] for row in rows],
                [(label, [row[key]["fit_seconds"] for row in rows])
                 for key, label in (("psdmetric", "psdmetric LogDet"),
                                    ("itml", "metric-learn ITML"))],
                "grid-search fit time (s)")
    ax.set_yscale("log")
    fig.tight_layout()
    return fig
