// A GPU run's cost (RunTiming) as one line of text: the CLI's table footer, the hover and the
// results panel say it the same way.
import type { RunTiming } from './types';

/** 14 → "14 s", 125 → "2 min 5 s", 3720 → "1 h 2 min". */
export function formatSeconds(s: number): string {
  const t = Math.max(0, Math.round(s));
  if (t < 60) return `${t} s`;
  if (t < 3600) return `${Math.floor(t / 60)} min${t % 60 ? ` ${t % 60} s` : ''}`;
  const m = Math.floor((t % 3600) / 60);
  return `${Math.floor(t / 3600)} h${m ? ` ${m} min` : ''}`;
}

/** Tenths under a minute (short runs), whole seconds past it. */
function seconds(s: number): string {
  return s < 60 ? `${Math.max(0, s).toFixed(1)} s` : formatSeconds(s);
}

/**
 * `run: 42.3 s wall · compile 1 min 2 s · check 3.2 s · profile 30.0 s · GPU idle 4.5 s · 9 GPU runs · GPUs 0,1`;
 * null when the run kept no accounting (wallS 0).
 */
export function runTimingText(t: RunTiming): string | null {
  if (!(t.wallS > 0)) return null;
  if (t.slurm) return slurmTimingText(t, t.slurm);
  const chosen = t.gpus.filter(g => g !== null);
  const gpus = chosen.length ? `GPU${chosen.length > 1 ? 's' : ''} ${chosen.join(',')}` : 'default GPU';
  return (
    `run: ${seconds(t.wallS)} wall · compile ${seconds(t.compileS)} · check ${seconds(t.checkS)} · profile ${seconds(t.profileS)} · ` +
    `GPU idle ${seconds(t.gpuIdleS)} · ${t.gpuRuns} GPU run${t.gpuRuns === 1 ? '' : 's'} · ${gpus}`
  );
}

/**
 * A Slurm sweep's cost: the builds here, then what Slurm and the tasks say, never a zero for what
 * nobody measured: `run: 2 min wall · compile 12.0 s here · Slurm: 4 tasks, queued 30.0 s, ran
 * 1 min 5 s · check 1.2 s · profile 40.0 s · GPU idle 3.0 s · 6 GPU runs (3 of 4 tasks reported)`.
 */
function slurmTimingText(t: RunTiming, s: NonNullable<RunTiming['slurm']>): string {
  const head = `run: ${seconds(t.wallS)} wall · compile ${seconds(t.compileS)} here`;
  if (!s.tasks) return `${head} · Slurm: nothing submitted (every point measured before, or settled here)`;
  const tasks = `Slurm: ${s.tasks} task${s.tasks === 1 ? '' : 's'}`;
  if (!s.reported) return `${head} · ${tasks}, none reported its time (queue, check and profile times unknown)`;
  const queued = s.queueS !== null ? `, queued ${seconds(s.queueS)}` : ', queue time unknown';
  const ran = s.taskS !== null ? `, ran ${seconds(s.taskS)}` : '';
  const of = s.reported < s.tasks ? ` (${s.reported} of ${s.tasks} tasks reported)` : '';
  return (
    `${head} · ${tasks}${queued}${ran} · check ${seconds(t.checkS)} · profile ${seconds(t.profileS)} · ` +
    `GPU idle ${seconds(t.gpuIdleS)} · ${t.gpuRuns} GPU run${t.gpuRuns === 1 ? '' : 's'}${of}`
  );
}
