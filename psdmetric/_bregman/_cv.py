"""Cross-validated LogDet and VonNeumann: γ and the pair scheme chosen by held-out k-NN.

Like scikit-learn's ``RidgeCV`` and ``LogisticRegressionCV``: every candidate (a slack
weight γ and a way of drawing pairs from the labels) is scored on held-out folds by a
k-NN classifier in the learned space (its mean predicted probability of the true
class), and the learner is then refitted on all the data with the chosen candidate. The
pairs and their bounds are drawn once per fold and scheme and shared by every γ, exactly
as the plain learner would draw them, so each inner fit solves the problem of
``LogDet(gamma=γ, n_neighbors=k, random_state=seed)`` on that fold. The γ of a fold are
fitted in increasing order, each warm-started from the duals of the last.

The choice is conservative and stepwise: γ within the plain learner's pair scheme is
kept at its default unless another γ beats it by more than a margin (1.5 standard errors
of the paired score difference for LogDetCV, 1.0 for VonNeumannCV), and the other pair
schemes must then beat that choice by as much, since an inner cross-validation on a few
hundred samples ranks candidates that differ by less at random (``_cv_rule``). On large
sets one split is drawn and every inner fit may cost at most ``_WORK_BUDGET`` times the
default's cycles × pairs, so the search stays within a few plain fits.
"""

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context, clone
from sklearn.exceptions import ConvergenceWarning, FitFailedWarning
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedKFold, check_cv
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import validate_data

from .._core import (
    MahalanobisMixin,
    check_informative,
    check_scale,
    one_thread,
)
from ._cv_doc import SHARED_DOC
from ._cv_rule import MARGINS, rank_scores, stepwise_choice, true_class_probability
from ._base import prior_eigenpairs, resolve_components
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


