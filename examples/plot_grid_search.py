"""
====================================================
Tuning a learner's hyper-parameter with GridSearchCV
====================================================

Every psdmetric learner is a scikit-learn transformer, so it sits in a
:class:`~sklearn.pipeline.Pipeline` in front of k-nearest neighbours and
:class:`~sklearn.model_selection.GridSearchCV` tunes it like any other step. Here the
parameter is the LogDet learner's slack ``gamma`` (seed 002 §6.2.1): small values let
many pair constraints go unmet and stay near the Euclidean prior, large values enforce
the 5th / 95th-percentile distance bounds on every pair.
"""

# %%
# Data and the pipeline: standardise, learn the metric, classify by 3-NN.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import LogDet

X, y = load_wine(return_X_y=True)
cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=3, random_state=0)


def knn_pipeline(learner):
    steps = [("scale", StandardScaler()), ("knn", KNeighborsClassifier(3))]
    if learner is not None:
        steps.insert(1, ("learner", learner))
    return Pipeline(steps)


# %%
# The searches: one line per learner, its estimator and the grid of its parameter.
searches = {
    "LogDet": (LogDet(random_state=0), "gamma", np.logspace(-2, 2, 9)),
}

# %%
# Run each search and print its results table (mean and standard deviation of the
# 3-NN accuracy over 15 folds, the rank, and the mean fit time of the pipeline).
euclidean = cross_val_score(knn_pipeline(None), X, y, cv=cv)
print(f"Euclidean 3-NN: {euclidean.mean():.4f} ± {euclidean.std():.4f}\n")

results = {}
for name, (learner, parameter, grid) in searches.items():
    search = GridSearchCV(knn_pipeline(learner), {f"learner__{parameter}": grid}, cv=cv)
    search.fit(X, y)
    results[name] = (parameter, search.cv_results_)
    print(f"{name}: best {parameter} = {search.best_params_[f'learner__{parameter}']:g}, "
          f"accuracy {search.best_score_:.4f}")
    print(f"{parameter:>10} {'accuracy':>9} {'std':>7} {'rank':>5} {'fit (s)':>8}")
    table = search.cv_results_
    for value, mean, std, rank, fit_time in zip(
        table[f"param_learner__{parameter}"], table["mean_test_score"],
        table["std_test_score"], table["rank_test_score"], table["mean_fit_time"],
    ):
        print(f"{value:>10.3g} {mean:>9.4f} {std:>7.4f} {rank:>5d} {fit_time:>8.3f}")
    print()

# %%
# Accuracy against the parameter, with the Euclidean baseline. The error bars are
# the standard error over the 15 folds.
fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4), squeeze=False)
for ax, (name, (parameter, table)) in zip(axes.ravel(), results.items()):
    values = np.asarray(table[f"param_learner__{parameter}"], dtype=float)
    error = table["std_test_score"] / np.sqrt(cv.get_n_splits())
    ax.errorbar(values, table["mean_test_score"], yerr=error, marker="o", capsize=3,
                label=name)
    ax.axhline(euclidean.mean(), color="gray", linestyle="--", label="Euclidean")
    ax.set_xscale("log")
    ax.set_xlabel(parameter)
    ax.set_ylabel("3-NN accuracy (cross-validated)")
    ax.set_title(f"wine: {name}")
    ax.legend()
fig.tight_layout()
plt.show()
