// pm_config.h - a project's own qualifier and unroll macros, written the way real libraries
// write them: through several levels (PM_UNROLL(n) → PM_PRAGMA(unroll n) → _Pragma("unroll n")),
// and chosen by #if on what nvcc defines for device code. Unroll Lens reads this header to know
// that PM_KERNEL makes a kernel and PM_UNROLL(4) is `#pragma unroll 4`; no built-in table knows
// these names.
#pragma once

#define PM_STRINGIFY_(x) #x
#define PM_STRINGIFY(x) PM_STRINGIFY_(x)
#define PM_PRAGMA(x) _Pragma(PM_STRINGIFY(x))

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
// Device pass: real unroll pragmas.
#  define PM_UNROLL(n) PM_PRAGMA(unroll n)
#  define PM_UNROLL_ALL PM_PRAGMA(unroll)
#else
// Host pass (and old GPUs): nothing, as libraries do for compilers without the pragma.
#  define PM_UNROLL(n)
#  define PM_UNROLL_ALL
#endif
#define PM_NO_UNROLL PM_UNROLL(1)

#if defined(__CUDACC__)
#  define PM_HOST_DEVICE __host__ __device__
#  define PM_DEVICE __device__ __forceinline__
#  define PM_KERNEL __global__
#else
#  define PM_HOST_DEVICE
#  define PM_DEVICE inline
#  define PM_KERNEL
#endif
