"""
====================================================
Tuning a learner's hyper-parameter with GridSearchCV
====================================================

Every psdmetric learner is a scikit-learn transformer, so it sits in a
:class:`~sklearn.pipeline.Pipeline` in front of k-nearest neighbours and
:class:`~sklearn.model_selection.GridSearchCV` tunes it like any other step. Here the
parameters are the ones each learner asks to tune:

- the slack ``gamma`` of the LogDet and von Neumann learners (Kulis, Sustik & Dhillon,
  2009, §6.2.1): small values let many pair constraints go unmet and stay near the
  Euclidean prior, large values enforce the 5th / 95th-percentile distance bounds on
  every pair;
- PSDBoost's soft-margin ``C`` (Shen, Welsh & Wang, 2008): the largest weight one
  triplet may take in the dual, so ``C = 1`` is the hard margin and small ``C``
  spreads the weight;
- the learning rates ``eta`` of MEG (Tsuda, Rätsch & Warmuth, 2005; ``"auto"`` is
  Lemma 3.2's rate, about 1.5e-4 for the standardised wine data) and of the online
  LogDet (Burg) learner (Jain, Kulis & Dhillon, 2007; relative to its starting
  metric).
"""

# %%
# Data and the pipeline: standardise, learn the metric, classify by 3-NN.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, RepeatedStratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from psdmetric import MEG, LogDet, OnlineLogDet, PSDBoost, VonNeumann

X, y = load_wine(return_X_y=True)
# Two repeats of 5-fold cross-validation: 10 fits per grid point keeps the five
# searches to about a minute.
cv = RepeatedStratifiedKFold(n_splits=5, n_repeats=2, random_state=0)


def knn_pipeline(learner):
    steps = [("scale", StandardScaler()), ("knn", KNeighborsClassifier(3))]
    if learner is not None:
        steps.insert(1, ("learner", learner))
    return Pipeline(steps)


# %%
# The searches: one line per learner, its estimator and the grid of its parameter.
searches = {
    "LogDet": (LogDet(random_state=0), "gamma", np.logspace(-2, 2, 5)),
    "VonNeumann": (VonNeumann(random_state=0), "gamma", np.logspace(-2, 2, 5)),
    "PSDBoost": (PSDBoost(random_state=0), "C", [0.01, 0.03, 0.1, 0.3, 1.0]),
    "MEG": (MEG(random_state=0), "eta", np.logspace(-5, -1, 5)),
    "OnlineLogDet": (OnlineLogDet(random_state=0), "eta", [0.01, 0.03, 0.1, 0.3, 1.0]),
}

# %%
# Run each search and print its results table (mean and standard deviation of the
# 3-NN accuracy over 10 folds, the rank, and the mean fit time of the pipeline).
euclidean = cross_val_score(knn_pipeline(None), X, y, cv=cv)
print(f"Euclidean 3-NN: {euclidean.mean():.4f} ± {euclidean.std():.4f}\n")

results = {}
for name, (learner, parameter, grid) in searches.items():
    search = GridSearchCV(knn_pipeline(learner), {f"learner__{parameter}": grid}, cv=cv)
    # A fit that stops at max_iter warns and is still scored: count those warnings.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        search.fit(X, y)
    stopped = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    results[name] = (parameter, search.cv_results_)
    print(f"{name}: best {parameter} = {search.best_params_[f'learner__{parameter}']:g}, "
          f"accuracy {search.best_score_:.4f}; {stopped} fits stopped at max_iter")
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
# the standard error over the 10 folds.
fig, axes = plt.subplots(2, 3, figsize=(15, 8))
axes.ravel()[-1].set_visible(False)
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
