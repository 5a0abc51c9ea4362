"""Cyclic Bregman projections: the driver shared by the exact projection learners.

A learner supplies ``sweep(order)``, one pass over all constraints in the given order
that updates its matrix and the dual variables ν in place. The driver draws a fresh
random order for every cycle, repeats until ν settles, prints the ``verbose`` table,
warns when ``max_iter`` is hit and goes back to the state the last counted cycle left
when the user interrupts the fit.

Why a fresh order: with one fixed order (as in the ITML reference code) the projections
can creep towards the solution for thousands of cycles; on scikit-learn's digits with
4,000 pairs a fixed order is still 0.6 % away from the optimum after 3,000 cycles, while
reshuffled cycles reach it to machine precision (KKT residuals ~1e-13) in about 100.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning


def dual_change(dual, previous):
    """Change of the duals over one cycle, ``‖Δν‖₁ / (‖ν‖₂ + ‖ν_prev‖₂)``.

    This is the criterion of the ITML reference code (also used by metric-learn), so
    equal ``tol`` means equal stopping rules across the two libraries.
    """
    scale = max(np.abs(dual).max(initial=0.0), np.abs(previous).max(initial=0.0))
    if scale == 0.0:
        return 0.0
    # Duals scale like 1/distance²: divide first so tiny features cannot overflow the norms.
    dual, previous = dual / scale, previous / scale
    norm = np.linalg.norm(dual) + np.linalg.norm(previous)
    return float(np.abs(dual - previous).sum() / norm)


def checkpoint(arrays, *counts):
    """``(*counts, copies of arrays)``: one value, so that an interrupt cannot split them.

    A compiled kernel runs to its end before Python raises ``KeyboardInterrupt``, so a
    Ctrl-C usually lands after a cycle has run but before it is counted; going back to
    the last checkpoint keeps the count and the state in step.
    """
    return (*counts, [array.copy() for array in arrays])


def roll_back(arrays, kept, name):
    """Put ``arrays`` back as the checkpoint ``kept`` holds them, warn, return its counts.

    The first count is the number of complete cycles, named in the warning.
    """
    *counts, copies = kept
    for array, copy in zip(arrays, copies):
        array[...] = copy
    warnings.warn(
        f"{name}: training interrupted by the user after {counts[0]} complete cycles; "
        "keeping the metric learned so far.",
        ConvergenceWarning,
    )
    return counts


def cyclic_projections(sweep, dual, state, *, tol, max_iter, verbose, name, random_state):
    """Run ``sweep`` until the change of ``dual`` over a cycle drops below ``tol``.

    Parameters
    ----------
    sweep : callable
        ``sweep(order) -> int`` projects onto every constraint once, visiting them in
        ``order`` (an ``intp`` permutation), updates ``dual`` in place and returns how
        many constraints were violated when visited.
    dual : ndarray of shape (n_constraints,)
        The dual variables ν, updated in place by ``sweep``.
    state : tuple of ndarray
        Every other array ``sweep`` updates in place (the matrix, slack variables). On
        Ctrl-C these and ``dual`` are put back as the last counted cycle left them
        (:func:`checkpoint`).
    tol : float
        Stop when :func:`dual_change` is at most ``tol``.
    max_iter : int
        Maximum number of cycles; reaching it raises a ``ConvergenceWarning``.
    verbose : int
        Print one table row per cycle when positive.
    name : str
        Estimator name used in the table title and in warnings.
    random_state : RandomState
        Draws the order of every cycle.

    Returns
    -------
    n_iter : int
        Number of complete cycles.
    """
    if verbose:
        print(f"[{name}]")
        print(f"{'cycle':>8} {'violated':>10} {'dual change':>14} {'time (s)':>10}")
        print("-" * 45)
    arrays = (dual, *state)
    kept = checkpoint(arrays, 0)
    try:
        for n_iter in range(1, max_iter + 1):
            start = time.perf_counter()
            n_violated = sweep(random_state.permutation(len(dual)).astype(np.intp))
            change = dual_change(dual, kept[1][0])
            if verbose:
                elapsed = time.perf_counter() - start
                print(f"{n_iter:>8d} {n_violated:>10d} {change:>14.3e} {elapsed:>10.3f}")
            if change <= tol:
                return n_iter
            kept = checkpoint(arrays, n_iter)
    except KeyboardInterrupt:
        (completed,) = roll_back(arrays, kept, name)
        return completed
    warnings.warn(
        f"{name} did not converge in max_iter={max_iter} cycles (dual change "
        f"{change:.3e} > tol={tol}). Increase max_iter or tol.",
        ConvergenceWarning,
    )
    return n_iter
