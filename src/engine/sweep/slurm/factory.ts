// A sweep's Slurm runner from its options (issue 28): what the tasks need as data (the manifest's
// spec) and how the points are built here first. The CLI (`sweep --slurm`) and the editor's
// sweep (unrollLens.profile.slurm.enabled) make it the same way.
import type { ProcessRunner } from '../../toolchain/process';
import type { SweepOptions } from '../sweep';
import { staticOptionsOf } from '../sweep';
import type { SlurmSweepSpec } from './manifest';
import type { SlurmOptions } from './queue';
import { SlurmRunner } from './runner';

export interface SlurmSweepOptions {
  slurm: SlurmOptions;
  /** The shared directory every node sees (--shared-dir, unrollLens.profile.sharedDirectory). */
  sharedRoot: string;
  /** What the job script runs before `slurm-task MANIFEST INDEX`: node and the CLI (the same paths on the nodes). */
  command: string[];
  /** The folder the sweep was started in (compile_commands.json, relative paths). */
  cwd?: string;
  /** Runs sbatch, squeue, sacct and scancel (tests stand in for Slurm). */
  run?: ProcessRunner;
}

/** What a task needs of the sweep's options, as data (the manifest's spec). */
function specOf(o: SweepOptions, cwd?: string): SlurmSweepSpec {
  const t = o.toolchain;
  return {
    file: o.file,
    text: o.text,
    arch: o.arch,
    flags: o.flags,
    cacheDir: o.cacheDir,
    kernel: o.kernel,
    loops: o.loops,
    factors: o.factors?.toJSON(),
    paramsOnly: o.paramsOnly,
    params: o.params,
    tied: o.tied,
    kernelFilter: o.kernelFilter,
    compileTimeoutMs: o.compileTimeoutMs,
    // Slurm places the task on its GPU: no device list of this machine's
    gpu: { ...o.gpu!, gpus: undefined },
    tools: { ncu: t.ncu?.path ?? null },
    versions: { nvcc: t.nvcc.version ?? '', ncu: t.ncu?.version ?? null },
    ...(cwd ? { cwd } : {}),
  };
}

/** The sweep's runner: its points built here, then measured by Slurm array tasks. */
export function slurmSweepRunner(s: SlurmSweepOptions): NonNullable<SweepOptions['runner']> {
  return (space, o) =>
    new SlurmRunner({
      spec: specOf(o, s.cwd),
      build: { static: staticOptionsOf(o, space), gpu: o.gpu! },
      sharedRoot: s.sharedRoot,
      slurm: s.slurm,
      command: s.command,
      run: s.run,
    });
}
