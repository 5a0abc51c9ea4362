"""MLKR's leave-one-out kernel-regression loss and its gradient, in BLAS-3 row chunks.

The loss couples every pair of samples, so each evaluation is O(n² · n_components).
Up to ``_BLOCK_ENTRIES`` entries, all of ``W`` is held in one n × n array and its
symmetry halves the Gram product and the folding of ``W + Wᵀ``; beyond, it is
computed ``_BLOCK_ENTRIES // n`` rows at a time, so memory stays at a block of that
many entries. Either way the rows go through the kernels (``_mlkr_kernels``) in chunks
of ``_CHUNK_ENTRIES``, which stay in cache from their Gram rows to their share of the
gradient.
"""

import numpy as np

from ._mlkr_kernels import (
    add_product,
    fold_rows,
    gram_lower,
    kernel_exponents,
    kernel_weights,
    mirror_rows,
)

# Kernel entries held at once (32 MiB of float64).
_BLOCK_ENTRIES = 1 << 22
# Entries of a chunk of rows (1 MiB: it stays in cache).
_CHUNK_ENTRIES = 1 << 17


def mlkr_loss(L, X, y):
    """Loss ``Σ_i (ŷ_i − y_i)²`` and its gradient with respect to ``L``.

    ``ŷ_i = Σ_(j≠i) p_ij y_j`` with ``p_ij ∝ exp(−‖L(x_i − x_j)‖²)`` over ``j ≠ i``
    (Weinberger & Tesauro, 2007, eq. 3). With ``W_ij = p_ij (ŷ_i − y_i)(y_j − ŷ_i)``
    (whose rows sum to 0), the gradient is ``4 Zᵀ (W + Wᵀ − diag(1ᵀW)) X``, ``Z = X Lᵀ``.

    Returns
    -------
    loss : float
    gradient : ndarray of the shape of ``L``
    """
    Z = X @ L.T
    norms = np.einsum("ij,ij->i", Z, Z)
    # U accumulates (W + Wᵀ) Z, column sums of W give the diagonal term.
    U = np.zeros_like(Z)
    column_sums = np.zeros(len(Z))
    whole = len(Z) ** 2 <= _BLOCK_ENTRIES
    loss = (_whole if whole else _blocks)(Z, norms, y, U, column_sums)
    U -= column_sums[:, None] * Z
    return loss, 4.0 * (U.T @ X)


def _chunk_weights(rows, norms, y, column_sums, first):
    """``W`` in place of ``rows`` (``Z[first …] Zᵀ`` in full); their loss."""
    kernel_exponents(rows, norms, first)
    np.exp(rows, out=rows)
    return kernel_weights(rows, y, first, column_sums)


def _whole(Z, norms, y, U, column_sums):
    """All of ``W`` in one array: the Gram product's lower triangle, then chunk by chunk
    its rows mirrored, turned into ``W``, folded into ``W + Wᵀ`` left of the diagonal
    (the rows above still hold their ``W`` there) and multiplied into ``U``."""
    n_samples = len(Z)
    block = np.empty((n_samples, n_samples))
    gram_lower(Z, block)
    chunk = max(1, _CHUNK_ENTRIES // n_samples)
    loss = 0.0
    for first in range(0, n_samples, chunk):
        stop = min(first + chunk, n_samples)
        mirror_rows(block, first, stop)
        loss += _chunk_weights(block[first:stop], norms, y, column_sums, first)
        fold_rows(block, first, stop)
        add_product(U[:first], block[first:stop, :first], Z[first:stop], True)
        add_product(U[first:stop], block[first:stop, :stop], Z[:stop], False)
    return loss


def _blocks(Z, norms, y, U, column_sums):
    """``W`` a block of rows at a time, chunk by chunk, each block multiplied into ``U``
    from both sides."""
    n_samples = len(Z)
    step = max(1, _BLOCK_ENTRIES // n_samples)
    chunk = max(1, min(step, _CHUNK_ENTRIES // n_samples))
    loss = 0.0
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        weights = np.empty((rows.stop - start, n_samples))
        for first in range(start, rows.stop, chunk):
            part = weights[first - start:first - start + chunk]
            np.matmul(Z[first:first + len(part)], Z.T, out=part)
            loss += _chunk_weights(part, norms, y, column_sums, first)
        add_product(U, weights, Z[rows], True)
        add_product(U[rows], weights, Z, False)
    return loss
