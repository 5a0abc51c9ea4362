"""MLKR's leave-one-out kernel-regression loss and its gradient, in BLAS-3 row blocks.

The loss couples every pair of samples, so each evaluation is O(n² · n_components);
it is computed ``_BLOCK_ENTRIES // n`` rows at a time, so memory stays at a few
blocks of that many entries (never an n × n array beyond that bound). Each block's
entries, between its Gram and gradient GEMMs, are set by ``_mlkr_kernels``.
"""

import numpy as np

from ._mlkr_kernels import add_transpose, kernel_exponents, kernel_weights

# Kernel entries held at once per block (32 MiB of float64).
_BLOCK_ENTRIES = 1 << 22


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
    n_samples = len(X)
    Z = X @ L.T
    norms = np.einsum("ij,ij->i", Z, Z)
    step = max(1, _BLOCK_ENTRIES // n_samples)
    # T accumulates Zᵀ (W + Wᵀ), column sums of W give the diagonal term.
    T = np.zeros((Z.shape[1], n_samples))
    column_sums = np.zeros(n_samples)
    loss = 0.0
    for start in range(0, n_samples, step):
        rows = slice(start, min(start + step, n_samples))
        weights = Z[rows] @ Z.T
        kernel_exponents(weights, norms, start)
        np.exp(weights, out=weights)
        loss += kernel_weights(weights, y, start, column_sums)
        if step >= n_samples:  # all of W: one product with W + Wᵀ instead of two
            add_transpose(weights)
            T += Z.T @ weights
        else:
            T += Z[rows].T @ weights
            T[:, rows] += (weights @ Z).T
    T -= Z.T * column_sums
    return loss, 4.0 * (T @ X)
