"""LMNN: its loss and gradient against oracles, the solver's guarantees, degenerate data."""

import re
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline

from psdmetric import LMNN, TripletConstraints, TripletsClassifier, triplets_from_labels
from psdmetric._large_margin import _lmnn as lmnn_module
from psdmetric._large_margin._lmnn_kernels import close_pairs, triplet_loss
from psdmetric._large_margin._objective import (
    impostor_candidates,
    label_objective,
    target_neighbours,
    triplet_objective,
)


def blobs(n=24, d=3, classes=3, spread=1.0, seed=0):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % classes
    return rng.randn(classes, d)[y] + spread * rng.randn(n, d), y


def every_triplet(X, y, k):
    """The loss's terms by enumeration: target pairs, and every (i, j, l) with l another class."""
    targets = target_neighbours(X, y, k)
    pull = [(i, j) for i in range(len(X)) for j in targets[i] if j >= 0]
    triplets = [(i, j, m) for i, j in pull for m in range(len(X)) if y[m] != y[i]]
    return pull, triplets


def dense_loss_and_gradient(X, L, pull, triplets, mu):
    """The loss and ``2 L Σ w (x_a − x_b)(x_a − x_b)ᵀ``, one d × d outer product per term."""
    def squared(a, b):
        return np.sum((L @ (X[a] - X[b])) ** 2)

    def outer(a, b):
        return np.outer(X[a] - X[b], X[a] - X[b])

    value = (1 - mu) * sum(squared(i, j) for i, j in pull)
    G = (1 - mu) * sum(outer(i, j) for i, j in pull)
    for i, j, m in triplets:
        margin = 1 + squared(i, j) - squared(i, m)
        if margin > 0:
            value += mu * margin
            G = G + mu * (outer(i, j) - outer(i, m))
    return value, 2 * L @ G


def all_impostors_objective(X, y, k, mu):
    other = np.array([(i, m) for i in range(len(X)) for m in range(len(X)) if y[i] != y[m]])
    return label_objective(X, target_neighbours(X, y, k), other, mu)


@pytest.mark.parametrize("n_components", [3, 2])
def test_gradient_matches_every_triplet_enumerated_and_finite_differences(n_components):
    X, y = blobs()
    L = np.random.RandomState(1).randn(n_components, 3)
    objective = all_impostors_objective(X, y, 2, 0.3)
    value, gradient, active = objective.value_and_gradient(L)
    pull, triplets = every_triplet(X, y, 2)
    dense_value, dense_gradient = dense_loss_and_gradient(X, L, pull, triplets, 0.3)
    assert 0 < active < len(triplets)
    assert np.isclose(value, dense_value, rtol=1e-12)
    assert np.allclose(gradient, dense_gradient, rtol=1e-10, atol=1e-10)
    # The same terms as explicit triplets (grouped by push pair in another order).
    explicit = triplet_objective(X, np.array(triplets), 0.3).value_and_gradient(L)
    assert np.isclose(explicit[0], dense_value, rtol=1e-12) and explicit[2] == active
    assert np.allclose(explicit[1], dense_gradient, rtol=1e-10, atol=1e-10)
    step, numeric = 1e-6, np.zeros_like(L)
    for index in np.ndindex(L.shape):
        shift = np.zeros_like(L)
        shift[index] = step
        numeric[index] = (objective.value(L + shift) - objective.value(L - shift)) / (2 * step)
    assert np.allclose(gradient, numeric, rtol=1e-5, atol=1e-5)


def numpy_triplet_loss(Z, pull, push, push_start, triplet_pull, mu):
    """NumPy's ``triplet_loss``: margins, active mask, weighted counts, dense Laplacian."""
    triplet_push = np.repeat(np.arange(len(push)), np.diff(push_start))
    pull_squared = np.sum((Z[pull[:, 0]] - Z[pull[:, 1]]) ** 2, axis=1)
    push_squared = np.sum((Z[push[:, 0]] - Z[push[:, 1]]) ** 2, axis=1)
    margins = 1.0 + pull_squared[triplet_pull] - push_squared[triplet_push]
    active = margins > 0.0
    value = (1.0 - mu) * pull_squared.sum() + mu * margins[active].sum()
    weights = np.concatenate([
        (1.0 - mu) + mu * np.bincount(triplet_pull[active], minlength=len(pull)),
        -mu * np.bincount(triplet_push[active], minlength=len(push))])
    a, b = np.concatenate([pull, push]).T
    laplacian = np.zeros((len(Z), len(Z)))
    for rows, columns, sign in ((a, b, -1.0), (b, a, -1.0), (a, a, 1.0), (b, b, 1.0)):
        np.add.at(laplacian, (rows, columns), sign * weights)
    return value, int(active.sum()), laplacian @ Z


