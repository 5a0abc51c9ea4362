/* MLKR's row loops at the CPU's vector width: one build for every x86-64.
 *
 * Each function is built for baseline x86-64 (SSE2) and for x86-64-v3 (AVX2), the clone
 * picked at load time (_core/_clones.h); the module is built with -ffp-contract=off (no
 * FMA), so both clones give the same bits. Maxima and sums run in
 * eight lanes (j mod 8), so that an entry need not wait for the previous one; GCC
 * vectorises the maxima itself but not the sums, written with its vector extension
 * (plain lanes for other compilers).
 */
#ifndef PSDMETRIC_MLKR_SIMD_H
#define PSDMETRIC_MLKR_SIMD_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "../_core/_clones.h"
#define PSDMETRIC_MAX(a, b) ((a) > (b) ? (a) : (b))

PSDMETRIC_CLONES
static void psdmetric_mlkr_exponent_rows(double *__restrict block,
                                         const double *__restrict norms,
                                         ptrdiff_t start, ptrdiff_t n_rows, ptrdiff_t n,
                                         double floor_)
{
    ptrdiff_t r, j, k;
    for (r = 0; r < n_rows; r++) {
        double *__restrict row = block + r * n;
        const double norm = norms[start + r];
        double lanes[8], largest = -INFINITY;
        for (j = 0; j < n; j++) {
            const double v = 2.0 * row[j] - norm - norms[j];
            row[j] = 0.0 < v ? 0.0 : v;
        }
        row[start + r] = -INFINITY;
        for (k = 0; k < 8; k++)
            lanes[k] = -INFINITY;
        for (j = 0; j + 8 <= n; j += 8)
            for (k = 0; k < 8; k++)
                lanes[k] = PSDMETRIC_MAX(lanes[k], row[j + k]);
        for (; j < n; j++)
            lanes[0] = PSDMETRIC_MAX(lanes[0], row[j]);
        for (k = 0; k < 8; k++)
            largest = PSDMETRIC_MAX(largest, lanes[k]);
        for (j = 0; j < n; j++)
            row[j] = PSDMETRIC_MAX(row[j] - largest, floor_);
    }
}

/* Zero the entries of row under smallest; their sum and their sum weighted by y,
 * lane k over j = k mod 8 (the remainder in lane 0), lanes summed pairwise. */
PSDMETRIC_CLONES
static void psdmetric_mlkr_sums(double *__restrict row, const double *__restrict y,
                                ptrdiff_t n, double smallest, double *sums)
{
    double t[8] = {0.0}, w[8] = {0.0};
    ptrdiff_t j = 0, k;
#if defined(__GNUC__)
    typedef double lanes __attribute__((vector_size(32)));
    typedef long long masks __attribute__((vector_size(32)));
    lanes t0 = {0.0}, t1 = t0, w0 = t0, w1 = t0, a, b, ya, yb;
    for (; j + 8 <= n; j += 8) {
        memcpy(&a, row + j, sizeof a);
        memcpy(&b, row + j + 4, sizeof b);
        memcpy(&ya, y + j, sizeof ya);
        memcpy(&yb, y + j + 4, sizeof yb);
        a = (lanes)((masks)a & (masks)(a >= smallest));
        b = (lanes)((masks)b & (masks)(b >= smallest));
        memcpy(row + j, &a, sizeof a);
        memcpy(row + j + 4, &b, sizeof b);
        t0 += a;
        t1 += b;
        w0 += a * ya;
        w1 += b * yb;
    }
    for (k = 0; k < 4; k++) {
        t[k] = t0[k];
        t[k + 4] = t1[k];
        w[k] = w0[k];
        w[k + 4] = w1[k];
    }
#else
    for (; j + 8 <= n; j += 8)
        for (k = 0; k < 8; k++) {
            row[j + k] = row[j + k] >= smallest ? row[j + k] : 0.0;
            t[k] += row[j + k];
            w[k] += row[j + k] * y[j + k];
        }
#endif
    for (; j < n; j++) {
        row[j] = row[j] >= smallest ? row[j] : 0.0;
        t[0] += row[j];
        w[0] += row[j] * y[j];
    }
    sums[0] = ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
    sums[1] = ((w[0] + w[4]) + (w[1] + w[5])) + ((w[2] + w[6]) + (w[3] + w[7]));
}

PSDMETRIC_CLONES
static double psdmetric_mlkr_weight_rows(double *__restrict block,
                                         const double *__restrict y, ptrdiff_t start,
                                         ptrdiff_t n_rows, ptrdiff_t n,
                                         double *__restrict column_sums,
                                         double smallest, double flush)
{
    double loss = 0.0, sums[2];
    ptrdiff_t r, j;
    for (r = 0; r < n_rows; r++) {
        double *__restrict row = block + r * n;
        psdmetric_mlkr_sums(row, y, n, smallest, sums);
        const double predicted = sums[1] / sums[0];
        const double error = predicted - y[start + r], scale = error / sums[0];
        loss += error * error;
        for (j = 0; j < n; j++) {
            double value = row[j] * scale * (y[j] - predicted);
            value = fabs(value) < flush ? 0.0 : value;
            row[j] = value;
            column_sums[j] += value;
        }
    }
    return loss;
}

#endif
