# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""MLKR's kernels: the rows of ``W`` from their Gram rows (squared distances, the
leave-one-out softmax, the prediction, its error and the gradient's weights), and the
symmetric steps around them (the Gram product's lower triangle, its rows mirrored,
``W + Wᵀ`` folded, the accumulating GEMM).

NumPy would make a dozen passes over a chunk of rows (and a temporary of its size);
here each row is swept while it sits in cache, twice before NumPy's vectorised ``exp``
and twice after. ``tests/test_mlkr.py`` holds the NumPy version these loops must match.
"""

from scipy.linalg.cython_blas cimport dgemm, dsyrk

# Weights under this (relative to the row's largest, 1) are zero in every sum, and their
# products would go subnormal and slow every operation after: they are zeroed.
cdef double _SMALLEST = 1e-260
# Exponents are raised to this (a normal weight under _SMALLEST): NumPy's exp takes a
# slow path for -inf and for underflow.
cdef double _FLOOR = -700.0
# Entries of W below this are flushed to zero: they count in no gradient sum unless the
# loss is itself ~1e-500, and as subnormals they would slow the GEMMs threefold.
cdef double _FLUSH = 1e-250
# Columns of the tiles the transposing loops sweep: a tile's rows stay in cache.
cdef enum:
    _TILE = 64

# The row loops are C at the CPU's vector width (``_mlkr_simd.h``).
cdef extern from "_mlkr_simd.h" nogil:
    void psdmetric_mlkr_exponent_rows(double *block, const double *norms, Py_ssize_t start,
                                      Py_ssize_t n_rows, Py_ssize_t n, double floor_)
    double psdmetric_mlkr_weight_rows(double *block, const double *y, Py_ssize_t start,
                                      Py_ssize_t n_rows, Py_ssize_t n, double *column_sums,
                                      double smallest, double flush)


def kernel_exponents(double[:, ::1] block, const double[::1] norms, Py_ssize_t start):
    """Turn ``block = Z[rows] Zᵀ`` (rows ``start …``) into the softmax exponents in place:
    ``−‖z_i − z_j‖²`` minus its largest over ``j ≠ i``, at least ``_FLOOR``, and
    ``_FLOOR`` at ``j = i``."""
    if block.shape[0] == 0:
        return
    with nogil:
        psdmetric_mlkr_exponent_rows(&block[0, 0], &norms[0], start, block.shape[0],
                                     block.shape[1], _FLOOR)


def kernel_weights(double[:, ::1] block, const double[::1] y, Py_ssize_t start,
                   double[::1] column_sums):
    """Turn ``block = exp(exponents)`` (rows ``start …``) into ``W`` in place.

    ``W_ij = p_ij (ŷ_i − y_i)(y_j − ŷ_i)``, ``p_ij`` the block's rows, zero under
    ``_SMALLEST``, normalised to sum to 1; entries of ``W`` under ``_FLUSH`` zero.
    Adds the column sums of ``W`` into ``column_sums`` and returns the block's
    ``Σ_i (ŷ_i − y_i)²``.
    """
    cdef double loss = 0.0
    if block.shape[0] == 0:
        return loss
    with nogil:
        loss = psdmetric_mlkr_weight_rows(&block[0, 0], &y[0], start, block.shape[0],
                                          block.shape[1], &column_sums[0], _SMALLEST, _FLUSH)
    return loss


def gram_lower(const double[:, ::1] Z, double[:, ::1] block):
    """The lower triangle (diagonal included) of ``block = Z Zᵀ``, by one SYRK: half the
    flops of the product. The upper triangle is left as it was."""
    cdef int n = Z.shape[0], d = Z.shape[1], ldb = block.shape[1]
    cdef double one = 1.0, zero = 0.0
    cdef char upper = b"U", transpose = b"T"
    if n == 0 or d == 0:
        return
    with nogil:  # column-major, Zᵀ is d × n and the row-major lower triangle its upper
        dsyrk(&upper, &transpose, &n, &d, &one, <double*>&Z[0, 0], &d, &zero,
              &block[0, 0], &ldb)


def mirror_rows(double[:, ::1] block, Py_ssize_t first, Py_ssize_t stop):
    """Rows ``first … stop − 1`` above the diagonal copied from below it:
    ``block[i, j] = block[j, i]`` for ``j > i``, in tiles of ``_TILE`` columns (the
    tile's rows ``j`` stay in cache while the chunk's rows are written along)."""
    cdef Py_ssize_t n = block.shape[1], tile, i, j
    with nogil:
        tile = first
        while tile < n:
            for i in range(first, stop):
                for j in range(max(tile, i + 1), min(tile + _TILE, n)):
                    block[i, j] = block[j, i]
            tile += _TILE


def fold_rows(double[:, ::1] block, Py_ssize_t first, Py_ssize_t stop):
    """``W + Wᵀ`` into rows ``first … stop − 1`` left of the diagonal block and into
    the whole diagonal block, in tiles of ``_TILE`` columns; the rows above ``first``
    keep their ``W`` right of it (the later rows' transposes). Rows ``first …`` must
    hold ``W`` in full."""
    cdef Py_ssize_t tile, i, j
    cdef double value
    with nogil:
        tile = 0
        while tile < first:
            for i in range(first, stop):
                for j in range(tile, min(tile + _TILE, first)):
                    block[i, j] += block[j, i]
            tile += _TILE
        for i in range(first, stop):
            block[i, i] *= 2.0
            for j in range(first, i):
                value = block[i, j] + block[j, i]
                block[i, j] = value
                block[j, i] = value


def add_product(double[:, :] out, const double[:, :] a, const double[:, :] b,
                bint transpose_a):
    """``out += op(a) b`` by one GEMM, ``op(a)`` ``aᵀ`` or ``a``; row-major views whose
    rows may be longer (the leading dimension), entries adjacent along each row."""
    cdef int m = out.shape[0], p = out.shape[1], k = b.shape[0]
    cdef int ldo = out.strides[0] // 8, lda = a.strides[0] // 8, ldb = b.strides[0] // 8
    cdef double one = 1.0
    cdef char no = b"N", yes = b"T"
    cdef Py_ssize_t a_rows = a.shape[1] if transpose_a else a.shape[0]
    cdef Py_ssize_t a_columns = a.shape[0] if transpose_a else a.shape[1]
    if a_rows != m or a_columns != k or b.shape[1] != p:
        raise ValueError("add_product: the shapes of out, op(a) and b do not match.")
    if m == 0 or p == 0 or k == 0:
        return
    if out.strides[1] != 8 or a.strides[1] != 8 or b.strides[1] != 8 or ldo < p \
            or lda < a.shape[1] or ldb < p:
        raise ValueError("add_product needs rows of adjacent entries.")
    with nogil:  # column-major: outᵀ += bᵀ op(a)ᵀ
        dgemm(&no, &yes if transpose_a else &no, &p, &m, &k, &one, <double*>&b[0, 0],
              &ldb, <double*>&a[0, 0], &lda, &one, &out[0, 0], &ldo)
