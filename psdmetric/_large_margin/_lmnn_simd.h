/* LMNN's per-pair loops at the CPU's vector width: one build for every x86-64.
 *
 * GCC compiles each function twice, for baseline x86-64 (SSE2) and for x86-64-v3
 * (AVX2), and picks the clone once, at load time, from the running CPU. The module is
 * built with -ffp-contract=off and every lane sums fixed entries in a fixed order, so
 * both clones return the same bits. Other compilers and targets build the plain loops.
 */
#ifndef PSDMETRIC_LMNN_SIMD_H
#define PSDMETRIC_LMNN_SIMD_H

#include <math.h>
#include <stddef.h>

/* target_clones resolves through ifunc, which glibc has and musl does not (math.h,
 * a libc header, defines __GLIBC__ there). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) \
    && (__GNUC__ >= 12) && defined(__GLIBC__)
#define PSDMETRIC_LMNN_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PSDMETRIC_LMNN_CLONES
#endif

/* ‖a − b‖² over r entries in eight partial sums (lane j sums the entries k ≡ j mod 8):
 * one chain of dependent additions would bound the loop by their latency. */
PSDMETRIC_LMNN_CLONES
static double psdmetric_squared_distance(const double *a, const double *b, ptrdiff_t r)
{
    double partial[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    ptrdiff_t k, j, whole = r - r % 8;
    for (k = 0; k < whole; k += 8) {
        for (j = 0; j < 8; j++) {
            const double d = a[k + j] - b[k + j];
            partial[j] += d * d;
        }
    }
    for (k = whole; k < r; k++) {
        const double d = a[k] - b[k];
        partial[0] += d * d;
    }
    return ((partial[0] + partial[1]) + (partial[2] + partial[3]))
           + ((partial[4] + partial[5]) + (partial[6] + partial[7]));
}

/* The pair's two rows of (D − W) Z: image_a += w (a − b), image_b −= w (a − b). The
 * rows are distinct (a pair of a point with itself adds exactly zero: the caller skips
 * it), so they do not alias. */
PSDMETRIC_LMNN_CLONES
static void psdmetric_add_pair(double *__restrict image_a, double *__restrict image_b,
                               const double *__restrict a, const double *__restrict b,
                               double weight, ptrdiff_t r)
{
    ptrdiff_t k;
    for (k = 0; k < r; k++) {
        const double step = weight * (a[k] - b[k]);
        image_a[k] += step;
        image_b[k] -= step;
    }
}

#endif
