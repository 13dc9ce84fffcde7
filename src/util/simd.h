/* util/simd.h: code compiled for AVX2 beside the baseline x86-64 build,
 * taken at run time when the CPU has it (the build itself targets the
 * baseline, so one binary runs everywhere). */
#ifndef RAGSWEEP_UTIL_SIMD_H
#define RAGSWEEP_UTIL_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RS_HAVE_AVX2 1
/* A function compiled for AVX2 and the bit steps of BMI1/2; call it only
 * when rs__cpu_has_avx2(). */
#define RS_AVX2_TARGET __attribute__((target("avx2,bmi,bmi2")))

/* Whether this CPU runs code compiled for RS_AVX2_TARGET. */
static inline int rs__cpu_has_avx2(void)
{
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
#endif

#endif
