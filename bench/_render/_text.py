"""What several pages share: the machine sentence, number formats, pyplot."""

import math

import numpy as np

from _reporting import mean_and_standard_error, utc_text


def machine_line(info):
    """One markdown sentence describing the machine and how busy it was."""
    blas = ", ".join(f"{b['internal_api']} {b['version']} ({b['num_threads']} threads)"
                     for b in info["blas"])
    loads = [info["load_average_start"][0], info.get("load_average_end", [0.0])[0]]
    busy = max(loads) > 0.5 * info["logical_cpus"]
    return (f"Machine: {info['cpu']}, {info['logical_cpus']} logical CPUs, BLAS {blas}; "
            f"Python {info['python']}, numpy {info['numpy']}, scikit-learn "
            f"{info['scikit_learn']}, psdmetric {info['psdmetric']}. One-minute load "
            f"average {loads[0]:.2f} at start, {loads[1]:.2f} at end: "
            + ("the machine was shared with other jobs, so times are pessimistic and noisy."
               if busy else "the machine was quiet."))


def reruns_text(reruns):
    """The cases rerun into a page since its run (``--only``), each with its machine."""
    return "\n\n".join(
        f"Rerun into this page by `{rerun['command']}` ({utc_text(rerun['started'])}): "
        f"{', '.join(rerun['cases'])}; the rest of the page is from the run above. "
        + machine_line(rerun["machine"]) for rerun in reruns)


def command(results, script):
    """The command that wrote ``results`` (older JSON: the script and its flags)."""
    flags = [flag for flag, key in (("--reuse-metric-learn", "metric_learn_reused"),
                                    ("--quick", "quick")) if results.get(key)]
    return results.get("command") or " ".join([f"python bench/{script}.py", *flags])


def anchor_times(times, owner):
    """When the cached fits a page shows were measured (None: unrecorded); ``owner``, the
    possessive of their library ("metric-learn's")."""
    known = sorted(t for t in times if t is not None)
    parts = [f"{len(known)} were measured from {known[0]} to {known[-1]}"] if known else []
    if len(times) > len(known):
        parts.append(f"{len(times) - len(known)} in an earlier run, before measurement "
                     "times were recorded")
    return (f"{owner} fits are cached between runs (`/tmp/anchor_cache`, on the "
            f"machine that runs the page): " + " and ".join(parts) + ".")


def missing(value):
    """NaN, or JSON's null for it."""
    return value is None or math.isnan(value)


def se_or_zero(value):
    """A standard error, 0 where there is none (one fold, or JSON's null)."""
    return 0.0 if missing(value) else value


def within_one_se(ours, theirs):
    """Whether our mean fold error is at most theirs plus the larger standard error, on
    the folds both finished (None marks a failed fold); None if no fold is shared.

    A library that fails some folds is compared on the folds it finished: our mean over
    every fold against its mean over some would compare different test points.
    """
    shared = [(o, t) for o, t in zip(ours, theirs) if o is not None and t is not None]
    if not shared:
        return None
    (mine, mine_se), (other, other_se) = (mean_and_standard_error([o for o, _ in shared]),
                                          mean_and_standard_error([t for _, t in shared]))
    return mine <= other + max(se_or_zero(mine_se), se_or_zero(other_se))


def format_seconds(seconds):
    """``12 ms``, ``3.45 s`` or ``123 s``."""
    if seconds < 0.1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 100:
        return f"{seconds:.2f} s"
    return f"{seconds:.0f} s"


def table_row(cells):
    """``| a | b | c |``."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def pyplot():
    """matplotlib's pyplot on the non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def paired_bars(ax, names, series, ylabel):
    """Two bar series side by side at each of ``names``: ``series`` is two
    ``(label, heights)``."""
    position = np.arange(len(names))
    for offset, (label, heights) in zip((-0.2, 0.2), series):
        ax.bar(position + offset, heights, 0.4, label=label)
    ax.set_xticks(position, names)
    ax.set_ylabel(ylabel)
    ax.legend()


def held_out_table(result, label):
    """A leave-one-data-set-out choice: one row per held-out set, then the count sentence.

    ``result`` has ``sets`` and ``held_out`` (per set: ``chosen``, ``others_at_most``,
    ``misclassified``, ``euclidean``, ``at_most_euclidean``) and ``at_most_euclidean``;
    ``label(setting)`` names a setting. The sentence has no final full stop.
    """
    names = result["sets"]
    lines = ["| held-out set | setting chosen on the others | other sets at most Euclidean "
             "| misclassified | Euclidean | at most Euclidean |", "|---|---|---|---|---|---|"]
    for name in names:
        record = result["held_out"][name]
        lines.append(f"| {name} | {label(record['chosen'])} | {record['others_at_most']} "
                     f"of {len(names) - 1} | {record['misclassified']} | "
                     f"{record['euclidean']} | "
                     f"{'yes' if record['at_most_euclidean'] else 'no'} |")
    misses = [f"{name} {record['misclassified']} vs {record['euclidean']}"
              for name, record in result["held_out"].items()
              if not record["at_most_euclidean"]]
    return lines, (f"Held-out sets at most Euclidean: {result['at_most_euclidean']} of "
                   f"{len(names)}" + (f" (misses: {', '.join(misses)})" if misses else ""))


def settings_table_head(names, base, columns):
    """Header, rule and Euclidean row of a table of settings × sets, ``columns`` after them."""
    return ["| setting | " + " | ".join(names) + " | " + " | ".join(columns) + " |",
            "|---|" + "---|" * (len(names) + len(columns)),
            "| Euclidean | " + " | ".join(str(base[name]) for name in names) + " |"
            + " |" * len(columns)]


def settings_table_row(label, points, names, base, cells):
    """A setting's row: its points per set, the sets at most Euclidean's, then ``cells``."""
    wins = sum(points[name] <= base[name] for name in points)
    return (f"| {label} | " + " | ".join(str(points.get(name, "–")) for name in names)
            + f" | {wins} of {len(points)} | " + " | ".join(cells) + " |")
