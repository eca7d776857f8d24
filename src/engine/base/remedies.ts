// How a message tells the user to fix what the engine cannot: install or point at a tool, choose
// the host compiler, measure again. The words depend on where the user is. On the command line
// the environment works (toolchain discovery reads CUDA_HOME, CUDA_PATH and PATH; the CLI has no
// option naming a tool's path) and so do its flags; in the editor its settings do, and the editor
// must keep naming them. The engine's own words are the command line's; the language server
// installs the editor's once at start (src/server/remedies.ts). One process serves one surface,
// so the words are per process.

/** The tools a user may have to install or point Unroll Lens at. */
export type LocatedTool = 'nvcc' | 'cuobjdump' | 'nvdisasm' | 'ncu';

export interface Remedies {
  /** After "<tool> not found (looked in …).": how to install it or point Unroll Lens at it. */
  missingTool: Record<LocatedTool, string>;
  /** After "nvdisasm … cannot read sm_XX code: …": how to use one that can. */
  newerNvdisasm: string;
  /** After "the host compiler is never taken from compile_commands.json": how to choose one (no sentence end). */
  hostCompiler: string;
  /** After "N of M measurements reused from earlier runs of the same programs (no GPU run;": how to measure again (no sentence end). */
  measureAgain: string;
}

/** What works in a shell: the environment toolchain discovery reads (src/engine/toolchain/discover.ts), and the CLI's flags. */
export const COMMAND_LINE_REMEDIES: Remedies = {
  missingTool: {
    nvcc: 'Install the CUDA Toolkit (https://developer.nvidia.com/cuda-downloads), then set CUDA_HOME to its folder or put its bin/ on PATH.',
    cuobjdump:
      "cuobjdump ships with the CUDA Toolkit (bin/): set CUDA_HOME to the toolkit's folder or put its bin/ on PATH. Without a full toolkit on Debian, run `npm run setup:cuda-tools` in the Unroll Lens folder.",
    nvdisasm:
      "nvdisasm ships with the CUDA Toolkit (bin/): set CUDA_HOME to the toolkit's folder or put its bin/ on PATH. Without a full toolkit on Debian, run `npm run setup:cuda-tools` in the Unroll Lens folder.",
    ncu: "Install NVIDIA Nsight Compute (part of the CUDA Toolkit, or standalone) and put the folder holding ncu on PATH (the toolkit's bin/ under CUDA_HOME or /usr/local/cuda, and /opt/nvidia/nsight-compute, are searched too).",
  },
  newerNvdisasm:
    "Set CUDA_HOME to a CUDA Toolkit that knows this architecture (nvcc's own), or put its bin/ first on PATH with CUDA_HOME and CUDA_PATH unset (they are searched before PATH).",
  hostCompiler: 'set NVCC_CCBIN to choose one: nvcc reads it',
  measureAgain: '--fresh measures them again',
};

let current: Remedies = COMMAND_LINE_REMEDIES;

/** The words for this process's surface. */
export function remedies(): Remedies {
  return current;
}

/** Makes the engine's messages use `r` from now on (the language server: the editor's settings). */
export function useRemedies(r: Remedies): void {
  current = r;
}
