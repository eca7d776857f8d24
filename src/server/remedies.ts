// The editor's words for the engine's remedies (src/engine/base/remedies.ts): its settings, which the
// editor keeps naming. main.ts installs them before anything runs.
import { type Remedies } from '../engine';

export const EDITOR_REMEDIES: Remedies = {
  missingTool: {
    nvcc: 'Install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads), or set unrollLens.toolchain.cudaHome / nvccPath.',
    cuobjdump:
      'cuobjdump ships with the CUDA Toolkit (bin/). Without a full toolkit on Debian, run `npm run setup:cuda-tools` in the Unroll Lens folder; or set unrollLens.toolchain.cuobjdumpPath.',
    nvdisasm:
      'nvdisasm ships with the CUDA Toolkit (bin/). Without a full toolkit on Debian, run `npm run setup:cuda-tools` in the Unroll Lens folder; or set unrollLens.toolchain.nvdisasmPath.',
    ncu: 'Install NVIDIA Nsight Compute (part of the CUDA Toolkit, or standalone), or set unrollLens.toolchain.ncuPath.',
  },
  newerNvdisasm:
    "Put the nvdisasm of a CUDA Toolkit that knows this architecture (nvcc's own) first on PATH, or set unrollLens.toolchain.nvdisasmPath.",
  hostCompiler: 'set unrollLens.nvccArgs to choose one',
  measureAgain: 'unrollLens.profile.measurementCache',
};
