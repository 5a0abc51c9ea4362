"""RCA and LFDA against dense oracles written from the papers' formulas; chunklets; the
tuple classifiers around learners of class labels (scikit-learn's NCA, LFDA, RCA)."""

import numpy as np
import pytest
from scipy import linalg
from sklearn.datasets import load_iris, load_wine
from sklearn.neighbors import NeighborhoodComponentsAnalysis
from sklearn.preprocessing import StandardScaler

from psdmetric import LFDA, MLKR, RCA, PairConstraints, PairsClassifier, TripletsClassifier
from psdmetric import triplets_from_labels
from psdmetric._closed_form import _lfda
from psdmetric._core._chunklets import Chunklets
from psdmetric._core._base import oriented_columns
from psdmetric._core._principal import span_coordinates


def scaled(load):
    X, y = load(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def relative_difference(A, B):
    return np.abs(A - B).max() / np.abs(B).max()


# --- RCA (Bar-Hillel, Hertz, Shental & Weinshall, 2005, §2) -------------------------

def within_chunklet_covariance(X, chunks):
    """(1/p) Σ_chunklets Σ_(i in chunklet) (x_i − m_c)(x_i − m_c)ᵀ, one chunklet at a time."""
    C, p = np.zeros((X.shape[1], X.shape[1])), 0
    for label in set(chunks.tolist()) - {-1}:
        members = X[chunks == label]
        if len(members) < 2:
            continue
        for x in members:
            d = x - members.mean(axis=0)
            C += np.outer(d, d)
        p += len(members)
    return C / p


@pytest.mark.parametrize("load", [load_iris, load_wine])
def test_rca_is_the_inverse_within_chunklet_covariance(load):
    X, y = scaled(load)
    chunks = Chunklets.from_labels(X, y, random_state=0).chunks
    M = RCA().fit(X, chunks=chunks).get_mahalanobis_matrix()
    oracle = np.linalg.inv(within_chunklet_covariance(X, chunks))
    assert relative_difference(M, oracle) < 1e-10


def test_rca_reduced_keeps_the_least_within_chunklet_directions():
    X, y = scaled(load_wine)
    chunks = Chunklets.from_labels(X, y, random_state=1).chunks
    C = within_chunklet_covariance(X, chunks)
    total = np.cov(X[chunks >= 0], rowvar=False)
    # The paper's reduction: smallest eigenvalues of S_t⁻¹ C; M = A (AᵀCA)⁻¹ Aᵀ.
    values, vectors = np.linalg.eig(np.linalg.solve(total, C))
    A = vectors[:, np.argsort(values.real)[:4]].real
    oracle = A @ np.linalg.inv(A.T @ C @ A) @ A.T
    model = RCA(n_components=4).fit(X, chunks=chunks)
    assert model.components_.shape == (4, X.shape[1])
    assert relative_difference(model.get_mahalanobis_matrix(), oracle) < 1e-10


def test_rca_from_labels_draws_chunklets_of_one_class():
    X, y = scaled(load_iris)
    model = RCA(n_chunks=30, chunk_size=3, random_state=0).fit(X, y)
    chunks = model.chunklets_
    assert np.bincount(chunks[chunks >= 0]).tolist() == [3] * 30
    assert all(len(set(y[chunks == c])) == 1 for c in range(30))
    oracle = np.linalg.inv(within_chunklet_covariance(X, chunks))
    assert relative_difference(model.get_mahalanobis_matrix(), oracle) < 1e-10
    # Default: every class cut into chunklets of chunk_size.
    assert RCA(random_state=0).fit(X, y).chunklets_.max() + 1 == 75


def test_rca_from_similar_pairs_uses_their_connected_components():
    X, _ = scaled(load_iris)
    pairs = [[0, 1], [1, 2], [10, 11], [20, 21], [30, 31], [40, 41], [0, 50]]
    labels = [1, 1, 1, 1, 1, 1, -1]
    model = RCA().fit(X, constraints=PairConstraints(pairs, labels))
    chunks = np.full(len(X), -1)
    chunks[[0, 1, 2]], chunks[[10, 11]], chunks[[20, 21]] = 0, 1, 2
    chunks[[30, 31]], chunks[[40, 41]] = 3, 4
    assert relative_difference(model.get_mahalanobis_matrix(),
                               RCA().fit(X, chunks=chunks).get_mahalanobis_matrix()) < 1e-12


def test_rca_inverts_a_direction_of_small_scale():
    """A fifth feature almost the sum of two others, what is left of it mostly between the
    classes (a log-transformed ratio of two measurements can be so): within the chunklets
    C's variance along it is 1e-11 of its largest, yet 1e-3 of the samples' own variance
    there. RCA is affine-invariant, so that direction is small, not flat: M inverts C.
    (Judged against C's largest eigenvalue, it used to be refused as rank deficient.)"""
    X, y = scaled(load_iris)
    rng = np.random.RandomState(0)
    X = np.c_[X, X[:, 0] + X[:, 1] + 1e-4 * (y + 0.03 * rng.randn(len(y)))]
    chunks = np.empty(len(y), dtype=int)
    chunks[np.argsort(y, kind="stable")] = np.arange(len(y)) // 2  # pairs of one class
    means = np.array([X[chunks == c].mean(axis=0) for c in range(chunks.max() + 1)])
    within = (X - means[chunks]).T @ (X - means[chunks]) / len(X)
    values = linalg.eigvalsh(within)
    assert values[0] < 1e-10 * values[-1]
    M = RCA().fit(X, chunks=chunks).get_mahalanobis_matrix()
    # Inverting C loses its condition number times the rounding error.
    np.testing.assert_allclose(M @ within, np.eye(5),
                               atol=100 * np.finfo(float).eps * values[-1] / values[0])


def test_rca_bad_input():
    X, y = scaled(load_iris)
    with pytest.raises(ValueError, match="chunks has 3 labels but X has 150 rows"):
        RCA().fit(X, chunks=[0, 0, 1])
    with pytest.raises(ValueError, match="chunks holds -2"):
        RCA().fit(X, chunks=np.r_[-2, np.zeros(149, int)])
    with pytest.raises(ValueError, match="no chunklet of two rows"):
        RCA().fit(X, chunks=np.arange(150))
    with pytest.raises(ValueError, match="not both"):
        RCA().fit(X, chunks=np.zeros(150, int), constraints=PairConstraints([[0, 1]], [1]))
    with pytest.raises(ValueError, match="at most 75"):
        RCA(n_chunks=100).fit(X, y)
    # Two chunklets of two rows: rank 2 < 4 features, so no inverse (metric-learn: NaN).
    chunks = np.full(150, -1)
    chunks[:4] = [0, 0, 1, 1]
    with pytest.raises(ValueError, match="rank 2 .* n_components <= 2"):
        RCA().fit(X, chunks=chunks)


# --- LFDA (Sugiyama, 2007, §3) ------------------------------------------------------

def lfda_scatters_oracle(X, y, k):
    """S_w, S_b = ½ Σ_ij W_ij (x_i − x_j)(x_i − x_j)ᵀ with the paper's dense n × n weights."""
    n = len(X)
    distances = ((X[:, None] - X[None]) ** 2).sum(-1)
    sigma = np.zeros(n)
    for i in range(n):
        same = np.flatnonzero(y == y[i])
        sigma[i] = np.sqrt(np.sort(distances[i, same])[min(k, len(same) - 1)])
    A = np.exp(-distances / np.outer(sigma, sigma))
    same_class = y[:, None] == y[None, :]
    n_c = np.array([np.sum(y == label) for label in y])[:, None]
    W_w = np.where(same_class, A / n_c, 0.0)
    W_b = np.where(same_class, A * (1.0 / n - 1.0 / n_c), 1.0 / n)
    differences = X[:, None] - X[None]
    S_w = 0.5 * np.einsum("ij,ijk,ijl->kl", W_w, differences, differences)
    S_b = 0.5 * np.einsum("ij,ijk,ijl->kl", W_b, differences, differences)
    return S_b, S_w


@pytest.mark.parametrize("load", [load_iris, load_wine])
@pytest.mark.parametrize("n_components", [None, 2])
def test_lfda_equals_the_dense_oracle(load, n_components):
    X, y = scaled(load)
    S_b, S_w = lfda_scatters_oracle(X, y, LFDA().k)
    values, vectors = linalg.eigh(S_b, S_w)
    rows = n_components or X.shape[1]
    values, vectors = values[::-1][:rows], vectors[:, ::-1][:, :rows]
    model = LFDA(n_components=n_components).fit(X, y)
    np.testing.assert_allclose(model.eigenvalues_, values, rtol=1e-10)
    weighted = (vectors * values) @ vectors.T
    assert relative_difference(model.get_mahalanobis_matrix(), weighted) < 1e-10
    plain = LFDA(n_components=n_components, embedding_type="plain").fit(X, y)
    assert relative_difference(plain.get_mahalanobis_matrix(), vectors @ vectors.T) < 1e-10
    ortho = LFDA(n_components=n_components, embedding_type="orthonormalized").fit(X, y)
    Q = linalg.orth(vectors)
    assert relative_difference(ortho.get_mahalanobis_matrix(), Q @ Q.T) < 1e-10


def test_lfda_scatters_in_row_blocks_equal_one_block(monkeypatch):
    X, y = scaled(load_wine)
    codes = np.unique(y, return_inverse=True)[1]
    whole = _lfda.local_scatters(X, codes, 7)
    monkeypatch.setattr(_lfda, "_BLOCK_ENTRIES", 300)
    blocked = _lfda.local_scatters(X, codes, 7)
    for A, B in zip(whole, blocked):
        assert relative_difference(A, B) < 1e-12


def test_lfda_small_class_takes_its_farthest_member():
    X, y = scaled(load_iris)
    keep = np.r_[0:3, 50:150]  # class 0 keeps 3 samples: k = 20 becomes 2 there only
    X, y = X[keep], y[keep]
    S_b, S_w = lfda_scatters_oracle(X, y, 20)
    values = linalg.eigh(S_b, S_w, eigvals_only=True)[::-1]
    np.testing.assert_allclose(LFDA().fit(X, y).eigenvalues_, values, rtol=1e-10)


def test_lfda_bad_input():
    X, y = scaled(load_iris)
    with pytest.raises(ValueError, match="n_components=5 must be at most n_features=4"):
        LFDA(n_components=5).fit(X, y)
    with pytest.raises(ValueError, match="n_components=4 exceeds the 3 dimensions"):
        LFDA(n_components=4).fit(np.c_[X[:, :3], X[:, 0] + X[:, 1]], y)
    with pytest.raises(ValueError, match="Unknown label type"):
        LFDA().fit(X, np.linspace(0, 1, len(X)))


# --- learners of class labels inside the tuple classifiers ---------------------------

def iris_pairs():
    X, y = load_iris(return_X_y=True)
    index = np.random.RandomState(0).randint(0, len(X), (400, 2))
    return X[index], np.where(y[index[:, 0]] == y[index[:, 1]], 1, -1)


def test_pairs_classifier_fits_nca_on_the_groups_of_similar_pairs():
    pairs, similar = iris_pairs()
    model = PairsClassifier(NeighborhoodComponentsAnalysis(random_state=0))
    model.fit(pairs[:300], similar[:300])
    assert model.learner_.components_.shape == (4, 4)
    assert model.score(pairs[300:], similar[300:]) > 0.8
    lfda = PairsClassifier(LFDA()).fit(pairs[:300], similar[:300])
    assert lfda.score(pairs[300:], similar[300:]) > 0.8


def test_tuple_classes_are_the_connected_components_of_the_similar_links():
    X = np.random.RandomState(0).randn(6, 3)
    pairs = X[[[0, 1], [1, 2], [3, 4], [0, 5]]]
    model = PairsClassifier(RecordingClasses()).fit(pairs, [1, 1, 1, -1])
    # Points in order of first appearance: 0 1 2 3 4 5; 5 is joined to 0 only by -1.
    seen = model.learner_.classes_seen_
    assert seen[0] == seen[1] == seen[2] and seen[3] == seen[4]
    assert len({seen[0], seen[3], seen[5]}) == 3
    triplets = X[[[0, 1, 3], [1, 2, 4]]]
    seen = TripletsClassifier(RecordingClasses()).fit(triplets).learner_.classes_seen_
    # In order of first appearance: X0 X1 X3 X2 X4, linked 0–1 and 1–2 (X1–X2).
    assert seen[0] == seen[1] == seen[3] and len(set(seen.tolist())) == 3


def test_tuple_classifiers_name_what_a_learner_lacks():
    pairs, similar = iris_pairs()
    with pytest.raises(TypeError, match="MLKR learns from continuous targets"):
        PairsClassifier(MLKR()).fit(pairs, similar)
    with pytest.raises(TypeError, match="StandardScaler has no components_"):
        PairsClassifier(StandardScaler()).fit(pairs, similar)
    X, y = load_iris(return_X_y=True)
    triplets = X[triplets_from_labels(X, y).triplets]
    model = TripletsClassifier(NeighborhoodComponentsAnalysis(random_state=0))
    assert model.fit(triplets[::2]).score(triplets[1::2]) > 0.9


class RecordingClasses(NeighborhoodComponentsAnalysis):
    """NCA that keeps the class labels it was fitted with."""

    def fit(self, X, y):
        self.classes_seen_ = np.asarray(y)
        self.components_ = np.eye(X.shape[1])
        return self


def _squared_distances(metric, X):
    Z = metric.transform(X)
    return ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1)


