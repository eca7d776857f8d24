// The editor's Slurm sweeps (issue 28): unrollLens.profile.slurm.* and sharedDirectory as the
// engine's Slurm runner, the same one `unroll-lens sweep --slurm` uses. Every setting that makes us
// run sbatch or names what the nodes run is restricted (VS Code drops a workspace's value in an
// untrusted workspace), and a combination that cannot work is refused with what to change.
import * as fs from 'fs';
import * as path from 'path';
import { packageRoot } from '../packageRoot';
import { slurmSweepRunner, type ProcessRunner, type SlurmOptions, type SweepOptions } from '../engine';
import type { ProfileSettings } from '../settings';

/** The job array's options from unrollLens.profile.slurm.* (the CLI's --partition … flags read the same settings). */
export function slurmOptionsFromSettings(s: ProfileSettings['slurm']): SlurmOptions {
  return {
    partition: s.partition.trim(),
    account: s.account.trim(),
    time: s.time.trim(),
    gpusPerTask: s.gpusPerTask,
    pointsPerTask: s.pointsPerTask,
    arrayMax: s.arrayMax,
    extra: s.extraArgs.filter(a => a.trim()),
    pollSeconds: s.pollSeconds,
  };
}

/** Why the editor cannot sweep on Slurm with these settings (what to change), or null. */
export function slurmProblem(p: ProfileSettings): string | null {
  if (!p.sharedDirectory.trim())
    return 'a Slurm sweep (unrollLens.profile.slurm.enabled) needs unrollLens.profile.sharedDirectory: a folder every node of the cluster sees';
  if (p.maxSamples > p.samples)
    return (
      'adaptive sampling (unrollLens.profile.maxSamples) does not work in a Slurm sweep: each round would wait in the queue again; ' +
      'set it to 0 and give unrollLens.profile.samples the durations each point needs'
    );
  if (p.gpus.trim())
    return 'unrollLens.profile.gpus does not apply to a Slurm sweep (Slurm gives each task its GPUs: unrollLens.profile.slurm.gpusPerTask): leave it empty';
  return null;
}

/**
 * What the job script runs on the node: the setting, else node with the CLI of the checkout the
 * server runs from (a development install), else `unroll-lens` on the node's PATH (the npm package).
 */
export function taskCommandFor(s: ProfileSettings['slurm'], root: string | null = safeRoot()): string[] {
  const set = s.taskCommand.filter(a => a.trim());
  if (set.length) return set;
  const cli = root && path.join(root, 'bin', 'unroll-lens.js');
  return cli && fs.existsSync(cli) && fs.existsSync(path.join(root, 'out', 'src', 'cli', 'main.js')) ? ['node', cli] : ['unroll-lens'];
}

function safeRoot(): string | null {
  try {
    return packageRoot(__dirname);
  } catch {
    return null;
  }
}

/** The sweep's Slurm runner from the settings (slurmProblem must be null); `run` stands in for Slurm in tests. */
export function slurmRunnerFromSettings(p: ProfileSettings, run?: ProcessRunner): NonNullable<SweepOptions['runner']> {
  return slurmSweepRunner({
    slurm: slurmOptionsFromSettings(p.slurm),
    sharedRoot: path.resolve(p.sharedDirectory.trim()),
    command: taskCommandFor(p.slurm),
    run,
  });
}