def random_triplets(rng, n, n_pull, n_push, n_triplets):
    """Pairs with repeats (an identical pair twice, both directions, a point with itself)
    and triplets grouped by push pair, some push pairs with none."""
    pull = rng.randint(n, size=(n_pull, 2))
    push = rng.randint(n, size=(n_push, 2))
    pull[1], push[1], push[2], pull[2] = pull[0], push[0], push[0, ::-1], [3, 3]
    triplet_push = np.sort(rng.randint(n_push - 2, size=n_triplets))
    push_start = np.searchsorted(triplet_push, np.arange(n_push + 1))
    return pull, push, push_start, rng.randint(n_pull, size=n_triplets)


@pytest.mark.parametrize("r", [1, 7, 8])
@pytest.mark.parametrize("keep", ["some", "none", "all"])
@pytest.mark.parametrize("index", [np.int32, np.intp])
def test_triplet_loss_kernel_matches_numpy(r, keep, index):
    rng = np.random.RandomState(r)
    Z = rng.randn(25, r) / np.sqrt(r)
    pull, push, push_start, triplet_pull = random_triplets(rng, 25, 40, 60, 300)
    if keep != "some":
        # Only the triplets with positive (or non-positive) margins, regrouped.
        triplet_push = np.repeat(np.arange(len(push)), np.diff(push_start))
        d2 = np.sum((Z[pull[:, 0]] - Z[pull[:, 1]]) ** 2, axis=1)
        e2 = np.sum((Z[push[:, 0]] - Z[push[:, 1]]) ** 2, axis=1)
        margins = 1.0 + d2[triplet_pull] - e2[triplet_push]
        kept = margins > 0.0 if keep == "all" else margins <= 0.0
        triplet_pull, triplet_push = triplet_pull[kept], triplet_push[kept]
        push_start = np.searchsorted(triplet_push, np.arange(len(push) + 1))
    triplet_pull = triplet_pull.astype(index)
    image = np.full_like(Z, np.nan)
    value, active = triplet_loss(Z, pull, push, push_start, triplet_pull, 0.3, image=image)
    expected = numpy_triplet_loss(Z, pull, push, push_start, triplet_pull, 0.3)
    assert active == expected[1] == {"none": 0, "all": len(triplet_pull)}.get(keep, active)
    assert 0 < expected[1] < len(triplet_pull) or keep != "some"
    assert np.isclose(value, expected[0], rtol=1e-12, atol=0)
    assert np.allclose(image, expected[2], rtol=1e-12, atol=1e-12 * np.abs(expected[2]).max())
    assert triplet_loss(Z, pull, push, push_start, triplet_pull, 0.3) == (value, active)


def test_triplet_loss_kernel_refuses_indices_out_of_range():
    Z, pairs = np.zeros((4, 2)), np.array([[0, 1], [2, 3]])
    start, triplets = np.array([0, 1, 2]), np.array([0, 1])
    for bad, message in ((dict(pull=pairs + 1), "pull must index the 4 rows of Z"),
                         (dict(push=pairs - 1), "push must index the 4 rows of Z"),
                         (dict(push_start=np.array([0, 2, 1])), "push_start must rise"),
                         (dict(push_start=np.array([0, 1, 3])), "push_start must rise"),
                         (dict(triplet_pull=np.array([0, 2])), "triplet_pull must index")):
        arguments = dict(pull=pairs, push=pairs, push_start=start, triplet_pull=triplets)
        arguments.update(bad)
        with pytest.raises(ValueError, match=message):
            triplet_loss(Z, arguments["pull"], arguments["push"], arguments["push_start"],
                         arguments["triplet_pull"], 0.5)
    with pytest.raises(ValueError, match="image must have the shape of Z"):
        triplet_loss(Z, pairs, pairs, start, triplets, 0.5, image=np.zeros((4, 3)))


def test_impostor_search_finds_exactly_the_pairs_within_each_radius():
    X, y = blobs(n=40, d=4)
    radii = np.random.RandomState(2).uniform(0, 6, size=40)
    found = impostor_candidates(X, y, radii)
    squared = np.sum((X[:, None] - X[None]) ** 2, axis=2)
    expected = np.argwhere((squared < radii[:, None]) & (y[:, None] != y[None]))
    assert np.array_equal(np.unique(found, axis=0), expected)
    assert len(found) == len(expected)


