"""Regenerate every benchmark result under docs/benchmarks/ with one command.

Runs every script in ``bench/`` (every ``*.py`` not starting with ``_``, this file
excepted), then the second runs of ``EXTRA_RUNS`` (the check sets' page), one
after the other so that their timings do not disturb each other, from the repository
root, and prints a summary. A script that fails does not stop the others;
the exit code is non-zero if any failed.

    python bench/run_all.py                    # full run: writes docs/benchmarks/
    python bench/run_all.py --quick            # smoke run of the scripts that take --quick
    python bench/run_all.py --only bench_suite bench_scaling

With ``--quick``, scripts that accept ``--quick`` get it (every script then writes to a
scratch directory, not docs/); scripts without a quick mode are
skipped and listed. metric-learn's venv (``.bench-venv/``) is created on first use.
"""

import argparse
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

# Pages written by a second run of a script with options of its own: (script, options).
# (The suite's second runs with options of their own are gone: bench_suite.py now
# covers the whole suite in one run, and its folds are cached.)
EXTRA_RUNS = []


def discover():
    """Benchmark scripts of bench/, by name."""
    return sorted(path for path in BENCH.glob("*.py")
                  if not path.name.startswith("_") and path.name != Path(__file__).name)


def has_quick_mode(path):
    """Whether the script takes ``--quick`` (its own option, or the harness's)."""
    source = path.read_text()
    return "--quick" in source or "_harness" in source


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: pass --quick, skip scripts without a quick mode")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="run only these scripts (file names, with or without .py)")
    args = parser.parse_args(argv)

    scripts = discover()
    if args.only:
        wanted = {name.removesuffix(".py") for name in args.only}
        unknown = wanted - {path.stem for path in scripts}
        if unknown:
            parser.error(f"no such benchmark script: {', '.join(sorted(unknown))}; "
                         f"found {', '.join(path.stem for path in scripts)}")
        scripts = [path for path in scripts if path.stem in wanted]

    runs = [(path, []) for path in scripts]
    runs += [(BENCH / script, options) for script, options in EXTRA_RUNS
             if BENCH / script in scripts]
    summary = []
    for path, options in runs:
        command = [sys.executable, str(path.relative_to(ROOT)), *options]
        name = " ".join([path.name, *options])
        if args.quick:
            if not has_quick_mode(path):
                summary.append((name, "skipped (no --quick mode)", 0.0))
                print(f"\n=== {path.name}: skipped, it has no --quick mode ===", flush=True)
                continue
            command.append("--quick")
        print(f"\n=== {' '.join(command)} ===", flush=True)
        start = time.perf_counter()
        code = subprocess.run(command, cwd=ROOT).returncode
        seconds = time.perf_counter() - start
        summary.append((name, "ok" if code == 0 else f"FAILED (exit {code})", seconds))

    print("\n=== summary ===")
    for name, status, seconds in summary:
        print(f"{name:<28} {status:<28} {seconds:8.0f} s")
    print(f"{'total':<28} {'':<28} {sum(s for _, _, s in summary):8.0f} s")
    return 1 if any(status.startswith("FAILED") for _, status, _ in summary) else 0


if __name__ == "__main__":
    sys.exit(main())
