// A built-in table of the macros well-known CUDA libraries use for function qualifiers and
// unroll pragmas (CCCL: CUB, Thrust, libcu++; CUTLASS; CuTe; PyTorch/c10): each name with what
// the library's own definition expands to under nvcc (checked against the CUDA 13.0 CCCL headers and the public CUTLASS,
// CuTe and c10 definitions). It is the fallback: macros/ reads the real definitions from the
// headers a file includes, and a name they define is taken from there.

export type MacroLibrary = 'CCCL' | 'CUTLASS' | 'CuTe' | 'PyTorch';

export interface QualifierMacro {
  library: MacroLibrary;
  /** What nvcc sees, e.g. `__forceinline__ __device__`. */
  expandsTo: string;
  qualifier: 'global' | 'device' | 'host' | 'inline';
}

export interface PragmaMacro {
  library: MacroLibrary;
  /** Object-like (`CUTLASS_PRAGMA_UNROLL`) or function-like (`_CCCL_PRAGMA_UNROLL(4)`). */
  functionLike: boolean;
  /** The pragma text it expands to; `$1` stands for the macro's argument. */
  expandsTo: string;
}

export const QUALIFIER_MACROS: Record<string, QualifierMacro> = {
  // CCCL (cuda/std/__cccl/execution_space.h, visibility.h; cub/util_macro.cuh)
  _CCCL_DEVICE: { library: 'CCCL', expandsTo: '__device__', qualifier: 'device' },
  _CCCL_HOST_DEVICE: { library: 'CCCL', expandsTo: '__host__ __device__', qualifier: 'device' },
  _CCCL_API: { library: 'CCCL', expandsTo: '__host__ __device__', qualifier: 'device' },
  _CCCL_DEVICE_API: { library: 'CCCL', expandsTo: '__device__', qualifier: 'device' },
  _CCCL_TRIVIAL_API: { library: 'CCCL', expandsTo: '__host__ __device__ __forceinline__', qualifier: 'device' },
  _CCCL_TRIVIAL_DEVICE_API: { library: 'CCCL', expandsTo: '__device__ __forceinline__', qualifier: 'device' },
  CUB_RUNTIME_FUNCTION: { library: 'CCCL', expandsTo: '__host__ __device__', qualifier: 'device' },
  CCCL_DETAIL_KERNEL_ATTRIBUTES: { library: 'CCCL', expandsTo: '__global__', qualifier: 'global' },
  CUB_DETAIL_KERNEL_ATTRIBUTES: { library: 'CCCL', expandsTo: '__global__', qualifier: 'global' },
  // CCCL main (libcudacxx cuda/std/__cccl/visibility.h): `__global__ _CCCL_VISIBILITY_HIDDEN`, the
  // kernels' spelling since CUB_DETAIL_KERNEL_ATTRIBUTES (not in CUDA 13.0's CCCL)
  _CCCL_KERNEL_ATTRIBUTES: { library: 'CCCL', expandsTo: '__global__', qualifier: 'global' },
  _CCCL_FORCEINLINE: { library: 'CCCL', expandsTo: '__forceinline__', qualifier: 'inline' },
  _LIBCUDACXX_HIDE_FROM_ABI: { library: 'CCCL', expandsTo: 'inline __host__ __device__', qualifier: 'device' },
  THRUST_DEVICE_FUNCTION: { library: 'CCCL', expandsTo: '__device__ __forceinline__', qualifier: 'device' },
  THRUST_FUNCTION: { library: 'CCCL', expandsTo: '__host__ __device__ __forceinline__', qualifier: 'device' },
  // CUTLASS (cutlass/detail/helper_macros.hpp)
  CUTLASS_DEVICE: { library: 'CUTLASS', expandsTo: '__forceinline__ __device__', qualifier: 'device' },
  CUTLASS_HOST_DEVICE: { library: 'CUTLASS', expandsTo: '__forceinline__ __host__ __device__', qualifier: 'device' },
  CUTLASS_GLOBAL: { library: 'CUTLASS', expandsTo: '__global__ static', qualifier: 'global' },
  // CuTe (cute/config.hpp)
  CUTE_DEVICE: { library: 'CuTe', expandsTo: '__forceinline__ __device__', qualifier: 'device' },
  CUTE_HOST_DEVICE: { library: 'CuTe', expandsTo: '__forceinline__ __host__ __device__', qualifier: 'device' },
  // PyTorch (c10/macros/Macros.h)
  C10_DEVICE: { library: 'PyTorch', expandsTo: '__device__', qualifier: 'device' },
  C10_HOST_DEVICE: { library: 'PyTorch', expandsTo: '__host__ __device__', qualifier: 'device' },
};

