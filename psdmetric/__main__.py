"""Command line: ``psdmetric demo`` (or ``python -m psdmetric demo``) and ``--version``."""

import argparse
import sys
import warnings

import numpy as np
from sklearn.datasets import load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold, cross_validate
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import psdmetric

# The learners the demo compares with the Euclidean metric, each with its default parameters.
DEMO_LEARNERS = ("LogDet", "VonNeumann", "LogDetCV", "LMNN")
DATASETS = {"digits": load_digits, "wine": load_wine}
LEARNER_NAMES = sorted(name for name in psdmetric.__all__
                       if isinstance(getattr(psdmetric, name), type)
                       and issubclass(getattr(psdmetric, name), psdmetric.MahalanobisMixin)
                       and name != "MahalanobisMixin")


def _pipeline(name, n_neighbors, random_state):
    steps = [StandardScaler()]
    if name != "Euclidean":
        learner = getattr(psdmetric, name)()
        if "random_state" in learner.get_params():
            learner.set_params(random_state=random_state)
        steps.append(learner)
    return make_pipeline(*steps, KNeighborsClassifier(n_neighbors))


def demo(learners=DEMO_LEARNERS, n_neighbors=5, n_splits=5, random_state=0, file=None):
    """Print k-NN test error and fit time, Euclidean against learned metrics.

    Each metric is scored by stratified ``n_splits``-fold cross-validation of
    ``StandardScaler → learner → KNeighborsClassifier(n_neighbors)`` on scikit-learn's
    bundled digits and wine data.
    """
    print(f"{n_neighbors}-NN test error (mean ± standard deviation over {n_splits} folds) and "
          "fit time per fold,\nEuclidean metric against metrics learned with default "
          "parameters.\n", file=file)
    header = f"{'data':<8} {'metric':<14} {'test error':>16} {'fit time (s)':>13}"
    print(header, file=file)
    print("-" * len(header), file=file)
    folds = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
    stopped = False
    for data_name, load in DATASETS.items():
        X, y = load(return_X_y=True)
        for name in ("Euclidean", *learners):
            print(f"{data_name:<8} {name:<14} ", end="", flush=True, file=file)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                scores = cross_validate(_pipeline(name, n_neighbors, random_state), X, y,
                                        cv=folds)
            hit_max_iter = any(issubclass(w.category, ConvergenceWarning) for w in caught)
            stopped |= hit_max_iter
            errors = 1.0 - scores["test_score"]
            error = f"{errors.mean():.2%} ± {errors.std():.2%}" + ("*" if hit_max_iter else " ")
            print(f"{error:>16} {np.mean(scores['fit_time']):>13.3f}", file=file)
    if stopped:
        print("\n* stopped at max_iter on at least one fold (ConvergenceWarning)", file=file)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="psdmetric", description=__doc__)
    parser.add_argument("--version", action="version",
                        version=f"psdmetric {psdmetric.__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo_parser = commands.add_parser(
        "demo", help="k-NN on scikit-learn's digits and wine, Euclidean against learned metrics")
    demo_parser.add_argument("--learners", nargs="+", default=DEMO_LEARNERS,
                             choices=LEARNER_NAMES, metavar="LEARNER",
                             help=f"learners to compare (default: {' '.join(DEMO_LEARNERS)})")
    args = parser.parse_args(argv)
    return demo(args.learners)


if __name__ == "__main__":
    sys.exit(main())
