"""The restricted master LP of PSDBoost (Shen, Welsh & Wang, 2008, (D1)), solved by HiGHS.

(D1) in the variables ``(w, π)``: minimise ``π`` subject to ``gains @ w ≤ π`` (one row
per rank-one base), ``Σ w = 1``, ``0 ≤ w ≤ C``. ``RestrictedMaster`` keeps it small on
a working set of triplets; the backend is one ``highspy`` model warm-started across
solves, or scipy's ``linprog`` from scratch when ``highspy`` is not installed.
"""

import warnings

import numpy as np
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning

try:
    import highspy
except ImportError:  # the optional extra: scipy's HiGHS solves each LP from scratch
    highspy = None

# Presolve only costs time on these small dense LPs; the objectives are often ~1e-3 in
# the rescaled units, so HiGHS's default 1e-7 feasibility would limit relative accuracy.
_HIGHS_OPTIONS = {"presolve": False, "primal_feasibility_tolerance": 1e-10,
                  "dual_feasibility_tolerance": 1e-10}
# Violations of the margin below this (rescaled units) are HiGHS round-off, not signal.
_LP_TOL = 1e-10
# Bases and triplets at zero for this many restricted-master solves leave the LP.
_MAX_IDLE_SOLVES = 5


class RestrictedMaster:
    """The restricted dual (D1) over a pool of bases, solved exactly on a working set.

    (D1) in the variables ``(w, π)``: minimise ``π`` subject to ``gains @ w ≤ π``,
    ``Σ w = 1``, ``0 ≤ w ≤ C``. The LP only carries the triplets that can take weight
    (a working set, grown until no other triplet violates the margin, so its optimum
    is that of the full LP), and bases and triplets that stayed at zero for
    ``_MAX_IDLE_SOLVES`` solves are dropped: the current solution stays optimal
    without them, so π never decreases. Each base and triplet keeps one id for the
    whole fit, so a persistent LP can be updated by what changed.
    """

    def __init__(self, n_triplets, C, name):
        self.C = C
        self.n_triplets = n_triplets
        self.lp = HighsLP(C, name) if highspy is not None else LinprogLP(C, name)
        self.bases = None
        self.gains = np.empty((0, n_triplets))
        self.base_ids = np.empty(0, dtype=np.intp)
        self.base_idle = np.empty(0, dtype=np.intp)
        self.working = None
        self.triplet_idle = np.zeros(n_triplets, dtype=np.intp)

    def add(self, bases, gains):
        """Add ``bases`` (n_new, rank, n_features) with their gains (rows of ``gains``)."""
        self.bases = bases if self.bases is None else np.concatenate([self.bases, bases])
        self.gains = np.vstack([self.gains, gains])
        first_id = self.base_ids[-1] + 1 if len(self.base_ids) else 0
        self.base_ids = np.concatenate([self.base_ids, first_id + np.arange(len(gains))])
        self.base_idle = np.concatenate([self.base_idle, np.zeros(len(gains), np.intp)])
        if self.working is None:
            # Start from the triplets the first bases separate worst; at least 1/C
            # of them are needed for Σ w = 1 with w ≤ C.
            size = min(self.n_triplets, max(2 * int(np.ceil(1.0 / self.C)), 16))
            self.working = np.sort(np.argsort(gains.min(axis=0), kind="stable")[:size])

    def solve(self):
        """Solve (D1); return ``π``, ``w``, the bases with ``θ > 0``, ``θ``, ``ρ``, ``ξ``."""
        while True:
            pi, w_working, theta, rho, xi_working = self.lp.solve(
                self.base_ids, self.working, self.gains[:, self.working])
            margins = theta @ self.gains
            outside = np.ones(self.n_triplets, dtype=bool)
            outside[self.working] = False
            violated = np.flatnonzero(outside & (margins < rho - _LP_TOL))
            if len(violated) == 0:
                break
            self.working = np.union1d(self.working, violated)
        w = np.zeros(self.n_triplets)
        w[self.working] = w_working
        xi = np.zeros(self.n_triplets)
        xi[self.working] = xi_working
        active = theta > 0
        self.base_idle = np.where(active, 0, self.base_idle + 1)
        self.triplet_idle[self.working] = np.where(
            w_working > 0, 0, self.triplet_idle[self.working] + 1)
        return pi, w, self.bases[active], theta[active], rho, xi

    def prune(self):
        """Drop the bases and triplets that stayed at zero for too many solves."""
        keep = self.base_idle <= _MAX_IDLE_SOLVES
        self.bases, self.gains, self.base_ids, self.base_idle = (
            self.bases[keep], self.gains[keep], self.base_ids[keep], self.base_idle[keep])
        self.working = self.working[self.triplet_idle[self.working] <= _MAX_IDLE_SOLVES]


