// Whether a file's variants can be built as programs and timed on a GPU: the one rule the bench
// and the sweep, in the editor and on the command line, all apply. Each caller words the answer
// for its user (a setting to change in the editor, a flag on the command line).
import { timerFor } from './timer';

/** Why variants cannot be timed: asked for SASS only, no ncu, no GPU reachable, or nothing to run. */
export type GpuBlocker = 'static-asked' | 'no-ncu' | 'no-gpu' | 'no-main';

export interface GpuReadinessFacts {
  /** The user asked for SASS only (--static, the static sweep command). */
  staticAsked?: boolean;
  hasNcu: boolean;
  /** What times the kernels: the CUPTI timer needs no ncu (default ncu, as the engine's). */
  timer?: 'ncu' | 'cupti';
  /** GPUs nvidia-smi lists on this machine. */
  gpus: number;
  /** The run prefix (srun …): with one the GPU is on another node, and this machine's GPUs say nothing about it. */
  launcher: readonly string[];
  /** The source text: a program needs main(), unless the project's compile command builds one. */
  text: string;
  /** The project's compile command template (unrollLens.profile.compileCommand); empty: nvcc on the file itself. */
  compileCommand?: readonly string[];
  /** The project's own build and run (--build/--run) make and start the program. */
  project?: boolean;
}

/** A `main(` in the text: the file builds as a program by itself. */
export function hasMain(text: string): boolean {
  return /\bmain\s*\(/.test(text);
}

/** The first reason the variants cannot be timed on a GPU, or null when they can. */
export function gpuBlocker(f: GpuReadinessFacts): GpuBlocker | null {
  if (f.staticAsked) return 'static-asked';
  if (!f.hasNcu && timerFor(f).needsNcu) return 'no-ncu';
  if (!f.gpus && !f.launcher.length) return 'no-gpu';
  if (!hasMain(f.text) && !f.compileCommand?.length && !f.project) return 'no-main';
  return null;
}

/**
 * Whether a bench (or a compare) stops before building. It has no SASS-only mode: without a GPU
 * (none seen here and no launcher to reach one) or without main() every build would end in a run
 * that cannot happen, minutes of nvcc for a table of errors, so it stops at once and says what
 * works without one. A missing ncu is the engine's MissingToolError, which names the fix.
 */
export function benchStopsAt(blocker: GpuBlocker | null): boolean {
  return blocker === 'no-main' || blocker === 'no-gpu';
}