@pytest.mark.parametrize("orthonormal", [True, False])
def test_span_coordinates_span_the_eigenvectors_of_nonzero_variance(orthonormal):
    """The pivoted Cholesky span is the span of the scatter's eigenvectors with variance,
    on orthonormal axes or on 6 of the 10 features (the others written in them);
    ``project`` and ``lift`` are ``X @ C`` and ``L @ Cᵀ``. None when the rows vary along
    every feature, or along none."""
    rng = np.random.RandomState(0)
    A = rng.randn(40, 6)
    X = np.c_[A, A @ rng.randn(6, 3), np.full(40, 2.0)]
    span = span_coordinates(X, orthonormal=orthonormal)
    C = span.lift(np.eye(6)).T
    values, vectors = linalg.eigh(np.cov(X, rowvar=False))
    kept = vectors[:, values > 1e-10 * values.max()]
    assert span.dimension == 6 and C.shape == (10, 6)
    np.testing.assert_allclose(kept @ kept.T @ C, C, rtol=0, atol=1e-12)
    assert np.linalg.matrix_rank(C) == 6
    if orthonormal:
        np.testing.assert_allclose(C.T @ C, np.eye(6), rtol=0, atol=1e-14)
    else:
        np.testing.assert_array_equal(C[span.kept], np.eye(6))
    np.testing.assert_allclose(span.project(X), X @ C, rtol=1e-13, atol=1e-13)
    L = rng.randn(3, 6)
    np.testing.assert_allclose(span.lift(L), L @ C.T, rtol=1e-13, atol=1e-13)
    # The features as columns 2, 4, ..., 20 of a map of 23 columns, zero on the others.
    columns, wider = 2 * np.arange(1, 11), np.zeros((3, 23))
    wider[:, columns] = span.lift(L)
    np.testing.assert_array_equal(span.lift(L, columns, 23), wider)
    S = np.cov(rng.randn(20, 10), rowvar=False)
    np.testing.assert_allclose(span.reduce(S), C.T @ S @ C, rtol=1e-13, atol=1e-13)
    assert span_coordinates(A) is None and span_coordinates(np.ones((5, 3))) is None


