/* CHOLUPDATEMULT at the CPU's vector width: one build for every x86-64.
 *
 * GCC compiles the function twice, for baseline x86-64 (SSE2) and for x86-64-v3
 * (AVX2 and FMA), and picks the clone once, at load time, from the running CPU.
 * Other compilers and targets build the plain loop.
 */
#ifndef PSDMETRIC_LOGDET_SIMD_H
#define PSDMETRIC_LOGDET_SIMD_H

#include <math.h>
#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) \
    && (__GNUC__ >= 12)
#define PSDMETRIC_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PSDMETRIC_CLONES
#endif

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
static void psdmetric_cholupdatemult(double beta, const double *restrict x,
                                     double *restrict B, ptrdiff_t r,
                                     double *restrict P, double *restrict s)
{
    ptrdiff_t i, j;
    P[0] = 1.0;
    for (i = 0; i < r; i++) {
        P[i + 1] = P[i] + beta * x[i] * x[i];
        s[i] = 0.0;
    }
    for (j = r - 1; j >= 1; j -= 2) {
        double *restrict column = B + j * r;
        double *restrict column2 = column - r;
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

#endif
