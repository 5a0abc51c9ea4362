"""Fuzz the constraint-input validation with hypothesis.

Draws arbitrary index arrays, labels, bounds and targets (any shape, dtype, sign,
NaN/inf, out of range) and feeds them to the constraint types and to ``fit``. The only
acceptable outcomes are success or a documented ``ValueError`` / ``TypeError`` whose
message names the argument; anything else is a crash and is reported.

    python bench/fuzz_constraints.py [--examples 10000]
    python bench/fuzz_constraints.py --quick   # 1,000 examples, written to a scratch dir
"""

import json
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.exceptions import ConvergenceWarning

import psdmetric
from _harness import parse, write_json
from _reporting import Stopwatch
from psdmetric import DistanceTargets, PairConstraints, TripletConstraints

ARGUMENT_NAMES = ("pairs", "labels", "bounds", "distances", "triplets", "constraints",
                  "X has only")

X = np.random.RandomState(0).randn(8, 3)

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)
small_integers = hnp.arrays(dtype=np.int64, shape=shapes, elements=st.integers(-3, 12))
any_dtype = st.sampled_from([np.int32, np.uint8, np.bool_, np.complex128, np.float32]).flatmap(
    lambda dtype: hnp.arrays(dtype=dtype, shape=shapes))
floats = hnp.arrays(
    dtype=np.float64,
    shape=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6),
    elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
)
anything = st.one_of(small_integers, any_dtype, floats, st.lists(st.integers(-3, 12), max_size=6),
                     st.none(), st.text(max_size=3))


@st.composite
def nearly_valid(draw, width):
    """Index rows of the right width, mostly in range, with matching-length vectors."""
    n = draw(st.integers(1, 6))
    rows = draw(hnp.arrays(np.int64, (n, width), elements=st.integers(-1, 9)))
    labels = draw(hnp.arrays(np.int64, n, elements=st.sampled_from([1, -1, 1, -1, 0])))
    values = draw(hnp.arrays(np.float64, n, elements=st.one_of(
        st.floats(0.01, 100.0), st.sampled_from([0.0, -1.0, np.nan, np.inf]))))
    return rows, labels, values


def learners_for(kind):
    return [getattr(psdmetric, name) for name in psdmetric.__all__
            if isinstance(getattr(psdmetric, name), type)
            and getattr(getattr(psdmetric, name), "_constraint_kind", None) == kind
            and hasattr(getattr(psdmetric, name), "fit")
            and name != "MahalanobisMixin"]


LEARNERS = {kind: learners_for(kind) for kind in ("pairs", "targets", "triplets")}
outcomes = {"cases": 0, "rejected_at_construction": 0, "fits": 0, "fits_rejected": 0,
            "crashes": []}


def attempt(build, kind):
    outcomes["cases"] += 1
    try:
        constraints = build()
    except (ValueError, TypeError) as exc:
        record_rejection(exc, "rejected_at_construction")
        return
    for Learner in LEARNERS[kind]:
        outcomes["fits"] += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                estimator = Learner(max_iter=5).fit(X, constraints=constraints)
        except (ValueError, TypeError) as exc:
            record_rejection(exc, "fits_rejected")
            continue
        M = estimator.get_mahalanobis_matrix()
        if not (np.all(np.isfinite(M)) and np.linalg.eigvalsh(M).min() >= -1e-10 * abs(M).max()):
            outcomes["crashes"].append(f"{Learner.__name__}: invalid matrix")


def record_rejection(exc, counter):
    if not any(name in str(exc) for name in ARGUMENT_NAMES):
        outcomes["crashes"].append(f"unclear message: {type(exc).__name__}: {exc}")
    outcomes[counter] += 1


def main(argv=None):
    args = parse(
        __doc__.splitlines()[0], argv, lambda parser: parser.add_argument(
            "--examples", type=int, default=None, help="default 10,000 (1,000 with --quick)"))
    examples = args.examples or (1_000 if args.quick else 10_000)
    per_kind = examples // 3 + 1
    config = settings(max_examples=per_kind, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))

    @config
    @given(pairs=anything, labels=anything, bounds=anything, near=nearly_valid(2),
           use_near=st.booleans(), no_bounds=st.booleans())
    def fuzz_pairs(pairs, labels, bounds, near, use_near, no_bounds):
        if use_near:
            pairs, labels, bounds = near
            bounds = None if no_bounds else bounds
        attempt(lambda: PairConstraints(pairs, labels, bounds), "pairs")

    @config
    @given(pairs=anything, distances=anything, near=nearly_valid(2), use_near=st.booleans())
    def fuzz_targets(pairs, distances, near, use_near):
        if use_near:
            pairs, _, distances = near
        attempt(lambda: DistanceTargets(pairs, distances), "targets")

    @config
    @given(triplets=anything, near=nearly_valid(3), use_near=st.booleans())
    def fuzz_triplets(triplets, near, use_near):
        if use_near:
            triplets = near[0]
        attempt(lambda: TripletConstraints(triplets), "triplets")

    with Stopwatch() as watch:
        for fuzz in (fuzz_pairs, fuzz_targets, fuzz_triplets):
            fuzz()
    result = {
        "cases": outcomes["cases"],
        "rejected_at_construction": outcomes["rejected_at_construction"],
        "fits": outcomes["fits"],
        "fits_rejected": outcomes["fits_rejected"],
        "crashes": len(outcomes["crashes"]),
        "crash_examples": outcomes["crashes"][:10],
        "learners": {kind: [c.__name__ for c in found] for kind, found in LEARNERS.items()},
        "seconds": round(watch.wall, 1),
    }
    print(json.dumps(result, indent=2))
    write_json(args.out / "fuzz_constraints.json", result)
    return 1 if outcomes["crashes"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