def test_lfda_scatters_span_what_the_centred_rows_span():
    """With two classes or more S_b + S_w has the null space of X's scatter, also where
    the local affinities vanish (a far outlier, a sample without a local scale)."""
    rng = np.random.RandomState(0)
    A = rng.randn(60, 5)
    A[0] *= 1e3
    A[1:3] = A[3]
    X = np.c_[A, A[:, :2] @ rng.randn(2, 2)]
    codes = np.repeat(np.arange(3), 20)
    between, within = _lfda.local_scatters(X, codes, 1)
    ours = _lfda.span_of_scatter(between + within, orthonormal=True).axes
    theirs = span_coordinates(X, orthonormal=True).axes
    np.testing.assert_allclose(ours @ ours.T, theirs @ theirs.T, rtol=0, atol=1e-10)


def test_oriented_columns_make_the_first_largest_magnitude_entry_positive():
    """The NumPy rule it implements without an |v| temporary, ties included."""
    rng = np.random.RandomState(0)
    for _ in range(200):
        v = rng.randint(-3, 4, size=rng.randint(1, 6, size=2)).astype(float)
        largest = v[np.argmax(np.abs(v), axis=0), np.arange(v.shape[1])]
        np.testing.assert_array_equal(oriented_columns(v),
                                      v * np.where(largest < 0, -1.0, 1.0))


