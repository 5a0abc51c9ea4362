"""LMNN's objective on a factor ``L``, its gradient, target neighbours and impostors.

The loss of Weinberger & Saul (2009), §3, on ``M = LᵀL``::

    ε(L) = (1 − μ) Σ_(i,j) d²(i, j) + μ Σ_(i,j,l) [1 + d²(i, j) − d²(i, l)]₊

over pull pairs ``(i, j)`` (target neighbours) and triplets ``(i, j, l)`` (``l`` an
impostor of ``i``). Every term is a weighted squared distance, so the gradient with
respect to ``M`` is one weighted sum of outer products ``Σ_p w_p (x_a − x_b)(x_a − x_b)ᵀ
= Xᵀ Bᵀ diag(w) B X``, with ``B`` the sparse pair-by-sample incidence matrix (+1 at
``a``, −1 at ``b``) and ``Bᵀ diag(w) B = D − W`` the graph Laplacian of the pair
weights. With respect to ``L`` it is ``2 L G = 2 ((D − W) X Lᵀ)ᵀ X``: two products
with ``X`` and one compiled pass (``_lmnn_kernels.triplet_loss``) over the pairs'
squared distances, the triplets' margins and ``D − W`` applied pair by pair, never a
d × d matrix per triplet.
"""

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ._lmnn_kernels import close_pairs, triplet_loss

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
    push_start : ndarray of shape (n_push + 1,)
        The triplets of push pair ``p`` (its ``(i, l)``) are those with the pull rows
        ``triplet_pull[push_start[p]:push_start[p + 1]]`` (their ``(i, j)``).
    triplet_pull : ndarray of shape (n_triplets,)
    mu : float
        Weight of the push term; the pull term has ``1 − mu``.
    """

    def __init__(self, X, pull, push, push_start, triplet_pull, mu):
        self.X, self.mu = X, mu
        self.pull = np.ascontiguousarray(pull, dtype=np.intp).reshape(-1, 2)
        self.push = np.ascontiguousarray(push, dtype=np.intp).reshape(-1, 2)
        self.push_start = np.ascontiguousarray(push_start, dtype=np.intp)
        self.triplet_pull = triplet_pull

    @property
    def n_push(self):
        return len(self.push)

    def value_and_gradient(self, L):
        """The loss at ``L`` (n_components, n_features), its gradient and active triplets."""
        Z = self.X @ L.T
        image = np.empty_like(Z)
        value, active = triplet_loss(Z, self.pull, self.push, self.push_start,
                                     self.triplet_pull, self.mu, image=image)
        return value, 2.0 * (image.T @ self.X), active

    def value(self, L):
        """The loss at ``L``."""
        return triplet_loss(self.X @ L.T, self.pull, self.push, self.push_start,
                            self.triplet_pull, self.mu)[0]


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
    # By class (stably): each class's later classes are one slice, not a copy per class.
    order = np.argsort(codes, kind="stable")
    Z, radii = Z[order], radii[order]
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    squared_norms = np.einsum("ij,ij->i", Z, Z)
    for first, others in zip(np.concatenate([[0], bounds[:-1]]), bounds):
        block = max(1, _BLOCK_ENTRIES // (len(Z) - others))
        Z_others = Z[others:]
        for start in range(first, others, block):
            rows = slice(start, min(start + block, others))
            forward, backward = close_pairs(Z[rows] @ Z_others.T, squared_norms[rows],
                                            squared_norms[others:], radii[rows],
                                            radii[others:])
            found_i += [order[start + forward[0]], order[others + backward[1]]]
            found_l += [order[others + forward[1]], order[start + backward[0]]]
    if not found_i:
        return np.empty((0, 2), dtype=np.intp)
    return np.stack([np.concatenate(found_i), np.concatenate(found_l)], axis=1)


def label_objective(X, targets, push, mu):
    """The loss on every target pair and on ``push`` pairs with each target of their ``i``."""
    n_samples, k = targets.shape
    valid = targets >= 0
    pull_index = np.full(targets.shape, -1, dtype=_index_type(np.count_nonzero(valid)))
    pull_index[valid] = np.arange(np.count_nonzero(valid))
    pull = np.stack([np.repeat(np.arange(n_samples), k)[valid.ravel()], targets[valid]],
                    axis=1)
    # Row-major: each push pair's triplets, one per target of its i, follow each other.
    triplet_pull = pull_index[push[:, 0]].ravel()
    push_start = np.concatenate([[0], np.cumsum(valid.sum(axis=1)[push[:, 0]])])
    return TripletObjective(X, pull, push, push_start, triplet_pull[triplet_pull >= 0], mu)


def _index_type(size):
    # Half the memory of the triplet index arrays where the pairs allow it.
    return np.int32 if size < 2**31 else np.intp


def triplet_objective(X, triplets, mu):
    """The loss on explicit triplets: pull on their distinct ``(i, j)``, push on ``(i, l)``."""
    pull, triplet_pull = np.unique(triplets[:, :2], axis=0, return_inverse=True)
    push, triplet_push = np.unique(triplets[:, [0, 2]], axis=0, return_inverse=True)
    order = np.argsort(triplet_push.ravel(), kind="stable")
    push_start = np.concatenate([[0], np.cumsum(np.bincount(triplet_push.ravel(),
                                                            minlength=len(push)))])
    return TripletObjective(X, pull, push, push_start, triplet_pull.ravel()[order], mu)
