/* The eigen update's O(k²) loops at the CPU's vector width: one build for every x86-64.
 *
 * Each function is built for baseline x86-64 and for x86-64-v3 (_clones.h); the loops
 * are bound by one division per (pole, root), which AVX2 does four at a time. Built
 * with -ffp-contract=off (no FMA), both clones give bit-identical results.
 */
#ifndef PSDMETRIC_EIGEN_SIMD_H
#define PSDMETRIC_EIGEN_SIMD_H

#include <math.h>
#include <stddef.h>

#include "_clones.h"

/* For each active root a (ascending root indices act[a], at p_org[a] + tau[a]), the
 * sums Σ y²_j x and Σ y²_j x², x = 1 / ((p_j − p_org[a]) − tau[a]), over the poles
 * j ≤ act[a] (psi, dpsi) and j > act[a] (phi, dphi); roots innermost.
 */
PSDMETRIC_CLONES
static void psdmetric_secular_sums(ptrdiff_t k, ptrdiff_t na, const double *__restrict p,
                                   const double *__restrict y_squared,
                                   const ptrdiff_t *__restrict act,
                                   const double *__restrict p_org,
                                   const double *__restrict tau, double *__restrict psi,
                                   double *__restrict dpsi, double *__restrict phi,
                                   double *__restrict dphi)
{
    ptrdiff_t a, j, split = 0;
    for (a = 0; a < na; a++) {
        psi[a] = 0.0;
        dpsi[a] = 0.0;
        phi[a] = 0.0;
        dphi[a] = 0.0;
    }
    for (j = 0; j < k; j++) {
        const double pj = p[j];
        const double yj = y_squared[j];
        while (split < na && act[split] < j)
            split++;
        for (a = 0; a < split; a++) {
            const double x = 1.0 / ((pj - p_org[a]) - tau[a]);
            const double xy = yj * x;
            phi[a] += xy;
            dphi[a] += xy * x;
        }
        for (a = split; a < na; a++) {
            const double x = 1.0 / ((pj - p_org[a]) - tau[a]);
            const double xy = yj * x;
            psi[a] += xy;
            dpsi[a] += xy * x;
        }
    }
}

/* Eigenvectors of diag(p) + ρ y yᵀ by Gu and Eisenstat, column-major S[j + i k]
 * (pole j, root i = p_org[i] + tau[i]): ŵ_j from Löwner's formula,
 * ρ ŵ_j² = −Π_i (p_j − λ_i) / Π_{i≠j} (p_j − p_i), one ratio per root, then column i is
 * (p − λ_i)⁻¹ ŵ normalised; every p_j − λ_i = (p_j − p_org[i]) − tau[i] is exact.
 * prod is a work array of k entries; k ≥ 2.
 */
PSDMETRIC_CLONES
static void psdmetric_cauchy_vectors(ptrdiff_t k, const double *__restrict p,
                                     const double *__restrict p_org,
                                     const double *__restrict tau,
                                     const double *__restrict y, double *__restrict S,
                                     double *__restrict prod)
{
    ptrdiff_t i, j;
    for (j = 0; j < k; j++)
        prod[j] = (p[j] - p_org[j]) - tau[j];
    for (i = 0; i < k; i++) {
        double *__restrict col = S + i * k;
        const double oi = p_org[i], ti = tau[i], pi = p[i];
        for (j = 0; j < k; j++)
            col[j] = (p[j] - oi) - ti;
        for (j = 0; j < i; j++)
            prod[j] *= col[j] / (p[j] - pi);
        for (j = i + 1; j < k; j++)
            prod[j] *= col[j] / (p[j] - pi);
    }
    for (j = 0; j < k; j++)
        prod[j] = y[j] >= 0.0 ? sqrt(fabs(prod[j])) : -sqrt(fabs(prod[j]));
    for (i = 0; i < k; i++) {
        double *__restrict col = S + i * k;
        double norm = 0.0;
        for (j = 0; j < k; j++) {
            col[j] = prod[j] / col[j];
            norm += col[j] * col[j];
        }
        norm = 1.0 / sqrt(norm);
        for (j = 0; j < k; j++)
            col[j] *= norm;
    }
}

/* Σ_ij wt_i wt_j (e^λi − e^λj)/(λi − λj) over the m eigenvalues lam (ex = e^{lam − max}):
 * the Fréchet derivative of wᵀe^M w along w wᵀ, times e^{−max}. Below dd_gap the
 * divided difference is the midpoint value. Branch-free (both sides computed, then
 * selected): built with -fno-trapping-math, the inner loop vectorises. acc is a work
 * array of m entries.
 */
PSDMETRIC_CLONES
static double psdmetric_exp_frechet(ptrdiff_t m, const double *__restrict lam,
                                    const double *__restrict ex,
                                    const double *__restrict wt, double *__restrict acc,
                                    double dd_gap)
{
    ptrdiff_t i, j;
    double total = 0.0;
    for (j = 0; j < m; j++)
        acc[j] = 0.0;
    for (i = 0; i < m; i++) {
        const double li = lam[i], ei = ex[i], ci = wt[i];
        for (j = i + 1; j < m; j++) {
            const double gap = li - lam[j];
            const int wide = fabs(gap) > dd_gap;
            const double dd = (ei - ex[j]) / (wide ? gap : 1.0);
            acc[j] += ci * (wide ? dd : 0.5 * (ei + ex[j]));
        }
    }
    for (j = 0; j < m; j++)
        total += wt[j] * (2.0 * acc[j] + wt[j] * ex[j]);
    return total;
}

#endif
