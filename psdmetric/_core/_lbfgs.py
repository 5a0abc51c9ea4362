"""L-BFGS whose curvature memory outlives a round of the driver.

Learners that minimise a smooth loss round by round (LMNN over the impostors found at
each round's start, MLKR) keep their curvature pairs across rounds: the loss of one
round is the next one's near the point where it stopped. Keeping them (scipy's
L-BFGS-B starts afresh on every call) saves the first, steepest-descent-like
iterations of each round. Each step is a strong Wolfe step along the L-BFGS direction
(scipy's line search), else Armijo backtracking along the negative gradient: a step is
accepted only when it lowers the loss.
"""

import warnings
from collections import deque

import numpy as np
from scipy.optimize import line_search

# Curvature pairs kept (scipy's L-BFGS-B default).
_MEMORY = 10
# Armijo's sufficient-decrease constant and the halvings before a step is given up.
_ARMIJO = 1e-4
_MAX_BACKTRACKS = 40


class LBFGS:
    """Limited-memory BFGS steps on a matrix variable, with a memory that persists."""

    def __init__(self):
        self.pairs = deque(maxlen=_MEMORY)

    def snapshot(self):
        return list(self.pairs)

    def restore(self, pairs):
        self.pairs = deque(pairs, maxlen=_MEMORY)

    def direction(self, gradient):
        """``−H g`` by the two-loop recursion (steepest descent without memory)."""
        q, alphas = gradient.copy(), []
        for s, y, rho in reversed(self.pairs):
            alpha = rho * np.vdot(s, q)
            q -= alpha * y
            alphas.append(alpha)
        if self.pairs:
            s, y, rho = self.pairs[-1]
            q *= 1.0 / (rho * np.vdot(y, y))
        for (s, y, rho), alpha in zip(self.pairs, reversed(alphas)):
            q += (alpha - rho * np.vdot(y, q)) * s
        return -q

    def run(self, objective, L, evaluation, n_steps):
        """Up to ``n_steps`` steps from ``L``; returns ``L, evaluation, stalled``.

        ``evaluation`` is ``objective.value_and_gradient(L)``: ``(value, gradient,
        ...)``. ``stalled`` is true when no step along the steepest descent lowered the
        loss: ``L`` is a (nonsmooth) stationary point to machine precision.
        """
        for _ in range(n_steps):
            step = self._line_search(objective, L, evaluation[0], evaluation[1])
            if step is None:
                return L, evaluation, True
            L_new, new = step
            s, y = L_new - L, new[1] - evaluation[1]
            curvature = np.vdot(s, y)
            if curvature > 1e-10 * np.sqrt(np.vdot(s, s) * np.vdot(y, y)):
                self.pairs.append((s, y, 1.0 / curvature))
            L, evaluation = L_new, new
        return L, evaluation, False

    def _line_search(self, objective, L, value, gradient):
        """A strong Wolfe step along the L-BFGS direction, else an Armijo step along
        −gradient; or None."""
        squared_norm = np.vdot(gradient, gradient)
        if squared_norm == 0.0:  # a stationary point: no step descends
            return None
        direction = self.direction(gradient)
        if np.vdot(gradient, direction) < 0.0:
            step = _wolfe_step(objective, L, value, gradient, direction,
                               1.0 if self.pairs else 1.0 / np.sqrt(squared_norm))
            if step is not None:
                return step
        self.pairs.clear()
        slope, t = -squared_norm, 1.0 / np.sqrt(squared_norm)
        for _ in range(_MAX_BACKTRACKS):
            L_new = L - t * gradient
            new = objective.value_and_gradient(L_new)
            if new[0] <= value + _ARMIJO * t * slope:
                return L_new, new
            t *= 0.5
        return None


def _wolfe_step(objective, L, value, gradient, direction, initial):
    """scipy's strong Wolfe line search (Moré–Thuente-like), on flattened arrays."""
    cache = {}

    def evaluate(flat):
        key = flat.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = objective.value_and_gradient(flat.reshape(L.shape))
        return cache[key]

    direction = initial * direction
    with warnings.catch_warnings():
        # A failed search warns (scipy's LineSearchWarning); the caller falls back.
        warnings.simplefilter("ignore", RuntimeWarning)
        t = line_search(lambda x: evaluate(x)[0], lambda x: evaluate(x)[1].ravel(),
                        L.ravel(), direction.ravel(), gradient.ravel(), value,
                        c1=_ARMIJO, maxiter=20)[0]
    if t is None:
        return None
    L_new = L + t * direction
    return L_new, evaluate(L_new.ravel())
