"""One harness for every benchmark: declared cases, cached folds, the reference libraries.

A benchmark script is a list of cases and the name of the module under ``_render/``
that writes its page::

    import sys
    import psdmetric
    from _harness import Case, main

    def cases(args):
        return [
            Case("Euclidean", None, "iris", into="cells"),          # plain 5-NN
            Case("LogDet", lambda: psdmetric.LogDet(random_state=0), "iris",
                 into="cells"),
            Case("metric-learn LMNN", "LMNN", "iris", into="cells"),  # an ANCHORS key
            Case("fit times", lambda: psdmetric.LogDet(random_state=0), "wine",
                 protocol="fit_time"),
            Case("curve", protocol=my_measure, params={"n": 1000}, quick={"n": 100}),
        ]

    if __name__ == "__main__":
        sys.exit(main("my_page", cases))        # renders with _render/my_page.py

``python bench/bench_my_page.py`` runs every case and writes
``docs/benchmarks/my_page.{json,md,png}``; ``--quick`` runs the cases with their
``quick`` parameters into a scratch directory, ``--out DIR`` writes elsewhere,
``--render-only`` re-renders the page from the JSON already in the output directory,
``--only NAME ...`` reruns those cases into the JSON already there (the page keeps its
run's machine and lists each rerun with its own).

Protocols:

- ``"kfold_knn"`` (the default): the suite protocol of ``_folds``, stratified 5-fold
  cross-validation (shuffled, ``random_state=0``) of ``StandardScaler`` → learner →
  ``KNeighborsClassifier(5)`` on a ``_datasets.load_suite`` set; every fold is cached
  on disk, psdmetric's by the learner's parameters and code version, the reference
  libraries' (metric-learn 0.7.0, scikit-learn's NCA, in their own venv through
  ``_anchors``) by name. ``learner`` is ``None`` (Euclidean), a factory of a psdmetric
  estimator, or a key of ``ANCHORS``. Each cell has the run's ``budget`` seconds.
- ``"fit_time"``: wall and CPU seconds of ``fit`` on each training fold of the same
  folds, in a child process, the folds finished within ``budget`` wall seconds.
- a function: ``protocol(**params)`` returns any JSON-able value (a function that
  takes ``results`` also gets the results measured so far).

A case's value goes to ``results[name]``; with ``into="cells"`` it is appended to the
list ``results["cells"]`` (a table's rows), or set as ``results["cells"][name]`` if
``setup`` made that a dict. ``results["case_seconds"]`` records each case's wall and
CPU seconds, ``results["machine"]`` the machine and its load.
"""

import argparse
import importlib
import inspect
import multiprocessing
import queue
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from _anchors import run_anchor
from _datasets import load_suite
from _folds import ANCHORS, N_SPLITS, kfold_cell
from _render._text import reruns_text
from _reporting import (Stopwatch, finish_machine, jsonable, knn_error, machine,
                        read_json, write_json)

# What scripts take from here: the cases, the runner, and the shared helpers.
__all__ = ["ANCHORS", "Case", "knn_error", "main", "parse", "read_json", "run_anchor",
           "run_cases", "write_json"]

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"
QUICK_OUT = Path(tempfile.gettempdir()) / "psdmetric-bench-quick"
DEFAULT_BUDGET = 600.0


@dataclass(frozen=True)
class Case:
    """One measurement: a learner on a data set under a protocol.

    Attributes
    ----------
    name : str
        The key of the result (a table row, or a section of the page).
    learner : None, str or callable, default=None
        ``None``: no learner (Euclidean); a key of ``ANCHORS``: metric-learn 0.7.0 or
        scikit-learn's NCA; a callable: a factory of the psdmetric estimator.
    data : str or callable, default=None
        A ``_datasets.load_suite`` name, or (``fit_time``) a function returning
        ``(X, y)``; unused by measure functions.
    protocol : str or callable, default="kfold_knn"
        ``"kfold_knn"``, ``"fit_time"`` or a measure function.
    params : dict
        Keyword arguments of a measure function.
    quick : dict
        Parameters that replace ``params`` under ``--quick``.
    into : str, default=None
        Append the value to the list ``results[into]`` (or set ``results[into][name]``
        if it is a dict) instead of setting ``results[name]``.
    labels : dict
        Extra entries of a ``kfold_knn`` cell (e.g. ``{"family": "psdmetric"}``).
    """

    name: str
    learner: Any = None
    data: Any = None
    protocol: Any = "kfold_knn"
    params: dict = field(default_factory=dict)
    quick: dict = field(default_factory=dict)
    into: str = None
    labels: dict = field(default_factory=dict)

    def estimator(self):
        """The learner to fit: ``None``, an anchor key, or a fresh psdmetric estimator."""
        return self.learner() if callable(self.learner) else self.learner


