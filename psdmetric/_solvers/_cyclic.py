"""Cyclic Bregman projections: the driver shared by the exact projection learners.

A learner supplies ``sweep(order)``, one pass over all constraints in the given order
that updates its matrix and the dual variables ν in place. The driver draws a fresh
random order for every cycle and repeats until ν settles, on the iteration driver of
:mod:`psdmetric._solvers._driver` (verbose table, warnings, Ctrl-C).

Why a fresh order: with one fixed order (as in the ITML reference code) the projections
can creep towards the solution for thousands of cycles; on scikit-learn's digits with
4,000 pairs a fixed order is still 0.6 % away from the optimum after 3,000 cycles, while
reshuffled cycles reach it to machine precision (KKT residuals ~1e-13) in about 100.
"""

import numpy as np

from ._driver import ArrayCheckpoint, Round, iterate


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


def cyclic_projections(sweep, dual, state, *, tol, max_iter, verbose, name, random_state,
                       failure=None):
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
        Ctrl-C these and ``dual`` are put back as the last counted cycle left them.
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
    failure : callable, default=None
        ``failure() -> str or None``, asked after every cycle: a text stops the cycles
        with that warning (e.g. the constraints are proved infeasible).

    Returns
    -------
    n_iter : int
        Number of complete cycles.
    """
    checkpoint = ArrayCheckpoint(dual, *state)

    def one_cycle():
        n_violated = sweep(random_state.permutation(len(dual)).astype(np.intp))
        change = dual_change(dual, checkpoint.saved(0))
        return Round((n_violated, change), converged=change <= tol,
                     failure=failure() if failure is not None else None)

    return iterate(one_cycle, checkpoint, max_iter=max_iter, verbose=verbose, name=name,
                   unit="cycle", columns=(("violated", "d"), ("dual change", ".3e")))
