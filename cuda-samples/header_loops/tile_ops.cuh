// tile_ops.cuh - device functions whose loops live in a header, for header_loops.cu.
// A header has no SASS of its own: Unroll Lens builds these loops' unroll variants by compiling
// a translation unit that includes the header (header_loops.cu, named by the compile_commands.json
// next to it) with the header replaced through an overlay include folder.
//
//   row_dot      : a runtime-length dot product, `#pragma unroll 4`
//   row_sum      : a runtime-length sum with no pragma (nvcc decides)
//   horner8      : an 8-term polynomial, fully unrolled (`#pragma unroll`)
//   scaled_copy  : a template that header_loops.cu never instantiates, so no translation unit
//                  holds its code (Unroll Lens says so instead of showing an empty table)
#pragma once

__device__ __forceinline__ float row_dot(const float* __restrict__ a, const float* __restrict__ x, int n)
{
  float s = 0.0f;
#pragma unroll 4
  for (int k = 0; k < n; ++k) s += a[k] * x[k];
  return s;
}

__device__ __forceinline__ float row_sum(const float* __restrict__ a, int n)
{
  float s = 0.0f;
  for (int k = 0; k < n; ++k) s += a[k];
  return s;
}

__device__ __forceinline__ float horner8(float v)
{
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) s = s * v + 1.0f / static_cast<float>(i + 1);
  return s;
}

template <int N>
__device__ void scaled_copy(float* __restrict__ dst, const float* __restrict__ src, float f)
{
#pragma unroll 2
  for (int i = 0; i < N; ++i) dst[i] = src[i] * f;
}
