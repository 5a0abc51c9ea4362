"""The parameters and attributes LogDetCV and VonNeumannCV share, for their docstrings."""

SHARED_DOC = """
    Parameters
    ----------
    gammas : array-like of float, default=(0.01, 0.1, 1.0)
        Slack weights γ to try (see the ``gamma`` of :class:`{learner}`): larger γ
        holds the pairs drawn from labels, which conflict, more tightly and costs more
        cycles. ``np.inf`` enforces the
        constraints exactly.

    n_neighbors_grid : array-like of {{None, int}}, default=None
        Pair schemes to try, as the learner's ``n_neighbors``: ``None`` draws
        ``n_constraints`` random pairs, ``k`` joins each sample to its ``k`` nearest
        samples of its own class and of the other classes (fewer in a class of ``k``
        samples or fewer, see :func:`~psdmetric.pairs_from_labels`). The default
        ``None`` searches {schemes}. A neighbour scheme that cannot be drawn on some
        training fold (a single class, or no class with two samples) is left out with a
        ``FitFailedWarning``.

    cv : int, cross-validation generator or iterable, default=None
        Splits for the inner cross-validation, as in scikit-learn (an int is that many
        stratified folds). ``None`` holds out a stratified third of the samples (shuffled,
        seeded by ``random_state``), so that each held-out fold holds 50 samples from
        150 up: below 1,000 samples the three folds of a 3-fold split drawn twice (six
        splits), from 1,000 samples on one such split, whose held-out third of 333
        samples or more ranks the candidates sample by sample.

    knn_neighbors : int, default=5
        Neighbours of the :class:`~sklearn.neighbors.KNeighborsClassifier` that scores
        each candidate in the learned space: the score of a held-out fold is the mean,
        over its samples, of the share of their ``knn_neighbors`` nearest training
        samples that hold their label (the classifier's predicted probability of the
        true class). Unlike the accuracy, which moves in steps of one test sample, it
        tells apart candidates whose neighbourhoods differ by less than that.

    n_components : int, "auto" or None, default="auto"
        Rank of the learned metric, as in :class:`{learner}`. ``"auto"`` keeps the
        prior's rank, except for the identity prior on more than 100 features, which
        learns in the top 100 principal directions of X (as :class:`VonNeumann`'s
        default does).

    prior : {{"identity", "covariance"}} or ndarray, default="identity"
        Starting matrix ``M₀``, as in :class:`{learner}`.

    n_constraints : int, default=None
        Number of random pairs (scheme ``None``); ``None`` means ``40 * n_classes**2``
        (as in ITML) up to ``10 * n_samples``: with many classes ``40 * n_classes**2``
        outgrows the data, and every candidate's inner fits pay for it.

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
        ``{{"gamma": γ, "n_neighbors": k}}`` of the chosen candidate, the one refitted.
        The plain learner's default (``{default}``), when the grid holds it, is the
        start of a stepwise rule: first the γ of the default's pair scheme, each kept out
        unless its mean score beats the default's by more than {margin} of
        the paired score difference per held-out sample (pooled over the splits), the
        best such γ replacing the default; then the other schemes, which
        must beat that choice by as much. Without the default in the grid the best mean
        score wins.

    best_index_ : int
        Index of the chosen candidate in ``cv_results_``.

    best_score_ : float
        Its mean held-out score (k-NN probability of the true class) over the splits.

    cv_results_ : dict of ndarray
        One entry per candidate, schemes in ``n_neighbors_grid`` order and within each
        γ ascending, laid out as :class:`~sklearn.model_selection.GridSearchCV`'s:
        ``params``, ``param_gamma``, ``param_n_neighbors``, ``split{{i}}_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` and
        ``mean_fit_time`` (seconds per inner fit), and the rule's reading:
        ``mean_score_gain``, ``std_error_score_gain`` and ``gain_reference_index`` (the
        mean score difference to the candidate it was compared with, its standard error
        and that candidate's index; NaN without the default), ``n_splits_scored`` and
        ``chosen`` (True for ``best_index_``). From 1,000 samples on, every inner fit
        after the default's may run at most twice the default's cycles × pairs on its
        split; one that needs more is not scored (NaN, 0 splits, ranked last), nor are
        the larger γ of its scheme, which cost more. A left-out scheme scores NaN.

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
