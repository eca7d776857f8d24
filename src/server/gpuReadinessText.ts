// Why variants cannot be timed on a GPU, in the editor's words (settings to change). The rule
// itself is the engine's (engine/gpu/readiness.ts), shared with the CLI.
import { type GpuBlocker } from '../engine';

export const EDITOR_GPU_BLOCKER_TEXT: Record<GpuBlocker, string> = {
  'static-asked': 'SASS only, as asked',
  'no-ncu': 'Nsight Compute (ncu) not found: set unrollLens.toolchain.ncuPath or install it for timings and stall reasons',
  // With a launcher (srun …) the GPU is on another node: nvidia-smi here says nothing about it.
  'no-gpu':
    'no GPU on this machine (nvidia-smi lists none); set unrollLens.profile.launcher to run on a GPU node. ' +
    "Without one, 'Build unroll variants (SASS) for this loop' shows each factor's SASS and 'Sweep unroll factors…' picks a factor by a static rule",
  'no-main':
    'this file has no main(): set unrollLens.profile.compileCommand (e.g. your make/nvcc line with {source} and {output}) and, if needed, runCommand, so variants can be built and run as programs',
};