@pytest.mark.parametrize("radius", [0.0, 15.0, np.inf])
def test_close_pairs_kernel_matches_numpy(radius):
    rng = np.random.RandomState(3)
    A, B = rng.randn(7, 5), rng.randn(11, 5)
    row_norms, column_norms = np.sum(A * A, axis=1), np.sum(B * B, axis=1)
    row_radii, column_radii = radius * rng.rand(7), radius * rng.rand(11)
    squared = row_norms[:, None] + column_norms - 2.0 * (A @ B.T)
    block = A @ B.T
    forward, backward = close_pairs(block, row_norms, column_norms, row_radii, column_radii)
    assert np.array_equal(block, squared)
    assert np.array_equal(forward, np.nonzero(squared < row_radii[:, None]))
    assert np.array_equal(backward, np.nonzero(squared < column_radii[None, :]))
    assert forward.shape[1] == {0.0: 0, np.inf: 77}.get(radius, forward.shape[1])
    assert 0 < forward.shape[1] < 77 or radius != 15.0
    with pytest.raises(ValueError, match="one entry per row and column"):
        close_pairs(block, row_norms, column_norms, row_radii[:-1], column_radii)


def test_targets_skip_the_sample_itself_even_among_duplicates():
    X = np.array([[0.0], [0.0], [0.0], [5.0], [6.0], [9.0]])
    targets = target_neighbours(X, np.array([0, 0, 0, 1, 1, 2]), 3)
    assert [sorted(row[row >= 0]) for row in targets[:3]] == [[1, 2], [0, 2], [0, 1]]
    assert targets[3].tolist() == [4, -1, -1] and targets[5].tolist() == [-1, -1, -1]


def rounds_losses(model, X, y, capsys, **fit):
    model.set_params(verbose=1).fit(X, y, **fit)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[3:]]
    return np.array([float(row[1]) for row in rows if row and row[0].isdigit()])


def test_the_loss_never_increases_across_rounds(capsys):
    X, y = load_iris(return_X_y=True)
    model = LMNN(init="identity", tol=1e-8, max_iter=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        losses = rounds_losses(model, X, y, capsys)
    assert len(losses) > 3
    assert np.all(np.diff(losses) <= 0)
    # The fitted loss is on all impostors, not only the last round's candidates.
    full = all_impostors_objective(X, np.unique(y, return_inverse=True)[1], 3, 0.5)
    assert np.isclose(model.objective_, full.value(model.components_), rtol=1e-12)
    assert np.isclose(losses[-1], model.objective_, rtol=1e-6)


def sdp_optimum(X, pull, triplets, mu):
    """Weinberger & Saul (2009)'s SDP (M form), solved by cvxpy."""
    d = X.shape[1]
    M = cp.Variable((d, d), PSD=True)

    def squared(a, b):
        v = X[a] - X[b]
        return cp.sum(cp.multiply(np.outer(v, v), M))

    slack = cp.Variable(len(triplets), nonneg=True)
    constraints = [slack[t] >= 1 + squared(i, j) - squared(i, m)
                   for t, (i, j, m) in enumerate(triplets)]
    problem = cp.Problem(cp.Minimize((1 - mu) * sum(squared(i, j) for i, j in pull)
                                     + mu * cp.sum(slack)), constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    return problem.value


def test_labels_fit_reaches_the_sdp_optimum():
    X, y = blobs(n=18, d=2, spread=1.2, seed=3)
    pull, triplets = every_triplet(X, y, 2)
    # The SDP's target neighbours are Euclidean: start from a rotation (init="pca").
    model = LMNN(n_neighbors=2, mu=0.5, init="pca", tol=1e-10, max_iter=500).fit(X, y)
    optimum = sdp_optimum(X, pull, triplets, 0.5)
    assert abs(model.objective_ - optimum) <= 1e-4 * optimum
    assert model.n_iter_ < 500


def test_triplets_fit_reaches_the_sdp_optimum_and_works_in_triplets_classifier():
    X, y = blobs(n=15, d=3, spread=1.5, seed=4)
    rng = np.random.RandomState(0)
    triplets = np.array([rng.choice(15, 3, replace=False) for _ in range(40)])
    pull = np.unique(triplets[:, :2], axis=0)
    model = LMNN(tol=1e-10, max_iter=500).fit(X, constraints=TripletConstraints(triplets))
    optimum = sdp_optimum(X, [tuple(p) for p in pull], triplets.tolist(), 0.5)
    assert abs(model.objective_ - optimum) <= 1e-4 * optimum
    assert np.isclose(model.objective_,
                      triplet_objective(X, triplets, 0.5).value(model.components_))
    X, y = load_iris(return_X_y=True)
    triplets = triplets_from_labels(X, y, random_state=0).triplets
    classifier = TripletsClassifier(LMNN(), preprocessor=X).fit(triplets[::2])
    held_out = triplets[1::2]
    euclidean = np.mean(np.sum((X[held_out[:, 0]] - X[held_out[:, 1]]) ** 2, axis=1)
                        < np.sum((X[held_out[:, 0]] - X[held_out[:, 2]]) ** 2, axis=1))
    assert classifier.learner_.n_features_in_ == 4
    assert classifier.score(held_out) > euclidean


def test_no_impostors_converges_to_the_pull_and_margin_balance():
    # Two far-apart classes: no impostor at the start, so the pull term shrinks the metric
    # until the other class reaches the margin; no crash, a usable metric.
    X, y = blobs(n=20, d=2, spread=0.1, seed=5)
    X[y == 1] += 100.0
    y = (y == 1).astype(int)
    start = all_impostors_objective(X, y, 3, 0.5)
    assert start.value_and_gradient(np.eye(2))[2] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = LMNN(init="pca", tol=1e-10, max_iter=500).fit(X, y)
    pull, triplets = every_triplet(X, y, 3)
    # The optimum is near 0 (a tiny metric) and every margin ends at the hinge's kink,
    # where L-BFGS stops: within 1e-3 of the starting loss of the SDP optimum, never below.
    initial, optimum = start.value(np.eye(2)), sdp_optimum(X, pull, triplets, 0.5)
    assert optimum - 1e-8 <= model.objective_ <= optimum + 1e-3 * initial
    assert np.all(np.isfinite(model.components_))


def test_degenerate_data_duplicates_tiny_classes_and_more_features_than_samples():
    rng = np.random.RandomState(6)
    X = rng.randn(12, 30)
    X[5] = X[4]                                       # a duplicate within a class
    X[7] = X[6]                                       # and one across classes
    y = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3])  # class 3 has one point
    model = LMNN(n_neighbors=5, max_iter=50).fit(X, y)
    M = model.get_mahalanobis_matrix()
    assert M.shape == (30, 30) and np.all(np.isfinite(M))
    assert np.linalg.eigvalsh(M).min() >= -1e-10 * np.abs(M).max()
    full = all_impostors_objective(X, y, 5, 0.5)
    assert np.isclose(model.objective_, full.value(model.components_))
    assert model.objective_ < full.value(np.eye(30))


