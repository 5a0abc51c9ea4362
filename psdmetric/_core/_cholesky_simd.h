/* LogDet's projection loops at the CPU's vector width: one build for every x86-64.
 *
 * Each function is built for baseline x86-64 and for x86-64-v3 (AVX2 and FMA) and the
 * clone picked at load time (_clones.h). Pointers are `__restrict` rather than C99
 * `restrict`, which MSVC's C compiler lacks.
 */
#ifndef PSDMETRIC_LOGDET_SIMD_H
#define PSDMETRIC_LOGDET_SIMD_H

#include <math.h>
#include <stddef.h>

#include "_clones.h"

/* B <- B L with L Lᵀ = I + beta x xᵀ; B lower triangular r×r, column-major.
 *
 * Kulis et al., 2009, Alg. 1 reordered column by column. Its recurrence
 * a_{k+1} = a_k / t_k is a chain of dependent divisions; with
 * P_k = 1 + beta Σ_{i≤k} x_i² it reads a_{k+1} = beta / P_k and t_k = P_k / P_{k-1},
 * so only a running sum is sequential. With s[i] = Σ_{k>j} B_old[i, k] x[k] carried
 * down the columns, the update of column j is independent across rows and vectorises.
 * Columns go in pairs so that s is loaded and stored once per two columns.
 * P and s are work arrays of r + 1 and r entries.
 */
PSDMETRIC_CLONES
static void psdmetric_cholupdatemult(double beta, const double *__restrict x,
                                     double *__restrict B, ptrdiff_t r,
                                     double *__restrict P, double *__restrict s)
{
    ptrdiff_t i, j;
    P[0] = 1.0;
    for (i = 0; i < r; i++) {
        P[i + 1] = P[i] + beta * x[i] * x[i];
        s[i] = 0.0;
    }
    for (j = r - 1; j >= 1; j -= 2) {
        double *__restrict column = B + j * r;
        double *__restrict column2 = column - r;
        const double h = sqrt(P[j + 1] / P[j]);
        const double xj = x[j];
        const double coef = beta * xj / P[j + 1];
        const double h2 = sqrt(P[j] / P[j - 1]);
        const double x2 = x[j - 1];
        const double coef2 = beta * x2 / P[j];
        /* Row j - 1 is above column j's diagonal: only column j - 1 has an entry there. */
        const double above = column2[j - 1];
        column2[j - 1] = (above + coef2 * s[j - 1]) * h2;
        s[j - 1] = s[j - 1] + above * x2;
        for (i = j; i < r; i++) {
            const double old = column[i];
            const double old2 = column2[i];
            const double carried = s[i] + old * xj;
            column[i] = (old + coef * s[i]) * h;
            column2[i] = (old2 + coef2 * carried) * h2;
            s[i] = carried + old2 * x2;
        }
    }
    if (j == 0) {
        const double h = sqrt(P[1] / P[0]);
        const double xj = x[0];
        const double coef = beta * xj / P[1];
        for (i = 0; i < r; i++) {
            const double old = B[i];
            B[i] = (old + coef * s[i]) * h;
            s[i] = s[i] + old * xj;
        }
    }
}

/* w = Bᵀ v for lower-triangular r×r B, column-major, over its lower triangle only.
 *
 * Each w[j] is the dot product of column j's rows j..r-1 with v. Columns go in fours
 * so that each load of v serves four of them; the OpenMP SIMD reduction (built with
 * -fopenmp-simd, no threads) lets the compiler split the sums across vector lanes,
 * which plain C forbids.
 */
PSDMETRIC_CLONES
static void psdmetric_lower_transpose_times(const double *__restrict B,
                                            const double *__restrict v,
                                            double *__restrict w, ptrdiff_t r)
{
    ptrdiff_t i, j;
    for (j = 0; j + 4 <= r; j += 4) {
        const double *__restrict c0 = B + j * r;
        const double *__restrict c1 = c0 + r;
        const double *__restrict c2 = c1 + r;
        const double *__restrict c3 = c2 + r;
        /* Rows j..j+2 lie in the triangle's corner of these four columns. */
        double t0 = c0[j] * v[j] + c0[j + 1] * v[j + 1] + c0[j + 2] * v[j + 2];
        double t1 = c1[j + 1] * v[j + 1] + c1[j + 2] * v[j + 2];
        double t2 = c2[j + 2] * v[j + 2];
        double t3 = 0.0;
#pragma omp simd reduction(+:t0, t1, t2, t3)
        for (i = j + 3; i < r; i++) {
            t0 += c0[i] * v[i];
            t1 += c1[i] * v[i];
            t2 += c2[i] * v[i];
            t3 += c3[i] * v[i];
        }
        w[j] = t0;
        w[j + 1] = t1;
        w[j + 2] = t2;
        w[j + 3] = t3;
    }
    for (; j < r; j++) {
        const double *__restrict column = B + j * r;
        double total = 0.0;
#pragma omp simd reduction(+:total)
        for (i = j; i < r; i++)
            total += column[i] * v[i];
        w[j] = total;
    }
}

#endif
