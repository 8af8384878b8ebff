/* cpu_libmvec.h - expf, tanhf and erfcf declared SIMD-callable, so that GCC's vectoriser calls
 * glibc's libmvec (x86-64, glibc >= 2.35: _ZGVdN8v_expf, ...) inside a vectorised loop. <math.h>
 * declares them so only under -ffast-math, which kmux does not use (it would drop NaN and
 * signed-zero semantics); a file that includes this is compiled with -fno-math-errno alone (errno
 * is the only thing a vector call cannot set) and links libmvec (kernels/cpu/CMakeLists.txt).
 * libmvec's functions are within 4 ulp of the correctly rounded result (glibc's libm-test-ulps).
 * Other compilers and libcs: plain scalar calls. Include before any header whose inline functions
 * call them. */
#ifndef KMUX_CPU_LIBMVEC_H
#define KMUX_CPU_LIBMVEC_H

#include <math.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) &&       \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define KMUX_CPU_LIBMVEC 1
extern float expf(float) __attribute__((__simd__("notinbranch")));
extern float tanhf(float) __attribute__((__simd__("notinbranch")));
extern float erfcf(float) __attribute__((__simd__("notinbranch")));
#endif

#endif