def test_lmnn_beats_the_euclidean_metric_when_noise_features_dominate():
    rng = np.random.RandomState(0)
    y = np.arange(300) % 3
    signal = np.array([[0, 0], [1.5, 0], [0, 1.5]])[y] + 0.4 * rng.randn(300, 2)
    X = np.hstack([signal, 3.0 * rng.randn(300, 6)])
    knn = KNeighborsClassifier(5)
    euclidean = cross_val_score(knn, X, y, cv=3).mean()
    learned = cross_val_score(make_pipeline(LMNN(), knn), X, y, cv=3).mean()
    assert euclidean < 0.6 and learned > euclidean + 0.25


def test_starting_maps():
    X, y = load_iris(return_X_y=True)
    lda = LMNN(init="lda", max_iter=1)._initial_map(X, y)
    centred = X - np.stack([X[y == c].mean(axis=0) for c in range(3)])[y]
    within = centred.T @ centred / len(X)
    ridged = within + 1e-3 * np.trace(within) / 4 * np.eye(4)
    assert np.allclose(lda @ ridged @ lda.T, np.eye(4))
    pca = LMNN(init="pca", n_components=2)._initial_map(X, y)
    assert np.allclose(pca @ pca.T, np.eye(2))
    assert np.allclose(LMNN(init="identity", n_components=2)._initial_map(X, y), np.eye(2, 4))
    # The default: LDA with labels of three or more classes up to 100 features, PCA with
    # two classes, with triplets or with more features.
    assert np.array_equal(LMNN()._initial_map(X, y), lda)
    two = y[y < 2]
    assert np.array_equal(LMNN()._initial_map(X[y < 2], two),
                          LMNN(init="pca")._initial_map(X[y < 2], two))
    assert not np.allclose(LMNN(init="lda")._initial_map(X[y < 2], two),
                           LMNN(init="pca")._initial_map(X[y < 2], two))
    assert np.array_equal(LMNN()._initial_map(X, None), LMNN(init="pca")._initial_map(X, None))
    many, classes = np.random.RandomState(1).randn(150, 101), np.arange(150) % 3
    assert np.array_equal(LMNN()._initial_map(many, classes),
                          LMNN(init="pca")._initial_map(many, classes))
    # d > n: the within-class scatter is singular; the ridged start is still finite, whitening.
    wide, codes = np.random.RandomState(0).randn(12, 30), np.arange(12) % 3
    start = LMNN(init="lda")._initial_map(wide, codes)
    centred = wide - np.stack([wide[codes == c].mean(axis=0) for c in range(3)])[codes]
    within = centred.T @ centred / 12
    ridged = within + 1e-3 * np.trace(within) / 30 * np.eye(30)
    assert np.all(np.isfinite(start)) and np.allclose(start @ ridged @ start.T, np.eye(30))
    given = np.arange(8.0).reshape(2, 4)
    model = LMNN(init=given, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert model.fit(X, y).components_.shape == (2, 4)
    assert np.array_equal(given, np.arange(8.0).reshape(2, 4))


@pytest.mark.parametrize("params, fit, message", [
    ({"n_components": 5}, {}, "n_components=5 must be at most n_features=4"),
    ({"init": np.eye(3)}, {}, "init must be a finite array of shape (3, 4)"),
    ({"init": np.eye(2, 4), "n_components": 3}, {}, "shape (3, 4)"),
    ({"init": "lda"}, {"constraints": TripletConstraints([[0, 1, 60]])}, "init='lda' needs"),
])
def test_bad_parameters_are_named(params, fit, message):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=re.escape(message)):
        LMNN(**params).fit(X, y, **fit)


