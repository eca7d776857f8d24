// Why variants cannot be timed on a GPU, in the command line's words (flags to pass). The rule
// itself is the engine's (engine/gpu/readiness.ts), shared with the editor.
import { type GpuBlocker } from '../engine';

export const CLI_GPU_BLOCKER_TEXT: Record<GpuBlocker, string> = {
  'static-asked': 'SASS only, as asked (--static)',
  'no-ncu': 'Nsight Compute (ncu) not found: install it, or put it on PATH, for timings and stall reasons',
  // With a launcher the GPU is on another node: this machine's nvidia-smi says nothing about it.
  'no-gpu': 'no GPU on this machine (nvidia-smi lists none); --launcher runs on a GPU node',
  'no-main': 'the file has no main(): variants cannot run as programs',
};

/**
 * What still works on this machine when a bench or compare cannot run: the SASS of each factor
 * and the static sweep need nvcc alone. Empty for a blocker a GPU would not lift.
 */
export function withoutGpuText(blocker: GpuBlocker, file: string, loops: readonly number[]): string {
  if (blocker !== 'no-gpu') return '';
  const quoted = /^[\w./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
  const loop = loops.length ? ` --loop ${loops.join(',')}` : '';
  return (
    `. Without a GPU, \`unroll-lens sass ${quoted}${loop}\` shows the SASS of each unroll factor and ` +
    `\`unroll-lens sweep ${quoted} --static\` picks a factor by a stated static rule`
  );
}
