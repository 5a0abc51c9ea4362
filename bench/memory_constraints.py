"""Peak memory of fitting with 10⁶ constraints over 10⁵ points.

Asserts that no n×n array and no constraints×d×d stack is ever allocated: the traced
peak (numpy allocations are traced) must stay within a small multiple of the data
(n×d) plus the constraint arrays (a few numbers per constraint).

    python bench/memory_constraints.py [--samples 100000 --constraints 1000000]
    python bench/memory_constraints.py --quick   # 10x smaller, written to a scratch dir
"""

import json
import tracemalloc
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from _harness import parse, write_json
from _reporting import Stopwatch
from psdmetric import LogDet, pairs_from_labels


def add_arguments(parser):
    parser.add_argument("--samples", type=int, default=None, help="default 100,000")
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--constraints", type=int, default=None, help="default 1,000,000")
    parser.add_argument("--cycles", type=int, default=2)


def main(argv=None):
    args = parse(__doc__.splitlines()[0], argv, add_arguments)
    shrink = 10 if args.quick else 1
    rng = np.random.RandomState(0)
    n = args.samples or 100_000 // shrink
    d, m = args.features, args.constraints or 1_000_000 // shrink
    y = rng.randint(0, 10, size=n)
    X = rng.randn(n, d) + y[:, None]
    data_bytes = X.nbytes

    results = {"samples": n, "features": d, "constraints": m, "cycles": args.cycles}
    tracemalloc.start()
    with Stopwatch() as watch:
        constraints = pairs_from_labels(y, m, random_state=0)
    results["pairs_seconds"] = round(watch.wall, 2)
    results["pairs_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.reset_peak()
    with warnings.catch_warnings(), Stopwatch() as watch:
        warnings.simplefilter("ignore", ConvergenceWarning)
        LogDet(max_iter=args.cycles, random_state=0).fit(X, constraints=constraints)
    results["fit_seconds"] = round(watch.wall, 2)
    results["fit_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    per_constraint = 8 * 8  # pairs (2 intp), label, direction, target, dual, spares
    budget = 4 * data_bytes + 2 * per_constraint * m
    results["budget_bytes"] = budget
    results["n_by_n_bytes"] = 8 * n * n
    results["constraints_by_d_by_d_bytes"] = 8 * m * d * d
    results["within_budget"] = max(results["pairs_peak_bytes"], results["fit_peak_bytes"]) <= budget
    print(json.dumps(results, indent=2))
    write_json(args.out / "memory_constraints.json", results)
    return 0 if results["within_budget"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