def _primal_from_duals(x, row_duals, column_duals, C):
    """``π``, ``w``, ``θ``, ``ρ``, ``ξ`` of (D1) from HiGHS's solution (``π`` last in ``x``).

    HiGHS reports ∂π/∂(right-hand side): the base rows give ``−θ``, the equality
    ``ρ`` and the upper bounds ``−ξ`` (the Lagrangian of (D1) is
    ``π + θᵀ(gains w − π) + ρ(1 − Σ w) + ξᵀ(w − C)``, whose dual is (P1)).
    """
    w = np.clip(x[:-1], 0.0, C)
    theta = np.maximum(-row_duals, 0.0)
    theta /= theta.sum()
    xi = np.maximum(-column_duals, 0.0)
    return float(x[-1]), w, theta, xi


class LinprogLP:
    """(D1) solved from scratch by scipy's HiGHS at every call (no ``highspy``)."""

    def __init__(self, C, name):
        self.C, self.name = C, name

    def solve(self, base_ids, triplet_ids, gains):
        n_bases, n_triplets = gains.shape
        objective = np.zeros(n_triplets + 1)
        objective[-1] = 1.0
        problem = dict(
            A_ub=np.hstack([gains, -np.ones((n_bases, 1))]), b_ub=np.zeros(n_bases),
            A_eq=np.append(np.ones(n_triplets), 0.0)[None], b_eq=[1.0],
            bounds=[(0.0, self.C)] * n_triplets + [(None, None)],
        )
        # The interior-point method when the default (simplex) stops short of optimality.
        for method in ("highs", "highs-ipm"):
            result = linprog(objective, method=method, options=_HIGHS_OPTIONS, **problem)
            if result.status == 0:
                break
            first_failure = result.message
        else:
            if result.x is None or result.ineqlin.marginals is None:
                raise RuntimeError(
                    f"The restricted master LP failed with every HiGHS method: {result.message}")
            _warn_inexact_lp(self.name, first_failure)
        pi, w, theta, xi = _primal_from_duals(
            result.x, result.ineqlin.marginals, result.upper.marginals[:n_triplets], self.C)
        return pi, w, theta, float(result.eqlin.marginals[0]), xi


