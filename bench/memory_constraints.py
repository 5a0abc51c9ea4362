"""Peak memory of fitting with 10⁶ constraints over 10⁵ points (issue 7).

Asserts that no n×n array and no constraints×d×d stack is ever allocated: the traced
peak (numpy allocations are traced) must stay within a small multiple of the data
(n×d) plus the constraint arrays (a few numbers per constraint).

    python bench/memory_constraints.py [--samples 100000 --constraints 1000000]
"""

import argparse
import json
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from psdmetric import LogDet, pairs_from_labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--constraints", type=int, default=1_000_000)
    parser.add_argument("--cycles", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.RandomState(0)
    n, d, m = args.samples, args.features, args.constraints
    y = rng.randint(0, 10, size=n)
    X = rng.randn(n, d) + y[:, None]
    data_bytes = X.nbytes

    results = {"samples": n, "features": d, "constraints": m, "cycles": args.cycles}
    tracemalloc.start()
    start = time.perf_counter()
    constraints = pairs_from_labels(y, m, random_state=0)
    results["pairs_seconds"] = round(time.perf_counter() - start, 2)
    results["pairs_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LogDet(max_iter=args.cycles, random_state=0).fit(X, constraints=constraints)
    results["fit_seconds"] = round(time.perf_counter() - start, 2)
    results["fit_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    per_constraint = 8 * 8  # pairs (2 intp), label, direction, target, dual, spares
    budget = 4 * data_bytes + 2 * per_constraint * m
    results["budget_bytes"] = budget
    results["n_by_n_bytes"] = 8 * n * n
    results["constraints_by_d_by_d_bytes"] = 8 * m * d * d
    results["within_budget"] = max(results["pairs_peak_bytes"], results["fit_peak_bytes"]) <= budget
    print(json.dumps(results, indent=2))
    Path("docs/benchmarks").mkdir(parents=True, exist_ok=True)
    Path("docs/benchmarks/memory_constraints.json").write_text(json.dumps(results, indent=2))
    return 0 if results["within_budget"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
