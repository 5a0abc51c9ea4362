/* The squared distance of two rows at the CPU's vector width: one build for every x86-64.
 *
 * Shared by the cyclic driver's screen (_factor_kernels) and LMNN's loss (_lmnn_kernels):
 * each module compiles its own copy with its own flags, for baseline x86-64 and for
 * x86-64-v3 (_clones.h). In a module built with -ffp-contract=off both clones return
 * the same bits, since every lane sums fixed entries in a fixed order.
 */
#ifndef PSDMETRIC_DISTANCE_SIMD_H
#define PSDMETRIC_DISTANCE_SIMD_H

#include <math.h>
#include <stddef.h>

#include "_clones.h"

/* ‖a − b‖² over r entries in eight partial sums (lane j sums the entries k ≡ j mod 8):
 * one chain of dependent additions would bound the loop by their latency. */
PSDMETRIC_CLONES
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

#endif