class HighsLP:
    """(D1) kept in one ``highspy`` model for the whole fit, warm-started at every call.

    Between calls bases (rows) and triplets (columns) are deleted and added by id;
    HiGHS keeps the previous basis, so a call costs the few simplex iterations the
    change needs instead of a solve from scratch. Column 0 is ``π``, row 0 ``Σ w = 1``.
    """

    def __init__(self, C, name):
        self.C, self.name = C, name
        # The bare binding: highspy.Highs registers callbacks, which prints a banner.
        self.highs = highspy._Highs()
        for option, value in {"output_flag": False, **_HIGHS_OPTIONS}.items():
            self.highs.setOptionValue(option, value)
        none_int, none = np.empty(0, np.int32), np.empty(0)
        self.highs.addCol(1.0, -highspy.kHighsInf, highspy.kHighsInf, 0, none_int, none)
        self.highs.addRow(1.0, 1.0, 0, none_int, none)
        self.rows = np.empty(0, dtype=np.intp)  # base ids, in row order after row 0
        self.columns = np.empty(0, dtype=np.intp)  # triplet ids, after column 0

    def solve(self, base_ids, triplet_ids, gains):
        """Update the model to the bases ``base_ids`` × triplets ``triplet_ids`` and solve.

        Both id arrays are sorted; ``gains`` has their shape. Returns ``π``, ``w``,
        ``θ``, ``ρ``, ``ξ`` in the order of the ids.
        """
        self._sync(base_ids, triplet_ids, gains)
        status = self._run()
        if status != highspy.HighsModelStatus.kOptimal:
            # Cold restart with the interior-point method, then accept a feasible point.
            first_failure = self.highs.modelStatusToString(status)
            self.highs.setOptionValue("solver", "ipm")
            self.highs.clearSolver()
            status = self._run()
            self.highs.setOptionValue("solver", "choose")
            info = self.highs.getInfo()
            if status != highspy.HighsModelStatus.kOptimal:
                if (info.primal_solution_status != highspy.kSolutionStatusFeasible
                        or info.dual_solution_status == highspy.kSolutionStatusNone):
                    raise RuntimeError(
                        "The restricted master LP failed with the simplex and interior-"
                        f"point methods: {self.highs.modelStatusToString(status)}")
                _warn_inexact_lp(self.name, first_failure)
        solution = self.highs.getSolution()
        rows = np.searchsorted(base_ids, self.rows)
        columns = np.searchsorted(triplet_ids, self.columns)
        x = np.empty(len(triplet_ids) + 1)
        x[columns] = np.asarray(solution.col_value)[1:]
        x[-1] = solution.col_value[0]
        row_duals = np.empty(len(base_ids))
        row_duals[rows] = np.asarray(solution.row_dual)[1:]
        column_duals = np.empty(len(triplet_ids))
        column_duals[columns] = np.asarray(solution.col_dual)[1:]
        pi, w, theta, xi = _primal_from_duals(x, row_duals, column_duals, self.C)
        return pi, w, theta, float(solution.row_dual[0]), xi

    def _run(self):
        self.highs.run()
        return self.highs.getModelStatus()

    def _sync(self, base_ids, triplet_ids, gains):
        gone = np.flatnonzero(~np.isin(self.rows, base_ids))
        if len(gone):
            self.highs.deleteRows(len(gone), (gone + 1).astype(np.int32))
            self.rows = np.delete(self.rows, gone)
        gone = np.flatnonzero(~np.isin(self.columns, triplet_ids))
        if len(gone):
            self.highs.deleteCols(len(gone), (gone + 1).astype(np.int32))
            self.columns = np.delete(self.columns, gone)
        new = np.flatnonzero(~np.isin(triplet_ids, self.columns))
        if len(new):
            # Column-wise: 1 in row 0, then the gains on the bases already there.
            block = gains[np.searchsorted(base_ids, self.rows)][:, new]
            values = np.vstack([np.ones(len(new)), block]).T.ravel()
            n_entries = len(self.rows) + 1
            self.highs.addCols(
                len(new), np.zeros(len(new)), np.zeros(len(new)), np.full(len(new), self.C),
                values.size, (n_entries * np.arange(len(new))).astype(np.int32),
                np.tile(np.arange(n_entries, dtype=np.int32), len(new)), values)
            self.columns = np.concatenate([self.columns, triplet_ids[new]])
        new = np.flatnonzero(~np.isin(base_ids, self.rows))
        if len(new):
            # Row-wise: −1 on π, then the gains on the columns in their model order.
            block = gains[new][:, np.searchsorted(triplet_ids, self.columns)]
            values = np.hstack([-np.ones((len(new), 1)), block]).ravel()
            n_entries = len(self.columns) + 1
            self.highs.addRows(
                len(new), np.full(len(new), -highspy.kHighsInf), np.zeros(len(new)),
                values.size, (n_entries * np.arange(len(new))).astype(np.int32),
                np.tile(np.arange(n_entries, dtype=np.int32), len(new)), values)
            self.rows = np.concatenate([self.rows, base_ids[new]])


def _warn_inexact_lp(name, failure):
    warnings.warn(
        f"{name}: HiGHS did not prove the restricted master LP optimal ({failure}); "
        "continuing from the feasible point it returned.",
        ConvergenceWarning,
    )
