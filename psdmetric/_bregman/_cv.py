"""Cross-validated LogDet and VonNeumann: γ and the pair scheme chosen by held-out k-NN.

Like scikit-learn's ``RidgeCV`` and ``LogisticRegressionCV``: every candidate (a slack
weight γ and a way of drawing pairs from the labels) is scored on held-out folds by a
k-NN classifier in the learned space (its mean predicted probability of the true
class), and the learner is then refitted on all the data with the best candidate. The
pairs and their bounds are drawn once per fold and scheme and shared by every γ, exactly
as the plain learner would draw them, so each inner fit solves the problem of
``LogDet(gamma=γ, n_neighbors=k, random_state=seed)`` on that fold. The γ of a fold are
fitted in increasing order, each warm-started from the duals of the last.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.model_selection import check_cv
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import validate_data

from .._core import MahalanobisMixin, PairConstraints, threadpool_controller
from ._base import prior_eigenpairs
from ._logdet import LogDet
from ._von_neumann import VonNeumann


def _check_grid(values, name, kind):
    """A non-empty 1-D grid: positive γ values (sorted), or neighbour counts / None."""
    values = list(np.ravel(np.asarray(values, dtype=object)))
    if not values:
        raise ValueError(f"{name} must hold at least one value.")
    if kind == "gamma":
        if not all(isinstance(v, Real) and not isinstance(v, bool) and v > 0 for v in values):
            raise ValueError(f"{name} must hold positive numbers (np.inf allowed); got {values}.")
        return np.unique(np.asarray(values, dtype=np.float64))
    if not all(v is None or (isinstance(v, Integral) and not isinstance(v, bool) and v >= 1)
               for v in values):
        raise ValueError(
            f"{name} must hold None (random pairs) or positive integers (neighbour "
            f"pairs); got {values}."
        )
    return list(dict.fromkeys(None if v is None else int(v) for v in values))


def _neighbour_pairs_possible(y):
    """Whether neighbour pairs can be drawn: two classes, one with two samples or more.

    ``pairs_from_labels`` pairs a sample of a small class with the others of its
    class (with none when it is alone), so that is all the learner itself needs.
    """
    counts = np.unique(y, return_counts=True)[1]
    return len(counts) >= 2 and counts.max() >= 2


def _true_class_probability(knn, Z_test, y_test):
    """Mean share of each test sample's k nearest training samples that hold its label.

    This is the k-NN classifier's predicted probability of the true class, averaged: on
    a held-out fold of a few dozen samples it moves by 1/(k·n) where the accuracy moves
    by 1/n, so candidates that differ by less than one test sample are still ranked.
    """
    proba = knn.predict_proba(Z_test)
    index = np.searchsorted(knn.classes_, y_test).clip(max=len(knn.classes_) - 1)
    seen = knn.classes_[index] == y_test
    return float(np.mean(np.where(seen, proba[np.arange(len(y_test)), index], 0.0)))


def _score_path(learner, X, y, train, test, gammas, n_neighbors, n_constraints,
                knn_neighbors, seed):
    """Held-out k-NN score and fit time of ``learner`` for every γ on one fold and scheme.

    Pairs and bounds come from a ``RandomState(seed)`` in the order the learner's own
    ``fit(X, y)`` draws them (pairs, then bounds); every γ then starts its cycles from
    the same stream position, as the plain fit on the fold would (warm-started from the
    last γ's duals).
    """
    X_train, y_train = X[train], y[train]
    if n_neighbors is not None and not _neighbour_pairs_possible(y_train):
        return None
    # Paths run in parallel (n_jobs): threads inside the small k-NN queries and products
    # only contend (OpenMP and BLAS alike).
    # Ctrl-C stops the search: an inner fit must not keep a partial metric and go on.
    with threadpool_controller().limit(limits=1), warnings.catch_warnings():
        warnings.filterwarnings("error", ".*training interrupted by the user",
                                ConvergenceWarning)
        rng = np.random.RandomState(seed)
        # The learner's own label draw and bounds: each fit solves its plain fit's problem.
        learner = clone(learner).set_params(n_neighbors=n_neighbors,
                                            n_constraints=n_constraints)
        pairs = learner._constraints_from_labels(X_train, y_train, rng)
        eigenvectors, eigenvalues = prior_eigenpairs(
            X_train, learner.prior, learner.n_components)
        initial = np.sqrt(eigenvalues)[:, None] * eigenvectors.T
        targets, _ = learner._targets(X_train @ initial.T, pairs, rng)
        constraints = PairConstraints(pairs.pairs, pairs.labels, targets)
        stream = rng.get_state()
        scores, fit_times = [], []
        # γ increases (sorted grid): each fit starts from the last one's duals (the learner
        # falls back to its prior where they do not give a valid start).
        fitted = clone(learner).set_params(warm_start=True)
        for gamma in gammas:
            rng.set_state(stream)
            start = time.perf_counter()
            fitted.set_params(gamma=gamma, random_state=rng).fit(X_train, constraints=constraints)
            fit_times.append(time.perf_counter() - start)
            # X is validated once in fit: ``transform`` would validate it again per γ.
            knn = KNeighborsClassifier(knn_neighbors).fit(
                X_train @ fitted.components_.T, y_train)
            scores.append(_true_class_probability(knn, X[test] @ fitted.components_.T, y[test]))
    return np.array(scores), np.array(fit_times)


class _PairLearnerCV(MahalanobisMixin):
    """Shared fit of LogDetCV and VonNeumannCV; subclasses set ``_learner``."""

    # Class labels only: the k-NN score needs them, not pairs.
    _constraint_kind = "labels"
    _learner = None

    _parameter_constraints: dict = {
        "gammas": ["array-like"],
        "n_neighbors_grid": ["array-like"],
        "cv": ["cv_object"],
        "knn_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        gammas=(0.01, 0.1, 1.0),
        n_neighbors_grid=(None, 5),
        *,
        cv=None,
        knn_neighbors=5,
        n_components=None,
        prior="identity",
        n_constraints=None,
        tol=None,
        max_iter=1000,
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.gammas = gammas
        self.n_neighbors_grid = n_neighbors_grid
        self.cv = cv
        self.knn_neighbors = knn_neighbors
        self.n_components = n_components
        self.prior = prior
        self.n_constraints = n_constraints
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Score every (γ, pair scheme) by k-NN cross-validation, refit the best on all data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.

        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, ensure_min_samples=2)
        check_classification_targets(y)
        gammas = _check_grid(self.gammas, "gammas", "gamma")
        schemes = _check_grid(self.n_neighbors_grid, "n_neighbors_grid", "scheme")
        folds = list(check_cv(self.cv, y, classifier=True).split(X, y))
        smallest = min(len(train) for train, _ in folds)
        if self.knn_neighbors > smallest:
            raise ValueError(
                f"knn_neighbors={self.knn_neighbors} exceeds the {smallest} samples of the "
                "smallest training fold; lower knn_neighbors or the number of folds (cv).")
        seed = self.random_state if isinstance(self.random_state, Integral) else (
            check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        tol = self._learner().tol if self.tol is None else self.tol
        learner = self._learner(
            n_components=self.n_components, prior=self.prior, tol=tol,
            max_iter=self.max_iter)
        try:
            paths = Parallel(n_jobs=self.n_jobs)(
                delayed(_score_path)(learner, X, y, train, test, gammas, n_neighbors,
                                     self.n_constraints, self.knn_neighbors, seed)
                for n_neighbors in schemes for train, test in folds
            )
        except ConvergenceWarning as interrupted:
            raise KeyboardInterrupt from interrupted
        self.cv_results_ = self._results(paths, gammas, schemes, len(folds))
        best = int(np.nanargmax(self.cv_results_["mean_test_score"]))
        self.best_params_ = self.cv_results_["params"][best]
        self.best_score_ = float(self.cv_results_["mean_test_score"][best])
        self.gammas_ = gammas
        refit = self._learner(
            n_components=self.n_components, prior=self.prior,
            n_constraints=self.n_constraints if self.best_params_["n_neighbors"] is None else None,
            tol=tol, max_iter=self.max_iter, verbose=self.verbose, random_state=seed,
            **self.best_params_,
        ).fit(X, y)
        for name, value in vars(refit).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(self, name, value)
        return self

    def _results(self, paths, gammas, schemes, n_folds):
        """``cv_results_`` in the layout of ``GridSearchCV``: one entry per candidate."""
        n_candidates = len(schemes) * len(gammas)
        scores = np.full((n_folds, n_candidates), np.nan)
        fit_times = np.full((n_folds, n_candidates), np.nan)
        for index, path in enumerate(paths):
            scheme, fold = divmod(index, n_folds)
            if path is None:
                continue
            columns = slice(scheme * len(gammas), (scheme + 1) * len(gammas))
            scores[fold, columns], fit_times[fold, columns] = path
        params = [{"gamma": float(gamma), "n_neighbors": n_neighbors}
                  for n_neighbors in schemes for gamma in gammas]
        left_out = sorted({p["n_neighbors"] for p, column in zip(params, scores.T)
                           if np.isnan(column).any()})
        if len(left_out) == len(schemes):
            raise ValueError(
                f"No pair scheme in n_neighbors_grid={list(schemes)} can be drawn on every "
                "training fold: neighbour pairs need two classes with two samples or more "
                "each in every training fold."
            )
        if left_out:
            warnings.warn(
                f"{type(self).__name__}: n_neighbors={left_out} left out, some training "
                "fold has a single class or no class with two samples.", FitFailedWarning)
        mean = scores.mean(axis=0)
        results = {
            "params": params,
            "param_gamma": np.array([p["gamma"] for p in params]),
            "param_n_neighbors": np.array([p["n_neighbors"] for p in params], dtype=object),
            **{f"split{fold}_test_score": scores[fold] for fold in range(n_folds)},
            "mean_test_score": mean,
            "std_test_score": scores.std(axis=0),
            "rank_test_score": _rank(mean),
            "mean_fit_time": fit_times.mean(axis=0),
        }
        if self.verbose:
            self._print_table(results)
        return results

    def _print_table(self, results):
        print(f"[{type(self).__name__}]")
        print(f"{'n_neighbors':>12} {'gamma':>10} {'mean score':>11} {'std':>8} "
              f"{'rank':>5} {'fit (s)':>8}")
        print("-" * 59)
        for index, params in enumerate(results["params"]):
            print(f"{str(params['n_neighbors']):>12} {params['gamma']:>10.3g} "
                  f"{results['mean_test_score'][index]:>11.4f} "
                  f"{results['std_test_score'][index]:>8.4f} "
                  f"{results['rank_test_score'][index]:>5d} "
                  f"{results['mean_fit_time'][index]:>8.3f}")


def _rank(mean):
    """Rank 1 for the best mean score, ties sharing the lowest rank, NaN ranked last."""
    order = np.where(np.isnan(mean), -np.inf, mean)
    return np.array([1 + np.sum(order > value) for value in order], dtype=np.int32)


_SHARED_DOC = """
    Parameters
    ----------
    gammas : array-like of float, default=(0.01, 0.1, 1.0)
        Slack weights γ to try (see the ``gamma`` of :class:`{learner}`), from the
        learner's default down: larger γ holds the pairs drawn from labels, which
        conflict, more tightly and costs more cycles. ``np.inf`` enforces the
        constraints exactly.

    n_neighbors_grid : array-like of {{None, int}}, default=(None, 5)
        Pair schemes to try, as the learner's ``n_neighbors``: ``None`` draws
        ``n_constraints`` random pairs, ``k`` joins each sample to its ``k`` nearest
        samples of its own class and of the other classes (fewer in a class of ``k``
        samples or fewer, see :func:`~psdmetric.pairs_from_labels`). The default ``k``
        is the default ``knn_neighbors``: the pairs are the neighbourhoods the scoring
        k-NN reads. A neighbour scheme that cannot be drawn on some training fold (a
        single class, or no class with two samples) is left out with a
        ``FitFailedWarning``.

    cv : int, cross-validation generator or iterable, default=None
        Folds for the inner cross-validation, as in scikit-learn: ``None`` is 5-fold
        stratified, an int the number of stratified folds.

    knn_neighbors : int, default=5
        Neighbours of the :class:`~sklearn.neighbors.KNeighborsClassifier` that scores
        each candidate in the learned space: the score of a held-out fold is the mean,
        over its samples, of the share of their ``knn_neighbors`` nearest training
        samples that hold their label (the classifier's predicted probability of the
        true class). Unlike the accuracy, which moves in steps of one test sample, it
        tells apart candidates whose neighbourhoods differ by less than that.

    n_components : int, default=None
        Rank of the learned metric, as in :class:`{learner}`.

    prior : {{"identity", "covariance"}} or ndarray, default="identity"
        Starting matrix ``M₀``, as in :class:`{learner}`.

    n_constraints : int, default=None
        Number of random pairs (scheme ``None``); ``None`` means ``40 * n_classes**2``.

    tol : float, default=None
        Stopping tolerance of every fit, as in :class:`{learner}`; ``None`` takes
        :class:`{learner}`'s default.

    max_iter : int, default=1000
        Maximum number of cycles of every fit.

    n_jobs : int, default=None
        Number of (fold, scheme) paths fitted in parallel by joblib; ``None`` means 1
        unless in a :obj:`joblib.parallel_backend` context, -1 all processors.

    verbose : int, default=0
        Print the table of candidates and the refit's table of cycles.

    random_state : int, RandomState instance or None, default=None
        Seeds the pairs, the bounds and the cycle orders. An int is passed as is to
        every inner fit and to the refit, so each inner fit solves
        ``{learner}(gamma=γ, n_neighbors=k, random_state=random_state)`` on its fold.

    Attributes
    ----------
    best_params_ : dict
        ``{{"gamma": γ, "n_neighbors": k}}`` of the candidate with the best mean score
        (the first in ``cv_results_`` order among ties).

    best_score_ : float
        Its mean held-out score (k-NN probability of the true class) over the folds.

    cv_results_ : dict of ndarray
        One entry per candidate, schemes in ``n_neighbors_grid`` order and within each
        γ ascending, laid out as :class:`~sklearn.model_selection.GridSearchCV`'s:
        ``params``, ``param_gamma``, ``param_n_neighbors``, ``split{{i}}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` and
        ``mean_fit_time`` (seconds per inner fit). A left-out scheme scores NaN.

    gammas_ : ndarray of shape (n_gammas,)
        The γ grid, sorted.

    components_ : ndarray of shape (n_components, n_features)
        The transform ``L`` of the refit on all data with ``best_params_``,
        ``M = LᵀL``.
{extra_attributes}
    bounds_ : ndarray of shape (2,)
        The bounds ``(u, l)`` of the refit.

    constraints_ : PairConstraints
        The pairs the refit used.

    dual_coef_ : ndarray of shape (n_constraints,)
        Dual variables of the refit.

    n_iter_ : int
        Number of cycles of the refit.

    n_features_in_ : int
        Number of features seen during fit.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.
"""


class LogDetCV(_PairLearnerCV):
    __doc__ = """LogDet metric learning with γ and the pair scheme chosen by cross-validation.

    Scores every (γ, pair scheme) candidate by a k-NN classifier's held-out probability
    of the true class in the space :class:`LogDet` learns on each training fold, then
    refits :class:`LogDet` on all the data with the best candidate. The pairs and bounds
    of a fold and scheme are drawn once and shared by all γ. The learner is that of
    Kulis, Sustik & Dhillon (2009), §5.1 and §6.2.1 (ITML with slack).

    Read more in the :ref:`User Guide <cross_validation>`.
""" + _SHARED_DOC.format(learner="LogDet", extra_attributes="") + """
    See Also
    --------
    LogDet : The learner with fixed ``gamma`` and ``n_neighbors``.
    VonNeumannCV : The same search for the von Neumann learner.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from psdmetric import LogDetCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = LogDetCV(gammas=[0.1, 1.0], n_neighbors_grid=[None, 3], random_state=0)
    >>> search.fit(X, y).best_params_.keys()
    dict_keys(['gamma', 'n_neighbors'])
    >>> search.cv_results_["mean_test_score"].shape
    (4,)
    >>> model = make_pipeline(search, KNeighborsClassifier(5))
    >>> model.fit(X, y).score(X, y) > 0.95
    True
    """

    _learner = LogDet


class VonNeumannCV(_PairLearnerCV):
    __doc__ = """von Neumann metric learning with γ and the pair scheme chosen by cross-validation.

    Scores every (γ, pair scheme) candidate by a k-NN classifier's held-out probability
    of the true class in the space :class:`VonNeumann` learns on each training fold, then
    refits :class:`VonNeumann` on all the data with the best candidate. The pairs and
    bounds of a fold and scheme are drawn once and shared by all γ. The learner is that
    of Kulis, Sustik & Dhillon (2009), §5.2 and §6.2.1.

    Read more in the :ref:`User Guide <cross_validation>`.
""" + _SHARED_DOC.format(learner="VonNeumann", extra_attributes="""
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of the refit's ``M`` on the range of the prior, descending.

    eigenvectors_ : ndarray of shape (n_features, n_components)
        Orthonormal eigenvectors of the refit's ``M`` in the input space.
""") + """
    See Also
    --------
    VonNeumann : The learner with fixed ``gamma`` and ``n_neighbors``.
    LogDetCV : The same search for the LogDet learner.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from psdmetric import VonNeumannCV
    >>> X, y = load_iris(return_X_y=True)
    >>> search = VonNeumannCV(gammas=[0.1, 1.0], n_neighbors_grid=[3], random_state=0)
    >>> search.fit(X, y).best_params_["n_neighbors"]
    3
    >>> search.transform(X).shape
    (150, 4)
    """

    _learner = VonNeumann
