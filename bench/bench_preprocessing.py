"""Heavy-tailed features: every learner's defaults after StandardScaler and PowerTransformer.

A check of the defaults on data outside the repository found spam e-mail counts (DAAG's
spam7: 6 features, each skewed 5.6 to 14) where most learners lose to Euclidean 5-NN
after ``StandardScaler``: a few extreme rows dominate the distances the constraints are
drawn from. This page asks whether scikit-learn's ``PowerTransformer`` (Yeo-Johnson,
then standardised) in place of the scaler is the remedy, and what it costs where the
tails are milder.

Sets: spam7 (``_datasets.HEAVY_TAILED_SETS``) and every suite and check set with at most
100 features that has a feature of skewness above ``SKEW`` (fixed before any run). Each
under the suite protocol (``_folds``: stratified 5-fold, seed 0, 5-NN), once with
``StandardScaler`` and once with ``PowerTransformer`` fitted on the training fold;
Euclidean and every psdmetric learner with its defaults and ``random_state=0``. Nothing
here chooses a default.

    python bench/bench_preprocessing.py     # writes docs/benchmarks/preprocessing.{json,md}
"""

import functools
import sys

import numpy as np
from scipy.stats import skew

from _datasets import CHECK_SETS, HEAVY_TAILED_SETS, SUITE
from _folds import suite_data
from _harness import Case, kept_cells, main
from _render.preprocessing import EUCLIDEAN, SCALINGS
from bench_suite import build, psdmetric_learners

SKEW = 5.0
MAX_FEATURES = 100


def largest_skew(X):
    """The largest skewness of a feature (constant features have none)."""
    return float(np.nanmax(skew(X, axis=0)))


def heavy_tailed(dataset):
    X, _, _ = suite_data(dataset)
    return X.shape[1] <= MAX_FEATURES and largest_skew(X) > SKEW


def datasets():
    return [*HEAVY_TAILED_SETS, *filter(heavy_tailed, SUITE + CHECK_SETS)]


def cases(args):
    methods = [(EUCLIDEAN, None)] + [(name, functools.partial(build, name))
                                     for name in psdmetric_learners()]
    return [Case(f"{method}{suffix}", learner, f"{dataset}{suffix}", into="cells",
                 labels={"learner": method, "set": dataset, "scaling": scaling})
            for dataset in datasets() for scaling, suffix in SCALINGS.items()
            for method, learner in methods]


def setup(args):
    shapes = {}
    for dataset in datasets():
        X, y, folds = suite_data(dataset)
        shapes[dataset] = {"n_samples": int(X.shape[0]), "n_features": int(X.shape[1]),
                           "n_classes": int(len(np.unique(y))),
                           "largest_skew": largest_skew(X),
                           "test_sizes": [int(len(test)) for _, test in folds]}
    return {"datasets": datasets(), "learners": psdmetric_learners(),
            "cells": kept_cells(args, "preprocessing"), "dataset_shapes": shapes,
            "skew": SKEW}


if __name__ == "__main__":
    sys.exit(main("preprocessing", cases, setup=setup))
