"""LMNN's objective on a factor ``L``, its gradient, target neighbours and impostors.

The loss of Weinberger & Saul (2009), §3, on ``M = LᵀL``::

    ε(L) = (1 − μ) Σ_(i,j) d²(i, j) + μ Σ_(i,j,l) [1 + d²(i, j) − d²(i, l)]₊

over pull pairs ``(i, j)`` (target neighbours) and triplets ``(i, j, l)`` (``l`` an
impostor of ``i``). Every term is a weighted squared distance, so the gradient with
respect to ``M`` is one weighted sum of outer products ``Σ_p w_p (x_a − x_b)(x_a − x_b)ᵀ
= Xᵀ Bᵀ diag(w) B X``, with ``B`` the sparse pair-by-sample incidence matrix (+1 at
``a``, −1 at ``b``) and ``Bᵀ diag(w) B = D − W`` the graph Laplacian of the pair
weights. With respect to ``L`` it is ``2 L G = 2 ((D − W) X Lᵀ)ᵀ X``: two products
with ``X``, the pairs' squared distances and one sparse product with ``D − W`` (its
pattern built once per impostor set), never a d × d matrix per triplet.
"""

import numpy as np
from scipy import sparse
from sklearn.neighbors import NearestNeighbors

from .._core import pair_squared_distances

# Bound on the entries of one block of the impostor search's distance matrix (32 MB).
_BLOCK_ENTRIES = 1 << 22


class TripletObjective:
    """The loss on fixed pull pairs, push pairs and triplets built from them.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    pull : ndarray of shape (n_pull, 2)
        Pairs ``(i, j)`` of the pull term.
    push : ndarray of shape (n_push, 2)
        Pairs ``(i, l)`` a triplet may push apart.
    triplet_pull, triplet_push : ndarray of shape (n_triplets,)
        Each triplet's row in ``pull`` (its ``(i, j)``) and in ``push`` (its ``(i, l)``).
    mu : float
        Weight of the push term; the pull term has ``1 − mu``.
    """

    def __init__(self, X, pull, push, triplet_pull, triplet_push, mu):
        self.X, self.mu = X, mu
        self.pull = np.ascontiguousarray(pull, dtype=np.intp).reshape(-1, 2)
        self.push = np.ascontiguousarray(push, dtype=np.intp).reshape(-1, 2)
        self.triplet_pull, self.triplet_push = triplet_pull, triplet_push
        # The Laplacian D − W of the pair weights as one sparse pattern, built once: each
        # pair (a, b) is −w at (a, b) and at (b, a) (repeated entries add up), the degrees
        # are the diagonal; an evaluation sets the entries and leaves out the zeros.
        pairs = np.concatenate([self.pull, self.push])
        n_samples = len(X)
        self._ends = pairs.T.ravel()
        rows = np.concatenate([self._ends, np.arange(n_samples)])
        columns = np.concatenate([pairs[:, 1], pairs[:, 0], np.arange(n_samples)])
        self._order = np.argsort(rows, kind="stable")
        self._rows, self._columns = rows[self._order], columns[self._order]

    @property
    def n_push(self):
        return len(self.push)

    def margins(self, Z):
        """Squared pull distances and each triplet's ``1 + d²(i, j) − d²(i, l)`` in ``Z``."""
        pull_squared = pair_squared_distances(Z, self.pull)
        push_squared = pair_squared_distances(Z, self.push)
        # In place: there may be tens of millions of triplets.
        margins = pull_squared.take(self.triplet_pull)
        margins -= push_squared.take(self.triplet_push)
        margins += 1.0
        return pull_squared, margins

    def value_and_gradient(self, L):
        """The loss at ``L`` (n_components, n_features), its gradient and active triplets."""
        Z = self.X @ L.T
        pull_squared, margins = self.margins(Z)
        # Weighted counts instead of boolean indexing: no copy of the triplet indices.
        active = (margins > 0.0).astype(np.float64)
        value = (1.0 - self.mu) * pull_squared.sum() + self.mu * np.dot(margins, active)
        weights = np.empty(len(self.pull) + len(self.push))
        weights[:len(self.pull)] = np.bincount(self.triplet_pull, active, len(self.pull))
        weights[:len(self.pull)] *= self.mu
        weights[:len(self.pull)] += 1.0 - self.mu
        weights[len(self.pull):] = np.bincount(self.triplet_push, active, len(self.push))
        weights[len(self.pull):] *= -self.mu
        n_samples = Z.shape[0]
        twice = np.concatenate([weights, weights])
        entries = np.concatenate([-twice, np.bincount(self._ends, twice, n_samples)])
        entries = entries[self._order]
        # Most push pairs have no active triplet (MNIST: 70-80 %): their zeros are left out.
        kept = entries != 0.0
        indptr = np.concatenate([[0], np.cumsum(np.bincount(self._rows[kept],
                                                            minlength=n_samples))])
        laplacian = sparse.csr_matrix((entries[kept], self._columns[kept], indptr),
                                      shape=(n_samples, n_samples))
        laplacian_image = laplacian @ Z
        gradient = 2.0 * (laplacian_image.T @ self.X)
        return value, gradient, int(active.sum())

    def value(self, L):
        """The loss at ``L``."""
        pull_squared, margins = self.margins(self.X @ L.T)
        return (1.0 - self.mu) * pull_squared.sum() + self.mu * np.maximum(margins, 0.0).sum()