export const PRAGMA_MACROS: Record<string, PragmaMacro> = {
  // CCCL (cuda/std/__cccl/compiler.h): _CCCL_PRAGMA(unroll …) → _Pragma("unroll …")
  _CCCL_PRAGMA_UNROLL_FULL: { library: 'CCCL', functionLike: true, expandsTo: 'unroll' },
  _CCCL_PRAGMA_UNROLL: { library: 'CCCL', functionLike: true, expandsTo: 'unroll $1' },
  _CCCL_PRAGMA_NOUNROLL: { library: 'CCCL', functionLike: true, expandsTo: 'unroll 1' },
  // CUTLASS (cutlass/detail/helper_macros.hpp)
  CUTLASS_PRAGMA_UNROLL: { library: 'CUTLASS', functionLike: false, expandsTo: 'unroll' },
  CUTLASS_PRAGMA_NO_UNROLL: { library: 'CUTLASS', functionLike: false, expandsTo: 'unroll 1' },
  // CuTe (cute/config.hpp)
  CUTE_UNROLL: { library: 'CuTe', functionLike: false, expandsTo: 'unroll' },
  CUTE_NO_UNROLL: { library: 'CuTe', functionLike: false, expandsTo: 'unroll 1' },
};

/** Names of qualifier macros that make a function device code (`__device__` or `__global__`). */
const GLOBAL_NAMES = Object.keys(QUALIFIER_MACROS).filter(n => QUALIFIER_MACROS[n].qualifier === 'global');
const DEVICE_NAMES = Object.keys(QUALIFIER_MACROS).filter(n => QUALIFIER_MACROS[n].qualifier === 'device');
const GLOBAL_QUALIFIER = new RegExp(`\\b(__global__|${GLOBAL_NAMES.join('|')})\\b`);
const DEVICE_QUALIFIER = new RegExp(`\\b(__device__|${DEVICE_NAMES.join('|')})\\b`);

/** Quick test for a file worth scanning as device code (headers such as .h/.hpp). */
export function mayHoldDeviceCode(text: string): boolean {
  return DEVICE_QUALIFIER.test(text) || GLOBAL_QUALIFIER.test(text);
}

/** The library's own spelling for a factor (`_CCCL_PRAGMA_UNROLL(4)`, `CUTLASS_PRAGMA_NO_UNROLL`), or null when it has none. */
export function libraryMacroFor(library: MacroLibrary, factor: 'full' | number): string | null {
  const full = factor === 'full';
  const one = factor === 1;
  switch (library) {
    case 'CCCL':
      return full ? '_CCCL_PRAGMA_UNROLL_FULL()' : one ? '_CCCL_PRAGMA_NOUNROLL()' : `_CCCL_PRAGMA_UNROLL(${factor})`;
    case 'CUTLASS':
      return full ? 'CUTLASS_PRAGMA_UNROLL' : one ? 'CUTLASS_PRAGMA_NO_UNROLL' : null;
    case 'CuTe':
      return full ? 'CUTE_UNROLL' : one ? 'CUTE_NO_UNROLL' : null;
    default:
      return null;
  }
}