def kfold_knn(case, options):
    """The suite protocol's cell for ``case`` (folds cached by ``_folds``)."""
    cell = kfold_cell(case.data, case.estimator(), options.budget,
                      fit_anchors=not options.cached_references)
    return {"method": case.name, **case.labels, "dataset": case.data, **cell}


def _timed_folds(estimator, data, n_folds, results):
    """Child process: fit on each training fold and send each fold's times."""
    X, y = data() if callable(data) else load_suite(data)
    folds = StratifiedKFold(N_SPLITS, shuffle=True, random_state=0).split(X, y)
    results.put("ready")  # the budget counts from here: imports and loading excluded
    for fold, (train, _) in zip(range(n_folds), folds):
        X_train = StandardScaler().fit_transform(X[train])
        model = clone(estimator)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with Stopwatch() as watch:
                    model.fit(X_train, y[train])
            except Exception as exc:  # reported in the table
                results.put(f"failed: {type(exc).__name__}: {exc}"[:300])
                return
        results.put({"fold": fold, "seconds": watch.seconds(),
                     "n_iter": getattr(model, "n_iter_", None),
                     "converged": not any(issubclass(w.category, ConvergenceWarning)
                                          for w in caught)})
    results.put(None)


def timed_folds(case, options):
    """Per-fold fit times of ``case`` within ``options.budget`` wall seconds of fitting,
    and the status: ``"done"``, ``"over budget"`` or ``"failed: ..."``."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    n_folds = options.n_folds or N_SPLITS
    child = context.Process(target=_timed_folds, daemon=True,
                            args=(case.estimator(), case.data, n_folds, results))
    child.start()
    folds = []
    try:
        if results.get(timeout=300) != "ready":
            raise RuntimeError(f"{case.name}: the child failed to start")
        deadline = time.perf_counter() + options.budget
        while True:
            try:
                item = results.get(timeout=max(deadline - time.perf_counter(), 0.01))
            except queue.Empty:
                return folds, "over budget"
            if item is None:
                return folds, "done"
            if isinstance(item, str):
                return folds, item
            folds.append(item)
    finally:
        if child.is_alive():
            child.terminate()
        child.join()


def fit_time(case, options):
    """``{"method", **labels, "folds", "status"}``: the fit times of ``timed_folds``."""
    folds, status = timed_folds(case, options)
    return {"method": case.name, **case.labels, "folds": folds, "status": status}


PROTOCOLS = {"kfold_knn": kfold_knn, "fit_time": fit_time}


def measure(case, options, results):
    """The value of one case under its protocol."""
    if case.protocol in PROTOCOLS:
        return PROTOCOLS[case.protocol](case, options)
    params = {**case.params, **(case.quick if options.quick else {})}
    if "results" in inspect.signature(case.protocol).parameters:
        params["results"] = results
    return case.protocol(**params)


def run_cases(cases, options, results):
    """Measure every case into ``results``, timing each (wall and CPU)."""
    timings = results.setdefault("case_seconds", {})
    for case in cases:
        label = case.name if case.data is None else f"{case.name} / {case.data}"
        print(f"[{label}]", flush=True)
        with Stopwatch() as watch:
            value = measure(case, options, results)
        if case.into is None:
            results[case.name] = value
        elif isinstance(results.setdefault(case.into, []), dict):
            results[case.into][case.name] = value
        else:
            results[case.into].append(value)
        timings[label] = watch.seconds()
    return results


def renderer(module):
    """The page module ``_render.<module>``: ``page(results)``, optionally ``figure``."""
    return importlib.import_module(f"_render.{module}")


def kept_cells(args, name):
    """Under ``--only``, the ``into="cells"`` rows of the page's JSON that are not rerun
    (the rerun ones are appended anew); otherwise none."""
    if not args.only:
        return []
    earlier = read_json(args.out / f"{name}.json") or {}
    return [c for c in earlier.get("cells", []) if c["method"] not in args.only]


def write_page(out, name, results, render):
    """Write ``<name>.md`` and, if the renderer draws one, ``<name>.png``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    page = render.page(results)
    if results.get("reruns"):
        page = page.rstrip("\n") + "\n\n" + reruns_text(results["reruns"]) + "\n"
    (out / f"{name}.md").write_text(page)
    figure = render.figure(results) if hasattr(render, "figure") else None
    if figure is not None:
        figure.savefig(out / f"{name}.png", dpi=110)
    print(f"wrote {out / name}.md" + (" and .png" if figure is not None else ""))
    return page