@pytest.mark.parametrize("extra", ["constant", "sum of two"])
def test_rca_and_lfda_learn_in_the_span_of_x(extra):
    """A constant or linearly dependent feature changes nothing: same distances as on X.

    RCA's metric is the inverse within-chunklet covariance, invariant under any
    invertible map of the span; LFDA's local scales come from Euclidean distances,
    which a constant column leaves as they are.
    """
    X, y = scaled(load_iris)
    column = np.full(len(X), 3.0) if extra == "constant" else X[:, 0] + X[:, 1]
    wider = np.c_[X, column]
    chunks = np.repeat(np.arange(30), 5)
    np.testing.assert_allclose(
        _squared_distances(RCA().fit(wider, chunks=chunks), wider),
        _squared_distances(RCA().fit(X, chunks=chunks), X), rtol=1e-8, atol=1e-10)
    lfda = LFDA().fit(wider, y)
    null = np.r_[0.0, 0.0, 0.0, 0.0, 1.0] if extra == "constant" else np.r_[1, 1, 0, 0, -1]
    M = lfda.get_mahalanobis_matrix()
    np.testing.assert_allclose(M @ null, 0.0, atol=1e-10 * np.abs(M).max())
    assert lfda.components_.shape == (4, 5)
    if extra == "constant":
        np.testing.assert_allclose(_squared_distances(lfda, wider),
                                   _squared_distances(LFDA().fit(X, y), X),
                                   rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="RCA: n_components=5 exceeds the 4 dimensions"):
        RCA(n_components=5).fit(wider, chunks=chunks)
