"""Command line: ``python -m psdmetric demo``."""

import argparse
import sys
import time
import warnings

from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler


def demo(n_neighbors=3, random_state=0):
    """k-NN test error and fit time on the bundled digits: Euclidean vs learned metrics."""
    from psdmetric import LogDet, OnlineLogDet

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=random_state
    )
    print(f"digits: {X_train.shape[0]} training and {X_test.shape[0]} test samples, "
          f"{X.shape[1]} features, {n_neighbors}-NN\n")
    learners = [
        ("Euclidean", None),
        ("LogDet (ITML)", LogDet(random_state=random_state)),
        ("LogDet, 3 neighbour pairs", LogDet(n_neighbors=3, random_state=random_state)),
        ("OnlineLogDet (Burg)", OnlineLogDet(random_state=random_state)),
    ]
    print(f"{'metric':<26} {'test error':>10} {'fit time (s)':>13} {'n_iter_':>8}")
    for name, learner in learners:
        print(f"{name:<26} ", end="", flush=True)
        steps = [StandardScaler()] + ([learner] if learner is not None else [])
        model = make_pipeline(*steps, KNeighborsClassifier(n_neighbors))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            start = time.perf_counter()
            model.fit(X_train, y_train)
            elapsed = time.perf_counter() - start
        error = 1.0 - model.score(X_test, y_test)
        cycles = "" if learner is None else str(learner.n_iter_)
        if caught:
            cycles += " (max_iter reached)"
        print(f"{error:>10.2%} {elapsed:>13.3f} {cycles:>8}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="psdmetric", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="k-NN on scikit-learn's digits, Euclidean vs learned")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return demo()
    return 1


if __name__ == "__main__":
    sys.exit(main())