def target_neighbours(Z, codes, n_neighbors):
    """Each sample's ``n_neighbors`` nearest samples of its class in ``Z`` (-1 padded).

    A sample whose class has ``m ≤ n_neighbors`` samples takes the ``m − 1`` others;
    a sample alone in its class has none. A duplicate of the sample is a neighbour
    like any other (at distance 0).
    """
    n_samples = Z.shape[0]
    targets = np.full((n_samples, n_neighbors), -1, dtype=np.intp)
    for code in np.unique(codes):
        members = np.flatnonzero(codes == code)
        k = min(n_neighbors, len(members) - 1)
        if k == 0:
            continue
        search = NearestNeighbors(n_neighbors=k + 1).fit(Z[members])
        found = search.kneighbors(Z[members], return_distance=False)
        # Drop the sample itself; with duplicates it need not come first.
        own = found == np.arange(len(members))[:, None]
        own[~own.any(axis=1), -1] = True
        targets[members, :k] = members[found[~own].reshape(len(members), k)]
    return targets


def impostor_candidates(Z, codes, radii):
    """Directed pairs ``(i, l)`` of different classes with ``‖z_i − z_l‖² < radii[i]``.

    Each class is compared with the classes after it, in blocks of query rows bounded
    by ``_BLOCK_ENTRIES`` distances, and one block yields the pairs of both
    directions: memory is the block plus the pairs found, never n × n.
    """
    found_i, found_l = [], []
    classes = np.unique(codes)
    squared_norms = np.einsum("ij,ij->i", Z, Z)
    for position, code in enumerate(classes[:-1]):
        queries = np.flatnonzero(codes == code)
        others = np.flatnonzero(codes > code)
        block = max(1, _BLOCK_ENTRIES // len(others))
        Z_others, norms_others = Z[others], squared_norms[others]
        for start in range(0, len(queries), block):
            rows = queries[start:start + block]
            squared = squared_norms[rows, None] + norms_others - 2.0 * (Z[rows] @ Z_others.T)
            forward = np.nonzero(squared < radii[rows, None])
            backward = np.nonzero(squared < radii[others][None, :])
            found_i += [rows[forward[0]], others[backward[1]]]
            found_l += [others[forward[1]], rows[backward[0]]]
    if not found_i:
        return np.empty((0, 2), dtype=np.intp)
    return np.stack([np.concatenate(found_i), np.concatenate(found_l)], axis=1)


def label_objective(X, targets, push, mu):
    """The loss on every target pair and on ``push`` pairs with each target of their ``i``."""
    n_samples, k = targets.shape
    valid = targets >= 0
    pull_index = np.full(targets.shape, -1, dtype=np.intp)
    pull_index[valid] = np.arange(np.count_nonzero(valid))
    pull = np.stack([np.repeat(np.arange(n_samples), k)[valid.ravel()], targets[valid]],
                    axis=1)
    triplet_pull = pull_index[push[:, 0]].ravel()
    keep = triplet_pull >= 0
    triplet_push = np.repeat(np.arange(len(push), dtype=_index_type(len(push))), k)[keep]
    triplet_pull = triplet_pull[keep].astype(_index_type(len(pull)))
    return TripletObjective(X, pull, push, triplet_pull, triplet_push, mu)


def _index_type(size):
    # Half the memory of the triplet index arrays where the pairs allow it.
    return np.int32 if size < 2**31 else np.intp


def triplet_objective(X, triplets, mu):
    """The loss on explicit triplets: pull on their distinct ``(i, j)``, push on ``(i, l)``."""
    pull, triplet_pull = np.unique(triplets[:, :2], axis=0, return_inverse=True)
    push, triplet_push = np.unique(triplets[:, [0, 2]], axis=0, return_inverse=True)
    return TripletObjective(X, pull, push, triplet_pull.ravel(), triplet_push.ravel(), mu)
