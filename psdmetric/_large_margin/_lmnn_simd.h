/* LMNN's per-pair update at the CPU's vector width: one build for every x86-64.
 *
 * GCC compiles the function twice, for baseline x86-64 (SSE2) and for x86-64-v3
 * (AVX2), and picks the clone once, at load time, from the running CPU. The module is
 * built with -ffp-contract=off, so both clones return the same bits. The squared
 * distance beside it is the core's (_core/_distance_simd.h). Other compilers and
 * targets build the plain loop.
 */
#ifndef PSDMETRIC_LMNN_SIMD_H
#define PSDMETRIC_LMNN_SIMD_H

#include <math.h>  /* defines __GLIBC__ for the guard below */
#include <stddef.h>

/* target_clones resolves through ifunc, which glibc has and musl does not (math.h,
 * a libc header, defines __GLIBC__ there). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) \
    && (__GNUC__ >= 12) && defined(__GLIBC__)
#define PSDMETRIC_LMNN_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define PSDMETRIC_LMNN_CLONES
#endif

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
