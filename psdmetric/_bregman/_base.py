"""The pair learners solved by Bregman projections: LogDet, VonNeumann, DefiniteBoost.

They share their parameters (the prior, the bounds, the pairs drawn from labels, the
stopping rule), the set-up of the prior ``M₀`` and the per-pair bounds ξ₀; each
learner supplies its divergence's projections.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from scipy import linalg, sparse
from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core import (
    MahalanobisMixin,
    PairConstraints,
    check_bounds,
    learned_dimension,
    one_blas_thread,
    principal_axes,
    squared_distance_bounds,
)


def resolve_components(n_components, prior, n_features):
    """``n_components`` as an int or None: ``"auto"`` caps the identity prior's rank.

    ``"auto"`` keeps the prior's rank up to ``AUTO_COMPONENTS`` features, and above it
    the top ``AUTO_COMPONENTS`` principal directions of the identity prior; a covariance
    or explicit prior keeps its rank (in kernel mode it is the kernel's).
    """
    if not (isinstance(n_components, str) and n_components == "auto"):
        return n_components
    identity = isinstance(prior, str) and prior == "identity"
    return learned_dimension("auto", n_features) if identity else None


class _BasePairBregman(MahalanobisMixin):
    """Base class of the pair learners: shared parameters, ``fit``, prior and bounds.

    ``fit`` validates the input and draws pairs from labels, then calls the learner's
    ``_fit(X, constraints, rng)``.

    Subclasses take a subset of these parameters, removing the others from a copy of
    ``_parameter_constraints`` (as scikit-learn's ``Lasso`` does with ``ElasticNet``'s).
    """

    _constraint_kind = "pairs"

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "gamma": [Interval(Real, 0, None, closed="right")],
        "bounds": ["array-like", None],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, constraints=None):
        """Fit the metric from class labels or from explicit pair constraints.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (in kernel mode, the rows of a kernel factor).

        y : array-like of shape (n_samples,), default=None
            Class labels; pairs are drawn from them. Leave ``None`` when passing
            ``constraints``.

        constraints : PairConstraints, default=None
            Explicit similar / dissimilar pairs of rows of ``X``, optionally with
            their own bounds.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        rng = check_random_state(self.random_state)
        X, constraints = self._validate_fit(X, y, constraints, rng)
        with warnings.catch_warnings(record=True) as caught, one_blas_thread():
            warnings.simplefilter("always")
            self._fit(X, constraints, rng)
        for caught_warning in caught:
            warnings.warn_explicit(caught_warning.message, caught_warning.category,
                                   caught_warning.filename, caught_warning.lineno)
        # After max_iter, an interrupt or a proof of infeasibility the user was told why.
        if np.isinf(self.gamma) and not any(issubclass(w.category, ConvergenceWarning)
                                            for w in caught):
            self._warn_unmet_bounds(X, constraints)
        self.constraints_ = constraints
        return self

    def _warn_unmet_bounds(self, X, constraints):
        """ConvergenceWarning when ``gamma=inf`` ends with a bound missed by over 5%.

        Exact constraints that cannot all hold (infeasible) leave the cycles at a
        compromise; the user asked for the bounds, so say which one is missed.
        """
        if constraints.bounds is not None:
            bounds = constraints.bounds
        else:
            bounds = np.where(constraints.labels == 1, self.bounds_[0], self.bounds_[1])
        difference = (X[constraints.pairs[:, 0]] - X[constraints.pairs[:, 1]]) @ self.components_.T
        squared = np.einsum("ij,ij->i", difference, difference)
        miss = constraints.labels * (squared - bounds) / bounds
        unmet = np.flatnonzero(miss > 0.05)
        if len(unmet) == 0:
            return
        worst = unmet[np.argmax(miss[unmet])]
        first, second = constraints.pairs[worst]
        kind, side = ("similar", ">") if constraints.labels[worst] == 1 else ("dissimilar", "<")
        warnings.warn(
            f"{type(self).__name__}: gamma=inf asks every bound to hold exactly, but "
            f"{len(unmet)} of {len(bounds)} pairs miss theirs by more than 5% (worst: the "
            f"{kind} pair of rows ({first}, {second}), squared distance {squared[worst]:.4g} "
            f"{side} bound {bounds[worst]:.4g}): the constraints are infeasible. Use a finite "
            "gamma to let the bounds move, or loosen the bounds.",
            ConvergenceWarning,
        )

    def _targets(self, factor, constraints, rng):
        """Per-pair bounds ξ₀ and the (u, l) they come from.

        ``factor`` holds the samples under the prior (its squared row distances are
        those of ``M₀``), for the default percentile bounds.
        """
        if constraints.bounds is not None:
            return constraints.bounds.copy(), np.full(2, np.nan)
        if self.bounds is not None:
            bounds = check_bounds(self.bounds)
        else:
            bounds = squared_distance_bounds(factor, random_state=rng)
        return np.where(constraints.labels == 1, bounds[0], bounds[1]), bounds

    def _bounded_pairs(self, X, y, rng):
        """Pairs drawn from labels with their bounds ξ₀, as ``fit(X, y)`` draws them.

        The CV learners fit every candidate on these, so each solves the plain fit's
        problem; the draw order (pairs, then bounds) is ``fit``'s.
        """
        pairs = self._constraints_from_labels(X, y, rng)
        initial = prior_root(X, self.prior, self.n_components)
        targets, _ = self._targets(X @ initial.T, pairs, rng)
        return PairConstraints(pairs.pairs, pairs.labels, targets)

    def _warm_duals(self, constraints):
        """The last fit's duals when ``warm_start`` is set and it had these pairs, else None."""
        last = getattr(self, "constraints_", None)
        if not (self.warm_start and last is not None
                and np.array_equal(last.pairs, constraints.pairs)
                and np.array_equal(last.labels, constraints.labels)):
            return None
        return self.dual_coef_.copy()


def weighted_outer_sum(rows, local_pairs, weights):
    """``Σᵢ wᵢ zᵢzᵢᵀ``, ``zᵢ`` the difference of pair i's two rows of ``rows``.

    Computed as ``Rᵀ L R``, L the Laplacian of the pairs weighted by w: no m×r array.
    """
    first, second = local_pairs.T
    laplacian = sparse.coo_matrix(
        (np.concatenate([weights, weights, -weights, -weights]),
         (np.concatenate([first, second, first, second]),
          np.concatenate([first, second, second, first]))),
        shape=(len(rows),) * 2).tocsr()
    return rows.T @ (laplacian @ rows)


def prior_eigenpairs(X, prior, n_components):
    """Orthonormal ``U`` (d×r) and positive ``s`` (r,) with prior ``M₀ = U diag(s) Uᵀ``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training data (for the ``"covariance"`` prior and for PCA directions).
    prior : {"identity", "covariance"} or ndarray of shape (n_features, n_features)
        ``"identity"``: the Euclidean metric, restricted to the top ``n_components``
        principal directions of X when ``n_components`` is set. ``"covariance"``: the
        inverse covariance of X (pseudo-inverse if singular). An array: a symmetric
        PSD matrix. A rank-deficient prior (e.g. the covariance of collinear
        features) gives fewer output columns than asked for, with a warning.
    n_components : int or None
        Keep the ``n_components`` leading directions (largest variance of X for the
        identity prior, largest prior eigenvalues otherwise).

    Returns
    -------
    U : ndarray of shape (n_features, r)
    s : ndarray of shape (r,)
    """
    n_features = X.shape[1]
    if n_components is not None and n_components > n_features:
        raise ValueError(
            f"n_components={n_components} cannot exceed the number of features "
            f"({n_features})."
        )
    if isinstance(prior, str) and prior == "identity":
        if n_components is None or n_components == n_features:
            return np.eye(n_features), np.ones(n_features)
        return principal_axes(X, n_components), np.ones(n_components)
    if isinstance(prior, str) and prior == "covariance":
        covariance = np.atleast_2d(np.cov(X, rowvar=False))
        eigenvalues, eigenvectors = linalg.eigh(covariance)
        scale = eigenvalues.max() if eigenvalues.max() > 0 else 1.0
        keep = eigenvalues > n_features * np.finfo(float).eps * scale
        # The inverse covariance has the largest weight along the smallest variances.
        eigenvalues, eigenvectors = 1.0 / eigenvalues[keep], eigenvectors[:, keep]
    else:
        eigenvalues, eigenvectors = linalg.eigh(check_prior(prior, n_features))
        scale = max(eigenvalues.max(), 0.0)
        keep = eigenvalues > n_features * np.finfo(float).eps * scale
        eigenvalues, eigenvectors = eigenvalues[keep], eigenvectors[:, keep]
    if len(eigenvalues) == 0:
        raise ValueError("The prior has no positive eigenvalue: it is the zero matrix.")
    if len(eigenvalues) < (n_features if n_components is None else n_components):
        warnings.warn(
            f"The prior has rank {len(eigenvalues)} < {n_components or n_features} "
            f"({'features' if n_components is None else 'n_components'}): the learned "
            f"metric keeps the prior's range, so transform returns {len(eigenvalues)} "
            f"columns. Pass n_components={len(eigenvalues)} to make this explicit.",
            UserWarning,
        )
    order = np.argsort(eigenvalues)[::-1][:n_components]
    return eigenvectors[:, order], eigenvalues[order]


def prior_root(X, prior, n_components):
    """``L₀`` with ``M₀ = L₀ᵀL₀``: the rows of ``X @ L₀.T`` are the samples under the prior."""
    eigenvectors, eigenvalues = prior_eigenpairs(X, prior, n_components)
    return np.sqrt(eigenvalues)[:, None] * eigenvectors.T


def pair_difference_basis(factor, pairs):
    """Orthonormal basis ``Q`` (r×k) of the span of the pairs' row differences, or None.

    Every projection of LogDet changes ``B Bᵀ`` only along the pairs' differences
    ``zᵢ = F[i] − F[j]``, so it stays ``I + Q S Qᵀ``: the cycles can run on ``F Q``
    (k columns, projections O(k²)) and give the same matrix. None when the differences
    span all r columns (or none), where there is nothing to save.
    """
    rows = factor[np.unique(pairs)]
    # Differences from the mean row span the same space as all pairwise differences.
    singular, directions = linalg.svd(rows - rows.mean(axis=0), full_matrices=False,
                                      check_finite=False)[1:]
    tolerance = max(rows.shape) * np.finfo(float).eps * singular[0] if len(singular) else 0.0
    rank = int(np.sum(singular > tolerance))
    if rank == 0 or rank == factor.shape[1]:
        return None
    return np.ascontiguousarray(directions[:rank].T)


def check_prior(prior, n_features):
    """Validate a user prior: finite, symmetric, PSD, shape (n_features, n_features)."""
    try:
        prior = check_array(prior, input_name="prior")
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"prior must be 'identity', 'covariance' or a matrix: {exc}") from exc
    if prior.shape != (n_features, n_features):
        raise ValueError(
            f"prior must have shape ({n_features}, {n_features}) to match X; "
            f"got {prior.shape}."
        )
    scale = max(np.abs(prior).max(), np.finfo(float).tiny)
    if not np.allclose(prior, prior.T, rtol=0, atol=1e-10 * scale):
        raise ValueError("prior must be a symmetric matrix.")
    prior = (prior + prior.T) / 2
    if linalg.eigvalsh(prior).min() < -1e-10 * scale:
        raise ValueError("prior must be positive semi-definite.")
    return prior


def ascending_prior(X, prior, n_components):
    """Prior eigenpairs ``U, s`` with s ascending (the order the eigen updates keep)."""
    eigenvectors, eigenvalues = prior_eigenpairs(X, prior, n_components)
    ascending = np.argsort(eigenvalues, kind="stable")
    return eigenvectors[:, ascending], eigenvalues[ascending]
