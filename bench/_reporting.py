"""What the benchmarks share below the harness: machine, timing, files, k-NN error.

``_harness`` runs the cases and writes the pages with these; ``_render`` formats them.
"""

import contextlib
import ctypes
import json
import math
import multiprocessing
import os
import platform
import queue
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info


def machine():
    """CPU, BLAS, versions and load at start: the context every timing depends on."""
    import psdmetric
    import sklearn

    cpu = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                    if line.startswith("model name")), cpu)
    keys = ("internal_api", "version", "architecture", "num_threads")
    blas = [{key: info.get(key) for key in keys}
            for info in threadpool_info() if info.get("user_api") == "blas"]
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "blas": blas,
            "python": platform.python_version(), "numpy": np.__version__,
            "scikit_learn": sklearn.__version__, "psdmetric": psdmetric.__version__,
            "load_average_start": list(os.getloadavg())}


# glibc's initial mmap threshold. Once a process frees a large mmapped block, glibc
# raises the threshold to its size and serves later blocks up to it from the heap, where
# numpy's huge-page advice does not take: after the first cases of a page, an MNIST fold
# of LFDA took 0.29 s of CPU instead of 0.22 s (GEMMs 40 % slower).
_MMAP_THRESHOLD = 128 * 1024


def keep_fresh_process_memory():
    """Fix glibc's mmap threshold at its initial value, so that large arrays stay mmapped
    for the whole run as in a fresh process (where the anchors' workers fit); a no-op
    without glibc."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(ctypes.c_int(-3), ctypes.c_int(_MMAP_THRESHOLD))  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


class Stopwatch:
    """Wall and process-CPU seconds, summed over the ``with`` blocks it times."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def __enter__(self):
        self._start = (time.perf_counter(), time.process_time())
        return self

    def __exit__(self, *exc):
        self.wall += time.perf_counter() - self._start[0]
        self.cpu += time.process_time() - self._start[1]

    def seconds(self):
        """``{"wall": ..., "cpu": ...}``."""
        return {"wall": self.wall, "cpu": self.cpu}


def finish_machine(info):
    """Record the load at the end of the run."""
    info["load_average_end"] = list(os.getloadavg())
    return info


def jsonable(value):
    """Plain JSON types; NaN and infinities become ``null``."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def utc_text(seconds):
    """A POSIX time as ``2026-11-27 10:10 UTC``."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def read_json(path):
    """The JSON value in ``path``, or ``None`` if there is no such file."""
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None


def write_json(path, value):
    """Write ``value`` (made plain by ``jsonable``) as indented JSON at ``path``.

    Through a temporary name and ``os.replace``: readers never see half a file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(jsonable(value), indent=2) + "\n")
    os.replace(temporary, path)


def knn_error(Z_train, y_train, Z_test, y_test, n_neighbors=5):
    """Test error of ``KNeighborsClassifier(n_neighbors)`` on (transformed) data."""
    from sklearn.neighbors import KNeighborsClassifier

    model = KNeighborsClassifier(n_neighbors).fit(Z_train, y_train)
    return float(1.0 - model.score(Z_test, y_test))


def loglog_slope(x, y):
    """Least-squares slope of log y against log x (the exponent of a power law)."""
    x, y = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(x, y, 1)[0])


# ε of the log error ratio: 0 errors stay finite, and sets are compared scale-free.
ERROR_RATIO_EPSILON = 0.005


def log_error_ratio(errors, euclidean_errors):
    """Mean over the folds of ``log((error + ε) / (Euclidean error + ε))``, ε = 0.005.

    0 is as good as Euclidean 5-NN, negative is better; the score of a default on a data
    set whatever its difficulty (``bench_defaults``, ``bench_psdboost_defaults``).
    """
    return float(np.mean([math.log((e + ERROR_RATIO_EPSILON) / (b + ERROR_RATIO_EPSILON))
                          for e, b in zip(errors, euclidean_errors)]))


def mean_and_standard_error(values):
    """Mean and standard error of the mean (NaN error for fewer than two values)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return math.nan, math.nan
    if len(values) == 1:
        return float(values[0]), math.nan
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(len(values)))


def _call_and_send(function, args, results):
    try:
        results.put(("ok", function(*args)))
    except Exception as exc:  # the caller reports it
        results.put(("failed", f"{type(exc).__name__}: {exc}"[:500]))


def run_with_time_limit(function, args, seconds, start_method="spawn"):
    """``function(*args)`` in a child process, killed after ``seconds``.

    Returns ``("ok", value)``, ``("failed", message)`` or ``("timeout", message)``.
    With ``start_method="spawn"`` (the default) ``function`` must be importable
    (module level) and its arguments picklable; the result must be picklable either
    way. Fork only from a parent that has not run OpenMP code (scikit-learn's k-NN,
    k-means and neighbour searches do): the forked child can deadlock.
    """
    context = multiprocessing.get_context(start_method)
    results = context.Queue()
    child = context.Process(target=_call_and_send, args=(function, args, results),
                            daemon=True)
    child.start()
    deadline = time.perf_counter() + seconds
    while True:
        try:
            outcome = results.get(timeout=1.0)
            break
        except queue.Empty:
            if not child.is_alive():
                outcome = ("failed", f"worker died (exit code {child.exitcode})")
                break
            if time.perf_counter() > deadline:
                outcome = ("timeout", f"did not finish within {seconds:.0f} s")
                child.kill()
                break
    child.join(timeout=10)
    return outcome


@contextlib.contextmanager
def tallied(module, screening):
    """Count what the cyclic driver of a learner's ``module`` does (e.g.
    ``psdmetric._bregman._logdet``): constraints swept, and projected (their dual changed).

    With ``screening=False`` the driver runs full sweeps, as before it screened.
    """
    real = module.cyclic_projections
    tally = {"swept": 0, "projected": 0}

    def driver(sweep, dual, *args, screen=None, **kwargs):
        def counted(order):
            before = dual[order]
            n_violated = sweep(order)
            tally["swept"] += len(order)
            tally["projected"] += int(np.count_nonzero(dual[order] != before))
            return n_violated
        return real(counted, dual, *args, screen=screen if screening else None, **kwargs)

    module.cyclic_projections = driver
    try:
        yield tally
    finally:
        module.cyclic_projections = real
