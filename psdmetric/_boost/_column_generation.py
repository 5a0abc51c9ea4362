"""Column generation of PSDBoost: the restricted master LP and the pricing, as rounds."""

import numpy as np

from .._core import Round
from ._master_lp import RestrictedMaster
from ._pricing import extreme_points

# Iterations over which the gap's closing pace is measured (tailing-off stop).
_STALL_WINDOW = 10
# Within this many thresholds, a gap closing too slowly also ends the fit.
_NEAR_GAP = 3.0


class ColumnGeneration:
    """Algorithm 1 of Shen, Welsh & Wang (2008), stabilised, as rounds for the driver.

    One round (iteration) solves the restricted master LP, stops if the gap to the
    best upper bound λmax(H) is closed (λmax(H) ≤ π + ε′), and otherwise prices new
    bases and adds them. The object is also the round's checkpoint: every LP solution
    is kept with its iteration as one tuple, so Ctrl-C keeps the last LP solved, and
    a pricing the interrupt cut short leaves the best bound so far, still valid.
    """

    columns = (("bases", ">14d"), ("triplets", ">14d"), ("dual obj. π", ">14.6e"),
               ("λmax(H)", ">14.6e"), ("rel. gap", ">14.3e"))

    def __init__(self, differences, C, *, rank, shrinkage, smoothing, bases_per_iter, tol,
                 rng, name):
        n_triplets = len(differences) // 2
        self.differences, self.rng = differences, rng
        self.rank, self.bases_per_iter, self.smoothing = rank, bases_per_iter, smoothing
        self.shrinkage = shrinkage
        # s tr(A_r) / D: the margin of triplet r under the Euclidean share s I / D.
        lengths = np.einsum("ij,ij->i", differences, differences)
        self.euclidean_gains = (shrinkage / differences.shape[1]
                                * (lengths[:n_triplets] - lengths[n_triplets:]))
        self.tol = tol
        self.master = RestrictedMaster(n_triplets, C, name)
        self.center = np.full(n_triplets, 1.0 / n_triplets)
        self.best, bases, gains = self.base_learner(self.center)
        self.master.add(bases, gains)
        self.solved, self.duals, self.upper_bounds = None, [], []

    def base_learner(self, w):
        """The base learner's bound, bases and gains at ``w``, for ``X = s I / D + (1 − s) Y``."""
        bound, bases, gains = extreme_points(self.differences, w, self.rank,
                                             self.bases_per_iter, self.rng)
        keep = 1.0 - self.shrinkage
        return (keep * bound + self.euclidean_gains @ w, bases,
                keep * gains + self.euclidean_gains)

    def price(self, w, pi, margin):
        """New bases whose dual constraint cuts off ``w`` by more than ``margin`` (B1).

        With ``smoothing > 0`` the eigenvectors are first taken at the smoothed weights
        ``smoothing · center + (1 − smoothing) · w`` (Wentges' dual smoothing against the
        tailing-off of column generation), and at ``w`` itself when none of them cuts.
        Every priced point gives an upper bound on the SDP optimum; the best one becomes
        the stability ``center``.
        """
        points = [w] if self.smoothing == 0 else [
            self.smoothing * self.center + (1.0 - self.smoothing) * w, w]
        for point in points:
            bound, bases, gains = self.base_learner(point)
            if bound < self.best:
                self.best, self.center = bound, point
            cuts = gains @ w > pi + margin
            if cuts.any():
                return bases[cuts], gains[cuts]
        return None, None

    def one_round(self):
        iteration = len(self.duals) + 1
        self.solved = iteration, self.master.solve()
        pi, w = self.solved[1][:2]
        if iteration == 1:
            self.first_gap = self.best - pi
        threshold = self.tol * max(abs(pi), abs(self.best), self.first_gap)
        gap = self.best - pi
        # Tailing-off: at the pace of the last _STALL_WINDOW iterations, either π would
        # need more than _STALL_WINDOW / tol of them to close the gap, or, with the gap
        # within _NEAR_GAP thresholds, closing it to one would take more than
        # _STALL_WINDOW of them.
        stalled = len(self.duals) >= _STALL_WINDOW and (
            pi - self.duals[-_STALL_WINDOW] <= self.tol * gap
            or (gap <= _NEAR_GAP * threshold
                and self.upper_bounds[-_STALL_WINDOW] - self.duals[-_STALL_WINDOW] - gap
                < gap - threshold))
        bases = None
        if gap > threshold and not stalled:
            bases, gains = self.price(w, pi, threshold)
        self.duals.append(pi)
        self.upper_bounds.append(self.best)
        row = (len(self.master.gains), len(self.master.working), pi, self.best,
               _relative(self.best - pi, pi, self.best, self.first_gap))
        if bases is None:
            return Round(row, converged=True)
        self.master.prune()
        self.master.add(bases, gains)
        return Round(row)

    def save(self, n_iter):
        """Nothing to copy: each solved LP is kept whole as it comes."""

    def restore(self):
        """Keep the last LP solved; return its iteration (propagate if there is none)."""
        if self.solved is None:
            raise KeyboardInterrupt
        n_iter, solution = self.solved
        self.duals += [solution[0]] * (n_iter - len(self.duals))
        self.upper_bounds += [self.best] * (n_iter - len(self.upper_bounds))
        return n_iter


def _relative(gap, pi, best, first_gap):
    scale = max(abs(pi), abs(best), first_gap)
    return gap / scale if scale > 0 else 0.0
