// What the GPU stages (check, time, line stalls) share: the built program of one variant and how
// it is started, through the project's run command and the launcher prefix when there are any.
import * as path from 'path';
import type { ProcessResult, RunOptions } from '../../toolchain/process';
import type { BenchOptions } from '../options';

/** One variant's built program: the input of every GPU stage. */
export interface VariantProgram {
  /** Short name for progress messages and kept reports ("as-written", "4"). */
  label: string;
  /** The built executable. */
  program: string;
  /** The source file it was built from: runs start in its folder, kept reports are named after it. */
  file: string;
  /** Where runs start instead of the file's folder (a project's run: the root of its copy). */
  cwd?: string;
}

/** The folder a program's runs start in. */
export function runFolder(p: VariantProgram): string {
  return p.cwd ?? path.dirname(p.file);
}

/** The options that say how a program is started. */
export type LaunchOptions = Pick<BenchOptions, 'toolchain' | 'launcher' | 'runCommand' | 'args'>;

/** The command line of one plain run: the run command with {program} and {args} filled in. */
export function programCommand(program: string, o: Pick<BenchOptions, 'runCommand' | 'args'>): string[] {
  return fill(o.runCommand ?? ['{program}', '{args}'], { program, args: o.args });
}

/** Runs `argv` behind the launcher prefix (`srun -p gpu …`), or as it is without one. */
export function launch(o: Pick<BenchOptions, 'toolchain' | 'launcher'>, argv: string[], options: RunOptions): Promise<ProcessResult> {
  const [command, ...args] = [...o.launcher, ...argv];
  return o.toolchain.runner(command, args, options);
}

/** Fills {name} placeholders; a whole-argument placeholder for a list ({args}) expands to its items. */
export function fill(template: string[], vars: Record<string, string | string[]>): string[] {
  const out: string[] = [];
  for (const t of template) {
    const whole = /^\{(\w+)\}$/.exec(t);
    if (whole && Array.isArray(vars[whole[1]])) out.push(...(vars[whole[1]] as string[]));
    else out.push(t.replace(/\{(\w+)\}/g, (m, k) => (vars[k] === undefined ? m : String(vars[k]))));
  }
  return out;
}

export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