def parse(description, argv=None, add_arguments=None, *, cases=False):
    """``--quick``, ``--out`` and the script's own options; with ``cases``, the runner's.

    ``args.out`` is the output directory (a scratch one under ``--quick``).
    """
    parser = argparse.ArgumentParser(description=description)
    if add_arguments is not None:
        add_arguments(parser)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: the cases' quick parameters, into a scratch directory")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"output directory (default {DOCS}, or {QUICK_OUT} with --quick)")
    if cases:
        add_runner_arguments(parser)
    args = parser.parse_args(argv)
    args.out = args.out or (QUICK_OUT if args.quick else DOCS)
    return args


def add_runner_arguments(parser):
    """What every script of cases takes: render only, rerun some, budgets."""
    parser.add_argument("--render-only", action="store_true",
                        help="re-render the page from the JSON in the output directory")
    parser.add_argument("--only", nargs="+", metavar="CASE",
                        help="rerun these cases into the JSON in the output directory")
    if not any(action.dest == "budget" for action in parser._actions):
        parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
                            help="time budget of a kfold_knn or fit_time case")
    parser.add_argument("--cached-references", action="store_true",
                        help="fit no metric-learn / scikit-learn learner: use the folds "
                             "in the anchor cache")
    parser.set_defaults(n_folds=None)


def main(name, cases, render=None, *, argv=None, add_arguments=None, setup=None,
         finish=None, description=None, blas_threads=None):
    """Run a benchmark script: its cases, then its page.

    Parameters
    ----------
    name : str or callable
        The page's file name (``docs/benchmarks/<name>.*``), or ``name(args)``.
    cases : list of Case or callable
        The cases, or ``cases(args)`` returning them.
    render : str, default=None
        The module under ``_render/`` (default: ``name``).
    add_arguments : callable, default=None
        ``add_arguments(parser)`` adds the script's own options.
    setup, finish : callable, default=None
        ``setup(args)`` returns entries recorded before the cases run;
        ``finish(results, args)`` adds what is derived from them.
    blas_threads : int, default=None
        Run every case with BLAS limited to this many threads.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(description or sys.modules["__main__"].__doc__.splitlines()[0], argv,
                 add_arguments, cases=True)
    name = name(args) if callable(name) else name
    page_module = renderer(render or name)
    if args.render_only:
        results = read_json(args.out / f"{name}.json")
        if results is None:
            raise SystemExit(f"--render-only: no {args.out / name}.json")
        write_page(args.out, name, results, page_module)
        return 0
    script = Path(sys.argv[0]).name
    results = {"machine": machine(), "command": " ".join([f"python bench/{script}", *argv]),
               "name": name, "quick": args.quick}
    if args.only:
        # The page keeps its run's machine; each rerun records its own cases and machine.
        earlier = read_json(args.out / f"{name}.json") or {}
        rerun = {"cases": list(args.only), "command": results["command"],
                 "machine": results["machine"], "started": time.time()}
        results = {"machine": rerun["machine"], **earlier,
                   "reruns": [*earlier.get("reruns", []), rerun]}
    results.update(setup(args) if setup else {})
    declared = cases(args) if callable(cases) else cases
    unknown = set(args.only or ()) - {case.name for case in declared}
    if unknown:
        raise SystemExit(f"--only: no case named {', '.join(sorted(unknown))}")
    with threadpool_limits(blas_threads):
        run_cases([case for case in declared if not args.only or case.name in args.only],
                  args, results)
    if finish:
        finish(results, args)
    finish_machine(results["reruns"][-1]["machine"] if args.only else results["machine"])
    write_json(args.out / f"{name}.json", results)
    print("\n" + write_page(args.out, name, jsonable(results), page_module))
    return 0