def test_verbose_table_and_max_iter_warning(capsys):
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="max_iter=2 rounds"):
        LMNN(max_iter=2, tol=0.0, verbose=1).fit(X, y)
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "[LMNN]" and "candidates" in table[1] and len(table) == 5


def test_row_space_solve_matches_the_full_space_solve(monkeypatch):
    # d > n: L-BFGS in the row space of X gives the same iterates as on the full L.
    rng = np.random.RandomState(2)
    y = np.arange(24) % 3
    X = rng.randn(24, 40) + 2.0 * np.eye(3, 40)[y]
    reduced = LMNN(init="pca", max_iter=5, tol=0.0)
    full = LMNN(init="pca", max_iter=5, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reduced.fit(X, y)
        monkeypatch.setattr(lmnn_module, "_row_space", lambda X: (X, None))
        full.fit(X, y)
    assert np.allclose(reduced.components_, full.components_, rtol=1e-6, atol=1e-8)
    assert np.isclose(reduced.objective_, full.objective_, rtol=1e-9)


def test_degenerate_labels_and_rows_are_refused_by_name():
    X = np.random.RandomState(0).randn(60, 5)
    with pytest.raises(ValueError, match="y: every one of its 6 classes has a single sample"):
        LMNN().fit(X[:6], np.arange(6))
    with pytest.raises(ValueError, match="rows of X are all equal"):
        LMNN().fit(np.ones((60, 5)), np.arange(60) % 3)


def test_the_start_is_scaled_to_the_least_loss_on_its_ray():
    # Data 30 times wider than the margin: the start shrinks to the grid point of least loss
    # (all impostors counted), lower than at both grid neighbours and at the unscaled start.
    X, y = load_iris(return_X_y=True)
    X = 30.0 * (X - X.mean(axis=0)) / X.std(axis=0)
    targets = target_neighbours(X, y, 3)
    c = lmnn_module._loss_minimising_scale(X, y, targets, 0.5, np.eye(4))
    full = all_impostors_objective(X, y, 3, 0.5)
    loss = [full.value(factor * np.eye(4)) for factor in (c / np.sqrt(2), c, c * np.sqrt(2))]
    assert c < 0.5 and np.isclose(np.log2(c) * 2, round(np.log2(c) * 2))
    assert loss[1] < min(loss[0], loss[2]) and loss[1] < full.value(np.eye(4))


def test_tol_stops_when_the_loss_is_down_to_tol_of_its_start(capsys):
    # d > n: each class can collapse to a point and the loss fall towards 0 by large
    # ratios per round (never a small change); the fit stops at the first round whose
    # loss is below tol times the loss at the (scaled) start.
    rng = np.random.RandomState(3)
    y = np.arange(60) % 3
    X = rng.randn(60, 100)
    losses = rounds_losses(LMNN(init="pca", tol=1e-6), X, y, capsys)
    targets = target_neighbours(X, y, 3)
    scale = lmnn_module._loss_minimising_scale(X, y, targets, 0.5, np.eye(100))
    initial = all_impostors_objective(X, y, 3, 0.5).value(scale * np.eye(100))
    assert len(losses) >= 3 and losses[-1] <= 1e-6 * initial < losses[-2]
    assert np.all(-np.diff(losses) / losses[:-1] > 1e-6)
