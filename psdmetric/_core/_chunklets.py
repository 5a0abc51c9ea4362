"""Chunklets: groups of samples known to share a class (RCA's side information).

A chunklet is a set of rows of ``X`` of one (unknown) class; every pair inside it is a
similar pair. They come as one chunklet label per row (``-1``: the row is in no
chunklet), drawn from class labels, or as the connected components of similar pairs
(the transitive closure of positive equivalence constraints).
"""

from dataclasses import dataclass
import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.utils import check_random_state


@dataclass(frozen=True)
class Chunklets:
    """One chunklet label per row of ``X``; ``-1`` marks a row in no chunklet.

    Parameters
    ----------
    chunks : array-like of shape (n_samples,)
        Integer chunklet label of each row of ``X``: rows with the same label ``>= 0``
        share a class; ``-1``: in no chunklet.

    Attributes
    ----------
    chunks : ndarray of shape (n_samples,)
        The chunklets renumbered ``0 .. n_chunklets − 1`` in order of their labels;
        ``-1`` where ``chunks`` is ``-1``. Chunklets of a single row are ``-1`` too (they
        carry no information).
    n_chunklets : int
        Number of chunklets of two rows or more.
    """

    chunks: np.ndarray

    def __post_init__(self):
        chunks = np.asarray(self.chunks)
        if chunks.ndim != 1 or chunks.size == 0:
            raise ValueError(f"chunks must be a non-empty 1-D array of chunklet labels, one "
                             f"per row of X; got shape {chunks.shape}.")
        if chunks.dtype.kind not in "iu":
            if chunks.dtype.kind != "f" or not np.all(chunks == np.round(chunks)):
                raise TypeError(f"chunks must hold integer chunklet labels (-1: none); got "
                                f"dtype {chunks.dtype}.")
        chunks = chunks.astype(np.intp)
        if np.any(chunks < -1):
            raise ValueError(f"chunks holds {chunks.min()}; chunklet labels are >= 0, or -1 "
                             "for a row in no chunklet.")
        labels, codes, counts = np.unique(chunks, return_inverse=True, return_counts=True)
        keep = (labels >= 0) & (counts >= 2)
        renumber = np.where(keep, np.cumsum(keep) - 1, -1)
        codes = renumber[codes.ravel()]
        if not keep.any():
            raise ValueError("chunks has no chunklet of two rows or more, so nothing can be "
                             "learned; give rows of one class the same label >= 0.")
        object.__setattr__(self, "chunks", np.ascontiguousarray(codes))

    @property
    def n_chunklets(self):
        return int(self.chunks.max()) + 1

    @property
    def pairs(self):
        """Similar pairs the chunklets imply: each member with its chunklet's first row."""
        members = np.flatnonzero(self.chunks >= 0)
        first = members[np.unique(self.chunks[members], return_index=True)[1]]
        leaders = first[self.chunks[members]]
        keep = leaders != members
        return np.column_stack([leaders[keep], members[keep]])

    label_parameters = ("n_chunks", "chunk_size")

    @classmethod
    def from_labels(cls, X, y, *, n_chunks=None, chunk_size=2, random_state=None):
        """Chunklets of ``chunk_size`` rows of one class, drawn at random from labels.

        Each row joins at most one chunklet. Classes are drawn uniformly, as in
        metric-learn's ``Constraints.chunks``; ``n_chunks=None`` takes every
        chunklet the classes hold (each class cut into ``chunk_size`` groups, the
        remainder left out).

        Returns
        -------
        chunklets : Chunklets
        """
        rng = check_random_state(random_state)
        # Classes numbered by first appearance in y, so any encoding of them draws alike.
        _, first, codes = np.unique(np.asarray(y), return_index=True, return_inverse=True)
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        codes = rank[codes.ravel()]
        members = [rng.permutation(np.flatnonzero(codes == c)) for c in range(codes.max() + 1)]
        available = sum(len(rows) // chunk_size for rows in members)
        if n_chunks is None:
            n_chunks = available
        if n_chunks > available or available == 0:
            raise ValueError(
                f"n_chunks={n_chunks} chunklets of chunk_size={chunk_size} rows of one "
                f"class were asked for, but the classes hold at most {available}; lower "
                "n_chunks or chunk_size."
            )
        chunks = np.full(len(codes), -1, dtype=np.intp)
        left = np.array([len(rows) // chunk_size for rows in members])
        for label in range(n_chunks):
            # A class with a chunklet left, drawn uniformly among those.
            c = rng.choice(np.flatnonzero(left > 0))
            left[c] -= 1
            chunks[members[c][left[c] * chunk_size:(left[c] + 1) * chunk_size]] = label
        return cls(chunks)

    @classmethod
    def from_pairs(cls, pairs, labels, n_samples):
        """Chunklets as the connected components of the similar (+1) pairs.

        Returns
        -------
        chunklets : Chunklets
        """
        similar = np.asarray(pairs)[np.asarray(labels) == 1]
        if len(similar) == 0:
            raise ValueError("the constraints hold no similar pair (label +1); chunklets "
                             "are built from similar pairs only.")
        graph = coo_matrix((np.ones(len(similar)), (similar[:, 0], similar[:, 1])),
                           shape=(n_samples, n_samples))
        components = connected_components(graph, directed=False)[1]
        sizes = np.bincount(components)
        return cls(np.where(sizes[components] >= 2, components, -1))
