// One task of a Slurm sweep, on its compute node (issue 28): the sweep's GPU runner, rebuilt from
// the manifest, measures the task's points exactly as a local GPU sweep would (the same builds,
// checks, timings and stall reasons; the measurement cache on the shared directory), and each
// point's result is written whole into the sweep's results folder as soon as it is measured.
import * as os from 'os';
import type { MeasuredOn, SweepVariant } from '../../../schema/types';
import type { FileAnalysis } from '../../parse/model';
import type { ProcessRunner } from '../../toolchain/process';
import type { Toolchain } from '../../toolchain/toolchain';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId, resolveSpace } from '../space';
import { runnerFor } from '../sweep';
import { CodeRegistry } from '../variant';
import { SlurmManifest, writeResult } from './manifest';

/** Statuses a node can cause (a bad node, a full GPU, a time limit): stored for the run waiting, measured again by a re-run. */
const TRANSIENT = new Set<SweepVariant['status']>(['runtime', 'timeout', 'profile', 'cancelled']);

export function isTransient(v: SweepVariant): boolean {
  return TRANSIENT.has(v.status);
}

/** The code hashes the static side claims, by variant id: the submitting side finds identical code across tasks with them. */
class RecordingRegistry extends CodeRegistry {
  readonly hashes = new Map<string, string | null>();

  override claim(hash: string | null, v: SweepVariant): SweepVariant | null {
    this.hashes.set(v.id, hash);
    return super.claim(hash, v);
  }
}

/**
 * The node, and the GPU Slurm gave the task (the first of CUDA_VISIBLE_DEVICES, an index or a
 * UUID; nvidia-smi lists every GPU of the node whatever it says): model and clocks now.
 */
async function measuredOn(toolchain: Toolchain, job: string | null, run: ProcessRunner): Promise<MeasuredOn> {
  const on: MeasuredOn = { host: os.hostname(), gpu: null, clocks: null, job };
  if (!toolchain.nvidiaSmi) return on;
  const q = await run(
    toolchain.nvidiaSmi.path,
    ['--query-gpu=index,uuid,name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem', '--format=csv,noheader,nounits'],
    { timeoutMs: 20_000 },
  );
  if (q.exitCode !== 0) return on;
  const rows = q.stdout
    .split('\n')
    .map(l => l.split(',').map(c => c.trim()))
    .filter(r => r.length >= 7);
  const want = (process.env.CUDA_VISIBLE_DEVICES ?? '').split(',')[0]?.trim();
  const row = rows.find(r => want && (r[0] === want || r[1] === want)) ?? rows[0];
  if (!row) return on;
  const mhz = (s: string) => (/^\d+(\.\d+)?$/.test(s) ? Number(s) : null);
  return { ...on, gpu: row[2], clocks: { smMHz: mhz(row[3]), memMHz: mhz(row[4]), maxSmMHz: mhz(row[5]), maxMemMHz: mhz(row[6]) } };
}

/**
 * Measures array task `index` of the manifest; each point's result is written as it finishes.
 * The file as written is measured first when the task does not hold it (every point is checked
 * against its output; the measurement cache usually answers for it).
 */
export async function runSlurmTask(
  m: SlurmManifest,
  index: number,
  env: { analysis: FileAnalysis; toolchain: Toolchain; signal?: AbortSignal; log?: (line: string) => void; job?: string | null },
): Promise<{ written: number; points: number }> {
  const task = m.tasks.find(t => t.index === index);
  if (!task) throw new Error(`the manifest has no task ${index}`);
  const spec = m.spec;
  // on the node, Slurm picks the GPU (CUDA_VISIBLE_DEVICES): the default device, no placement of ours
  const o = { ...spec, analysis: env.analysis, toolchain: env.toolchain, signal: env.signal, gpu: { ...spec.gpu, gpus: undefined } };
  const runner = runnerFor(o, resolveSpace(env.analysis, spec.file, spec));
  const on = await measuredOn(env.toolchain, env.job ?? null, env.toolchain.runner);
  env.log?.(`task ${index} on ${on.host}${on.gpu ? ` (${on.gpu})` : ''}: ${task.points.length} points`);
  const mine = new Set(task.points.map(pointId));
  const points = mine.has(AS_WRITTEN_ID)
    ? [AS_WRITTEN, ...task.points.filter(p => pointId(p) !== AS_WRITTEN_ID)]
    : [AS_WRITTEN, ...task.points];
  const registry = new RecordingRegistry(!runner.static);
  let written = 0;
  await runner.measure(points, {
    signal: env.signal,
    registry,
    onPhase: (p, phase, detail) => env.log?.(`${pointId(p)}: ${phase}${detail ? ` ${detail}` : ''}`),
    onVariant: v => {
      if (!mine.has(v.id)) return;
      writeResult(m.sweepDir, { id: v.id, variant: { ...v, measuredOn: on }, codeHash: registry.hashes.get(v.id) ?? null, measuredOn: on });
      written++;
      env.log?.(`${v.id}: ${v.status}${v.medianMs !== null ? ` ${v.medianMs} ms` : ''}`);
    },
  });
  return { written, points: task.points.length };
}