def _score_path(learner, X, y, train, test, gammas, n_neighbors, n_constraints,
                knn_neighbors, seed, *, max_work=None, min_cycles=None, budget_from=None,
                report=None):
    """Per-sample held-out k-NN scores, fit times, work and cycles of ``learner`` per γ.

    Scores are a (γ × test sample) array, NaN for a γ not fitted. With ``max_work``, a
    fit may run at most that many cycles × pairs; one that needs them all is over budget
    and ends the path (larger γ cost more cycles); with ``min_cycles`` (those of the
    default scheme's first γ), a path whose budget affords fewer for its first γ is over
    budget before it starts (many classes' random pairs: user guide, "Cost"). With
    ``budget_from`` (the default γ's index), the later γ get ``_WORK_BUDGET`` times that
    fit's work. With ``report`` (a line prefix), print each candidate's score as
    ``GridSearchCV(verbose=...)`` does.

    Pairs and bounds come from a ``RandomState(seed)`` in the order the learner's own
    ``fit(X, y)`` draws them (pairs, then bounds); every γ then starts its cycles from
    the same stream position, as the plain fit on the fold would (warm-started from the
    last γ's duals).
    """
    X_train, y_train = X[train], y[train]
    if n_neighbors is not None and not _neighbour_pairs_possible(y_train):
        return None
    scores = np.full((len(gammas), len(test)), np.nan)
    fit_times, work, cycles = (np.full(len(gammas), np.nan) for _ in range(3))
    # Paths run in parallel (n_jobs): threads inside the small k-NN queries and products
    # only contend (OpenMP and BLAS alike).
    with one_thread():
        rng = np.random.RandomState(seed)
        # The learner's own label draw and bounds: each fit solves its plain fit's problem.
        learner = clone(learner).set_params(
            n_neighbors=n_neighbors, n_constraints=n_constraints if n_neighbors is None else None)
        constraints = learner._bounded_pairs(X_train, y_train, rng)
        n_pairs, stream = len(constraints.pairs), rng.get_state()
        X_train, X_test, learner = _in_principal_directions(learner, X_train, X[test])
        # γ increases (sorted grid): each fit starts from the last one's duals (the learner
        # falls back to its prior where they do not give a valid start).
        fitted = clone(learner).set_params(warm_start=True)
        for index, gamma in enumerate(gammas):
            cap = learner.max_iter if max_work is None else min(learner.max_iter,
                                                                int(max_work // n_pairs))
            if cap < 1 or (index == 0 and min_cycles is not None and cap < min_cycles):
                break
            rng.set_state(stream)
            start = time.perf_counter()
            with warnings.catch_warnings():
                if cap < learner.max_iter:  # stopping at the budget is not a failure
                    warnings.simplefilter("ignore", ConvergenceWarning)
                # Ctrl-C stops the search: an inner fit must not keep a partial metric.
                warnings.filterwarnings("error", ".*training interrupted by the user",
                                        ConvergenceWarning)
                fitted.set_params(gamma=gamma, random_state=rng, max_iter=cap).fit(
                    X_train, constraints=constraints)
            fit_times[index] = time.perf_counter() - start
            if cap < learner.max_iter and fitted.n_iter_ >= cap:
                break
            cycles[index], work[index] = fitted.n_iter_, fitted.n_iter_ * n_pairs
            if index == budget_from:
                max_work = _WORK_BUDGET * work[index]
            # X is validated once in fit: ``transform`` would validate it again per γ.
            knn = KNeighborsClassifier(knn_neighbors).fit(
                X_train @ fitted.components_.T, y_train)
            scores[index] = true_class_probability(knn, X_test @ fitted.components_.T,
                                                   y[test])
            if report:
                print(f"{report} n_neighbors={n_neighbors}, gamma={gamma:.3g}: score "
                      f"{scores[index].mean():.4f}, fit {fit_times[index]:.3f} s", flush=True)
    return scores, fit_times, work, cycles


def _in_principal_directions(learner, X_train, X_test):
    """The fold in the top principal directions a low-rank identity prior keeps, if any.

    With ``prior="identity"`` and ``n_components=k < d``, the learner works on
    ``X_train @ U`` (U: the top k principal directions of X_train) from the identity;
    fitted on those coordinates with ``n_components=None`` it solves the same problem,
    so the γ of a path share one SVD of the fold instead of one each.
    """
    n_components, prior = learner.n_components, learner.prior
    if (n_components is None or n_components == X_train.shape[1]
            or not (isinstance(prior, str) and prior == "identity")):
        return X_train, X_test, learner
    basis, _ = prior_eigenpairs(X_train, prior, n_components)
    return X_train @ basis, X_test @ basis, clone(learner).set_params(n_components=None)


# cv=None: a third of the training set held out per split, so each held-out fold keeps
# 50 samples from 150 up; below this many samples the 3 splits are drawn twice, from it
# on one split is drawn and every inner fit is held to a work budget.
_LARGE_FROM = 1000
# Inner fits other than the default's may cost this many times its cycles × pairs.
_WORK_BUDGET = 2.0
# Random pairs by default: 40 n_classes² as in ITML, at most this many per sample, since
# with many classes 40 n_classes² outgrows the data (40,960 pairs for 1,526 samples).
_MAX_PAIRS_PER_SAMPLE = 10


def _inner_splits(cv, X, y, seed):
    """The inner splits: ``cv``'s, or a stratified third held out (six times on small sets)."""
    if cv is None and len(y) >= _LARGE_FROM:
        return list(StratifiedKFold(3, shuffle=True, random_state=seed).split(X, y))[:1]
    if cv is None:
        cv = RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=seed)
    return list(check_cv(cv, y, classifier=True).split(X, y))


class _PairLearnerCV(MahalanobisMixin):
    """Shared fit of LogDetCV and VonNeumannCV; subclasses set ``_learner``."""

    # Class labels only: the k-NN score needs them, not pairs.
    _constraint_kind = "labels"
    _learner = None
    # The pair schemes searched when n_neighbors_grid is None, the learner's default first.
    _default_schemes = None

    _parameter_constraints: dict = {
        "gammas": ["array-like"],
        "n_neighbors_grid": ["array-like", None],
        "cv": ["cv_object"],
        "knn_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None],
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        # joblib's convention: positive counts, or -1, -2, ... for all CPUs but |n| - 1.
        "n_jobs": [Interval(Integral, 1, None, closed="left"),
                   Interval(Integral, None, -1, closed="right"), None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        gammas=(0.01, 0.1, 1.0),
        n_neighbors_grid=None,
        *,
        cv=None,
        knn_neighbors=5,
        n_components="auto",
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
        """Score the (γ, pair scheme) candidates by k-NN cross-validation, refit the chosen.

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
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=np.float64)
        check_scale(X, type(self).__name__)
        check_informative(X, type(self).__name__, refuse=True)
        check_classification_targets(y)
        gammas = _check_grid(self.gammas, "gammas", "gamma")
        schemes = _check_grid(self._default_schemes if self.n_neighbors_grid is None
                              else self.n_neighbors_grid, "n_neighbors_grid", "scheme")
        seed = self.random_state if isinstance(self.random_state, Integral) else (
            check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        splits = _inner_splits(self.cv, X, y, seed)
        smallest = min(len(train) for train, _ in splits)
        if self.knn_neighbors > smallest:
            raise ValueError(
                f"knn_neighbors={self.knn_neighbors} exceeds the {smallest} samples of the "
                "smallest training fold; lower knn_neighbors or the number of folds (cv).")
        tol = self._learner().tol if self.tol is None else self.tol
        n_components = resolve_components(self.n_components, self.prior, X.shape[1])
        learner = self._learner(
            n_components=n_components, prior=self.prior, tol=tol, max_iter=self.max_iter)
        n_constraints = self.n_constraints or min(
            40 * len(np.unique(y)) ** 2, _MAX_PAIRS_PER_SAMPLE * len(y))
        samples, fit_times = self._search(learner, X, y, splits, gammas, schemes, seed,
                                          n_constraints)
        best_index, results = self._results(samples, fit_times, gammas, schemes)
        chosen = results["params"][best_index]
        refit = self._learner(
            n_components=n_components, prior=self.prior,
            n_constraints=n_constraints if chosen["n_neighbors"] is None else None,
            tol=tol, max_iter=self.max_iter, verbose=self.verbose, random_state=seed,
            **chosen,
        ).fit(X, y)
        self.cv_results_, self.best_params_, self.best_index_ = results, chosen, best_index
        self.best_score_ = float(results["mean_test_score"][best_index])
        self.gammas_ = gammas
        for name, value in vars(refit).items():
            if name.endswith("_") and not name.startswith("_"):
                setattr(self, name, value)
        return self

    def _default_index(self, gammas, schemes):
        """Index of the plain learner's default (γ, n_neighbors) in the grid, or None."""
        default = self._learner()
        if default.n_neighbors in schemes and default.gamma in gammas:
            return (schemes.index(default.n_neighbors) * len(gammas)
                    + int(np.flatnonzero(gammas == default.gamma)[0]))
        return None

    def _search(self, learner, X, y, splits, gammas, schemes, seed, n_constraints):
        """Per split, the (candidate × test sample) scores; fit times (splits × candidates).

        NaN where a candidate was not fitted. From ``_LARGE_FROM`` samples on (with the
        default in the grid), the default's scheme is fitted first, and every later fit
        gets ``_WORK_BUDGET`` times the default's work on its split (``_score_path``).
        Raises when no scheme can be drawn.
        """
        n_gammas, n_schemes = len(gammas), len(schemes)
        default = self._default_index(gammas, schemes)
        budget = len(y) >= _LARGE_FROM and default is not None
        samples = [np.full((n_schemes * n_gammas, len(test)), np.nan) for _, test in splits]
        fit_times = np.full((len(splits), n_schemes * n_gammas), np.nan)
        drawable = np.ones(n_schemes, dtype=bool)
        max_work, min_cycles = [None] * len(splits), [None] * len(splits)
        phases = ([[default // n_gammas], [s for s in range(n_schemes)
                                           if s != default // n_gammas]]
                  if budget else [range(n_schemes)])
        for phase in phases:
            jobs = [(s, fold) for s in phase for fold in range(len(splits)) if drawable[s]]
            try:
                paths = Parallel(n_jobs=self.n_jobs)(
                    delayed(_score_path)(
                        learner, X, y, *splits[fold], gammas, schemes[s], n_constraints,
                        self.knn_neighbors, seed, max_work=max_work[fold],
                        min_cycles=min_cycles[fold],
                        budget_from=default % n_gammas if budget and s == default // n_gammas
                        else None,
                        report=self.verbose and (
                            f"[{type(self).__name__} split {fold + 1}/{len(splits)}]"))
                    for s, fold in jobs)
            except ConvergenceWarning as interrupted:
                raise KeyboardInterrupt from interrupted
            for (s, fold), path in zip(jobs, paths):
                if path is None:
                    drawable[s] = False
                    continue
                columns = slice(s * n_gammas, (s + 1) * n_gammas)
                samples[fold][columns], fit_times[fold, columns], work, cycles = path
                if budget and s == default // n_gammas:
                    max_work[fold] = _WORK_BUDGET * work[default % n_gammas]
                    min_cycles[fold] = cycles[0]
        for s in np.flatnonzero(~drawable):
            for split in samples:
                split[s * n_gammas:(s + 1) * n_gammas] = np.nan
        self._check_drawable(schemes, drawable)
        return samples, fit_times

    def _check_drawable(self, schemes, drawable):
        if not drawable.any():
            raise ValueError(
                f"No pair scheme in n_neighbors_grid={list(schemes)} can be drawn on every "
                "training fold: neighbour pairs need two classes with two samples or more "
                "each in every training fold."
            )
        if not drawable.all():
            left_out = sorted(schemes[s] for s in np.flatnonzero(~drawable))
            warnings.warn(
                f"{type(self).__name__}: n_neighbors={left_out} left out, some training "
                "fold has a single class or no class with two samples.", FitFailedWarning)

    def _results(self, samples, fit_times, gammas, schemes):
        """The stepwise rule's choice and ``cv_results_`` (``GridSearchCV``'s layout)."""
        default = self._default_index(gammas, schemes)
        best_index, gain, error, reference = stepwise_choice(samples, default, len(gammas),
                                                             margin=self._margin)
        scores = np.array([split.mean(axis=1) for split in samples])
        params = [{"gamma": float(gamma), "n_neighbors": n_neighbors}
                  for n_neighbors in schemes for gamma in gammas]
        scored = ~np.isnan(scores)
        complete = scored.all(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN: left-out scheme
            mean = np.nanmean(scores, axis=0)
            results = {
                "params": params,
                "param_gamma": np.array([p["gamma"] for p in params]),
                "param_n_neighbors": np.array([p["n_neighbors"] for p in params],
                                              dtype=object),
                **{f"split{fold}_test_score": scores[fold] for fold in range(len(scores))},
                "mean_test_score": mean,
                "std_test_score": np.nanstd(scores, axis=0),
                "rank_test_score": rank_scores(np.where(complete, mean, np.nan)),
                "n_splits_scored": scored.sum(axis=0),
                "mean_score_gain": gain,
                "std_error_score_gain": error,
                "gain_reference_index": reference,
                "chosen": np.arange(len(params)) == best_index,
                "mean_fit_time": np.nanmean(fit_times, axis=0),
            }
        if self.verbose:
            self._print_table(results)
        return best_index, results

    def _print_table(self, results):
        print(f"[{type(self).__name__}]")
        print(f"{'n_neighbors':>12} {'gamma':>10} {'mean score':>11} {'std':>8} "
              f"{'splits':>6} {'gain':>8} {'se':>8} {'rank':>5} {'fit (s)':>8}")
        print("-" * 83)
        for index, params in enumerate(results["params"]):
            print(f"{str(params['n_neighbors']):>12} {params['gamma']:>10.3g} "
                  f"{results['mean_test_score'][index]:>11.4f} "
                  f"{results['std_test_score'][index]:>8.4f} "
                  f"{results['n_splits_scored'][index]:>6d} "
                  f"{results['mean_score_gain'][index]:>8.4f} "
                  f"{results['std_error_score_gain'][index]:>8.4f} "
                  f"{results['rank_test_score'][index]:>5d} "
                  f"{results['mean_fit_time'][index]:>8.3f}"
                  + ("  chosen" if results["chosen"][index] else ""))


class LogDetCV(_PairLearnerCV):
    __doc__ = """LogDet metric learning with γ and the pair scheme chosen by cross-validation.

    Scores every (γ, pair scheme) candidate by a k-NN classifier's held-out probability
    of the true class in the space :class:`LogDet` learns on each training fold, then
    refits :class:`LogDet` on all the data with the chosen candidate: LogDet's default
    unless another candidate beats it by more than 1.5 standard errors. The pairs and bounds
    of a fold and scheme are drawn once and shared by all γ. The learner is that of
    Kulis, Sustik & Dhillon (2009), §5.1 and §6.2.1 (ITML with slack).

    Read more in the :ref:`User Guide <cross_validation>`.
""" + SHARED_DOC.format(
        learner="LogDet", extra_attributes="", schemes="``(3, None)``",
        default="gamma=0.1, n_neighbors=3", margin="1.5 standard errors") + """
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
    _default_schemes = (3, None)
    _margin = MARGINS["LogDetCV"]


class VonNeumannCV(_PairLearnerCV):
    __doc__ = """von Neumann metric learning with γ and the pair scheme chosen by cross-validation.

    Scores every (γ, pair scheme) candidate by a k-NN classifier's held-out probability
    of the true class in the space :class:`VonNeumann` learns on each training fold, then
    refits :class:`VonNeumann` on all the data with the chosen candidate: VonNeumann's
    default unless another candidate beats it by more than one standard error. The pairs and
    bounds of a fold and scheme are drawn once and shared by all γ. The learner is that
    of Kulis, Sustik & Dhillon (2009), §5.2 and §6.2.1.

    Read more in the :ref:`User Guide <cross_validation>`.
""" + SHARED_DOC.format(
        learner="VonNeumann", schemes="``(3, None)``", default="gamma=0.1, n_neighbors=3",
        margin="one standard error", extra_attributes="""
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
    _default_schemes = (3, None)
    _margin = MARGINS["VonNeumannCV"]
