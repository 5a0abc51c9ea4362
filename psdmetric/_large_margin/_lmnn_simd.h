/* LMNN's per-pair update at the CPU's vector width: one build for every x86-64.
 *
 * Built for baseline x86-64 and for x86-64-v3 (_core/_clones.h); the module is built
 * with -ffp-contract=off, so both clones return the same bits. The squared distance
 * beside it is the core's (_core/_distance_simd.h).
 */
#ifndef PSDMETRIC_LMNN_SIMD_H
#define PSDMETRIC_LMNN_SIMD_H

#include <stddef.h>

#include "../_core/_clones.h"

/* The pair's two rows of (D − W) Z: image_a += w (a − b), image_b −= w (a − b). The
 * rows are distinct (a pair of a point with itself adds exactly zero: the caller skips
 * it), so they do not alias. */
PSDMETRIC_CLONES
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
