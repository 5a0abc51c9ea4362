/* PSDMETRIC_CLONES: one build of a vector loop for every x86-64.
 *
 * GCC compiles a function so marked twice, for baseline x86-64 (SSE2) and for
 * x86-64-v3 (AVX2 and FMA), and picks the clone once, at load time, from the running
 * CPU; other compilers and targets build the plain loop. A module built with
 * -ffp-contract=off gets the same bits from both clones. Every compiled family's
 * header marks its loops with it; `unused`, since a module that includes a header may
 * call only some of its functions.
 */
#ifndef PSDMETRIC_CLONES_H
#define PSDMETRIC_CLONES_H

#include <math.h>

/* target_clones resolves through ifunc, which glibc has and musl does not (math.h,
 * a libc header, defines __GLIBC__ there). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) \
    && (__GNUC__ >= 12) && defined(__GLIBC__)
#define PSDMETRIC_CLONES \
    __attribute__((target_clones("arch=x86-64-v3", "default"), unused))
#elif defined(__GNUC__)
#define PSDMETRIC_CLONES __attribute__((unused))
#else
#define PSDMETRIC_CLONES
#endif

#endif
