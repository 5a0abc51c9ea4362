/* The von Neumann Krylov sweep's r×r loops at the CPU's vector width.
 *
 * Small matrix-vector products (r ≈ 50-100) run several times below the machine's
 * rate through OpenBLAS (about 6 µs for r = 100 on the reference machine, against
 * about 1 µs here). Each function is built for baseline x86-64 and for x86-64-v3 (AVX2
 * and FMA), the clone picked at load time (_core/_clones.h).
 */
#ifndef PSDMETRIC_KRYLOV_SIMD_H
#define PSDMETRIC_KRYLOV_SIMD_H

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "../_core/_clones.h"

/* y = L x for a symmetric r×r L stored in full, column-major: y = Σ_j x_j L[:, j].
 * Columns go in fours so that each load and store of y serves four of them. */
PSDMETRIC_CLONES
static void psdmetric_symmetric_product(ptrdiff_t r, const double *__restrict L,
                                        const double *__restrict x, double *__restrict y)
{
    ptrdiff_t i, j = 0;
    for (i = 0; i < r; i++)
        y[i] = 0.0;
    for (; j + 3 < r; j += 4) {
        const double *__restrict c0 = L + j * r;
        const double *__restrict c1 = c0 + r;
        const double *__restrict c2 = c1 + r;
        const double *__restrict c3 = c2 + r;
        const double x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
        for (i = 0; i < r; i++)
            y[i] += c0[i] * x0 + c1[i] * x1 + c2[i] * x2 + c3[i] * x3;
    }
    for (; j < r; j++) {
        const double *__restrict c0 = L + j * r;
        const double x0 = x[j];
        for (i = 0; i < r; i++)
            y[i] += c0[i] * x0;
    }
}

/* L += t q qᵀ on both triangles of the full, column-major r×r L. */
PSDMETRIC_CLONES
static void psdmetric_symmetric_rank_one(ptrdiff_t r, double t, const double *__restrict q,
                                         double *__restrict L)
{
    ptrdiff_t i, j;
    for (j = 0; j < r; j++) {
        double *__restrict column = L + j * r;
        const double s = t * q[j];
        for (i = 0; i < r; i++)
            column[i] += q[i] * s;
    }
}

/* L += t q qᵀ on both triangles, then y = L x: the update deferred from one visit and the
 * next visit's first product in one pass over L (half the traffic of the two apart). */
PSDMETRIC_CLONES
static void psdmetric_rank_one_product(ptrdiff_t r, double t, const double *__restrict q,
                                       double *__restrict L, const double *__restrict x,
                                       double *__restrict y)
{
    ptrdiff_t i, j = 0;
    for (i = 0; i < r; i++)
        y[i] = 0.0;
    for (; j + 3 < r; j += 4) {
        double *__restrict c0 = L + j * r;
        double *__restrict c1 = c0 + r;
        double *__restrict c2 = c1 + r;
        double *__restrict c3 = c2 + r;
        const double x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
        const double s0 = t * q[j], s1 = t * q[j + 1], s2 = t * q[j + 2], s3 = t * q[j + 3];
        for (i = 0; i < r; i++) {
            const double a0 = c0[i] + q[i] * s0, a1 = c1[i] + q[i] * s1;
            const double a2 = c2[i] + q[i] * s2, a3 = c3[i] + q[i] * s3;
            c0[i] = a0;
            c1[i] = a1;
            c2[i] = a2;
            c3[i] = a3;
            y[i] += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3;
        }
    }
    for (; j < r; j++) {
        double *__restrict c0 = L + j * r;
        const double x0 = x[j], s0 = t * q[j];
        for (i = 0; i < r; i++) {
            c0[i] += q[i] * s0;
            y[i] += c0[i] * x0;
        }
    }
}

/* One classical Gram–Schmidt pass: h = Kᵀ w, w -= K h, for the k orthonormal
 * columns of the column-major r×k K. Returns h[k - 1], w's component along the last
 * column, which Lanczos needs as its diagonal entry. */
PSDMETRIC_CLONES
static double psdmetric_orthogonalise(ptrdiff_t r, ptrdiff_t k, const double *__restrict K,
                                      double *__restrict w, double *__restrict h)
{
    ptrdiff_t i, j;
    for (j = 0; j < k; j++) {
        const double *__restrict column = K + j * r;
        double s = 0.0;
#pragma omp simd reduction(+:s)
        for (i = 0; i < r; i++)
            s += column[i] * w[i];
        h[j] = s;
    }
    for (j = 0; j < k; j++) {
        const double *__restrict column = K + j * r;
        const double s = h[j];
        for (i = 0; i < r; i++)
            w[i] -= column[i] * s;
    }
    return h[k - 1];
}

/* Eigenvalues d and first eigenvector components z of the symmetric tridiagonal m×m
 * matrix with diagonal d and subdiagonal e (e[i] couples i and i + 1; e[m - 1] unused),
 * both overwritten. Implicit QL with Wilkinson shifts (Bowdler, Martin, Reinsch &
 * Wilkinson's tql2) in which the rotations update only the first row of the
 * eigenvector matrix, as Golub & Welsch (1969) do for Gauss quadrature: O(m²) work
 * instead of LAPACK's O(m³) for all the vectors. Eigenvalues come unsorted.
 * Returns 0, or -1 if an eigenvalue took more than 60 iterations. */
static int psdmetric_tridiagonal_first_row(ptrdiff_t m, double *__restrict d,
                                           double *__restrict e, double *__restrict z)
{
    ptrdiff_t l, k, i, iterations;
    double g, r, s, c, p, f, b;
    for (i = 0; i < m; i++)
        z[i] = 0.0;
    z[0] = 1.0;
    e[m - 1] = 0.0;
    for (l = 0; l < m; l++) {
        iterations = 0;
        do {
            /* k: the first negligible subdiagonal entry at or after l. */
            for (k = l; k < m - 1; k++)
                if (fabs(e[k]) <= DBL_EPSILON * (fabs(d[k]) + fabs(d[k + 1])))
                    break;
            if (k == l)
                break;
            if (iterations++ == 60)
                return -1;
            g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            r = fabs(g) < 1e150 ? sqrt(g * g + 1.0) : fabs(g);
            g = d[k] - d[l] + e[l] / (g + copysign(r, g));
            s = c = 1.0;
            p = 0.0;
            for (i = k - 1; i >= l; i--) {
                f = s * e[i];
                b = c * e[i];
                /* Not hypot(): f and g are sums of log-eigenvalues, far from overflow,
                 * and glibc's hypot made up a seventh of a fit's time (the shift above
                 * guards the one square that can overflow). */
                r = sqrt(f * f + g * g);
                e[i + 1] = r;
                if (r == 0.0) {
                    /* Underflow: the matrix splits here; restart on the shorter block. */
                    d[i + 1] -= p;
                    e[k] = 0.0;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                f = z[i + 1];
                z[i + 1] = s * z[i] + c * f;
                z[i] = c * z[i] - s * f;
            }
            if (r == 0.0 && i >= l)
                continue;
            d[l] -= p;
            e[l] = g;
            e[k] = 0.0;
        } while (1);
    }
    return 0;
}

#endif
