"""Jain et al., 2007, §5: Burg-entropy online regression vs squared Euclidean and relative entropy.

The paper's synthetic stream: a target u on the unit sphere, inputs x_t on the unit
sphere, outputs ``y_t = (u · x_t)(1 + ν Z_t)`` with Z uniform on [−½, ½] and noise level
ν ∈ {0, 0.1, 0.3}; N = 100 features, T = 10,000 rounds. Burg and relative entropy keep
positive weights, so u and x are drawn on the positive orthant of the sphere (the
paper does not say; with a target of mixed signs neither could follow it).

Three online algorithms from the same start ``w = 1/N``, one pass, squared loss:

- Burg gradient (Jain et al., 2007, Alg. 1): ``psdmetric.BurgRegressor`` through ``partial_fit``;
- squared Euclidean (gradient descent, Widrow–Hoff): ``w ← w − 2η(ŷ − y)x``;
- relative entropy (unnormalised exponentiated gradient, EGU):
  ``w ← w · exp(−2η(ŷ − y)x)``.

Each learning rate is tuned per method and noise level on three separate streams
(the grid is below) and the cumulative losses are reported on ten fresh streams.

Run ``python bench/bench_burg.py`` (about a minute); ``--quick`` runs fewer streams.
"""

import sys
import time

import numpy as np

from _harness import Case, main
from _render.burg import CHUNK, EXTRA_NOISE_LEVELS, N_ROUNDS, NOISE_LEVELS
from _render.burg import METHODS as METHOD_NAMES
from _reporting import mean_and_standard_error
from psdmetric import BurgRegressor

N_FEATURES = 100
ETA_GRID = tuple(10.0 ** np.arange(-2.0, 3.01, 0.5))


def positive_unit(rng, size):
    vectors = np.abs(rng.randn(*size))
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def stream(noise, seed, with_target=False):
    rng = np.random.RandomState(seed)
    u = positive_unit(rng, (N_FEATURES,))
    X = positive_unit(rng, (N_ROUNDS, N_FEATURES))
    y = (X @ u) * (1 + noise * rng.uniform(-0.5, 0.5, N_ROUNDS))
    return (X, y, u) if with_target else (X, y)


def burg(X, y, eta):
    model = BurgRegressor(eta=eta)
    curve = []
    for start in range(0, len(y), CHUNK):
        model.partial_fit(X[start:start + CHUNK], y[start:start + CHUNK])
        curve.append(model.cumulative_loss_)
    return np.array(curve)


def online_regression(X, y, update):
    """Cumulative loss every CHUNK rounds of ``w ← update(w, error, x)`` from w = 1/N."""
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    losses = np.empty(len(y))
    for t, (x, target) in enumerate(zip(X, y)):
        error = w @ x - target
        losses[t] = error**2
        w = update(w, error, x)
    return np.cumsum(losses)[CHUNK - 1::CHUNK]


def gradient_descent(X, y, eta):
    return online_regression(X, y, lambda w, error, x: w - 2 * eta * error * x)


def exponentiated_gradient(X, y, eta):
    return online_regression(X, y, lambda w, error, x: w * np.exp(-2 * eta * error * x))


METHODS = dict(zip(METHOD_NAMES, (burg, gradient_descent, exponentiated_gradient)))


def final_loss(method, X, y, eta):
    with np.errstate(over="ignore", invalid="ignore"):
        loss = METHODS[method](X, y, eta)[-1]
    return loss if np.isfinite(loss) else np.inf


def noise_level(noise, n_tune, n_eval):
    """Every method's tuned learning rate and cumulative losses at one noise level."""
    # The loss of the target u itself: the noise floor every method pays.
    floor = [np.sum((X @ u - y) ** 2)
             for X, y, u in (stream(noise, seed, True) for seed in range(n_eval))]
    entry = {"target_loss_mean": float(np.mean(floor))}
    for method in METHODS:
        start = time.perf_counter()
        tuning = [stream(noise, 1000 + seed) for seed in range(n_tune)]
        scores = [np.mean([final_loss(method, X, y, eta) for X, y in tuning])
                  for eta in ETA_GRID]
        eta = ETA_GRID[int(np.argmin(scores))]
        runs = np.array([METHODS[method](*stream(noise, seed), eta)
                         for seed in range(n_eval)])
        mean, error = mean_and_standard_error(runs[:, -1])
        entry[method] = {"eta": eta, "cumulative_loss_mean": mean,
                         "cumulative_loss_standard_error": error,
                         "cumulative_loss_runs": runs[:, -1],
                         "tuning_losses": dict(zip(map(str, ETA_GRID), scores)),
                         "seconds": time.perf_counter() - start,
                         "curve_mean": runs.mean(axis=0)}
        print(f"noise {noise:.0%}  {method:<24} eta={eta:<8.3g} cumulative loss "
              f"{mean:.3f} ± {error:.3f} (target's own {np.mean(floor):.3f})")
    return entry


CASES = [Case(str(noise), protocol=noise_level, params={"noise": noise, "n_tune": 3,
                                                        "n_eval": 10},
              quick={"n_tune": 1, "n_eval": 3}, into="noise")
         for noise in NOISE_LEVELS + EXTRA_NOISE_LEVELS]


def setup(args):
    n_tune, n_eval = (1, 3) if args.quick else (3, 10)
    return {"n_features": N_FEATURES, "n_rounds": N_ROUNDS, "eta_grid": list(ETA_GRID),
            "tuning_streams": n_tune, "evaluation_streams": n_eval, "noise": {}}


if __name__ == "__main__":
    sys.exit(main("burg", CASES, setup=setup))
