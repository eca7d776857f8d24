// One task of a Slurm sweep, on its compute node (issue 28): the sweep's GPU runner, rebuilt from
// the manifest, runs, checks and times the programs the submitting machine built for the task's
// points, exactly as a local GPU sweep would (the same checks, timings and stall reasons; the
// measurement cache on the shared directory). Nothing is built here: the SASS side comes from the
// manifest, each program is run only while it has the hash it was built with, and no nvcc is run.
// Each point's result is written whole into the sweep's results folder as soon as it is measured;
// the task's cost when it ends.
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { MeasuredOn, SweepVariant } from '../../../schema/types';
import type { FileAnalysis } from '../../parse/model';
import { TimerUnavailableError } from '../../gpu/cupti/timerLibrary';
import { defaultProjectToolsBin, findOptionalTool } from '../../toolchain/discover';
import { readGpus } from '../../toolchain/gpu';
import { ProcessRunner, runProcess } from '../../toolchain/process';
import { processGuard } from '../../toolchain/processGuard';
import type { Toolchain } from '../../toolchain/toolchain';
import { hashBoundedFile, READ_CAPS } from '../../base/boundedRead';
import type { BuildResult } from '../../variants/build';
import { GpuRunner } from '../runners/gpu';
import type { PreparedPrograms } from '../runners/programs';
import type { RunnerContext } from '../runners/runner';
import { AS_WRITTEN, AS_WRITTEN_ID, pointId, resolveSpace, SweepPoint } from '../space';
import { UnrollFactors } from '../../variants/factors';
import { staticOptionsOf } from '../sweep';
import { CodeRegistry, emptyVariant } from '../variant';
import { BuiltFile, PreparedPoint, SlurmManifest, SlurmSweepSpec, writeResult, writeSourceStalls, writeTaskCost } from './manifest';

/** Statuses a node can cause (a bad node, a full GPU, a time limit, a program changed on the way): measured again by a re-run. */
const TRANSIENT = new Set<SweepVariant['status']>(['runtime', 'timeout', 'profile', 'cancelled']);

export function isTransient(v: SweepVariant): boolean {
  return TRANSIENT.has(v.status);
}

/** The code hashes the SASS side claims, by variant id: the submitting side finds identical code across tasks with them. */
class RecordingRegistry extends CodeRegistry {
  readonly hashes = new Map<string, string | null>();

  override claim(hash: string | null, v: SweepVariant): SweepVariant | null {
    this.hashes.set(v.id, hash);
    return super.claim(hash, v);
  }
}

/**
 * Why a file built on the submitting machine may not be run here (gone, not a regular file, or not
 * what was built), or null. With `copy`, the bytes hashed are written there as they are read: what
 * runs is then exactly what passed the check, whatever happens to the shared file after it.
 */
function refusal(f: BuiltFile | null, what: string, copy: string | null = null): string | null {
  if (!f) return `no ${what} was built for it`;
  let sha: string;
  let fd: number | null = null;
  try {
    if (copy) fd = fs.openSync(copy, 'wx', 0o700);
    const out = fd;
    // a regular file only, never through a link, size-capped: the shared folder may hold a FIFO or /dev/zero under its name
    sha = hashBoundedFile(f.path, {
      maxBytes: READ_CAPS.executable,
      what: `the ${what}`,
      followLinks: false,
      onChunk: out === null ? undefined : b => fs.writeSync(out, b),
    });
  } catch (e) {
    return `the ${what} built for it (${f.path}) cannot be used on this node: ${(e as Error).message}`;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
  return sha === f.sha256
    ? null
    : `refused to run the ${what} ${f.path}: its sha256 is ${sha.slice(0, 16)}…, not the ${f.sha256.slice(0, 16)}… it had when built ` +
        'before submission (changed or replaced since); re-run the sweep to build it again';
}

/** The SASS side as the submitting machine measured it: the manifest's variants, a program that changed refused. */
class ManifestSass {
  readonly kernelSizes = new Map<string, Record<string, number>>();
  /** Point id → its program's check, made once (the SASS side and the program list both ask). */
  private readonly checks = new Map<string, { why: string | null; run: string | null }>();

  constructor(
    private readonly entries: Map<string, PreparedPoint>,
    /** Programs run on this node (no launcher): each is run from a private copy. */
    private readonly privateCopies: boolean,
  ) {}

  /**
   * The point's program checked against its hash: why it may not run, or what to run (a private
   * copy of the bytes that passed the check, or with a launcher the checked path itself).
   */
  check(id: string): { why: string | null; run: string | null } {
    let c = this.checks.get(id);
    if (!c) {
      const f = this.entries.get(id)?.program ?? null;
      const copy = f && this.privateCopies ? path.join(processGuard.privateDir('program-'), path.basename(f.path)) : null;
      const why = refusal(f, 'program', copy);
      c = { why, run: why || !f ? null : (copy ?? f.path) };
      this.checks.set(id, c);
    }
    return c;
  }

  cost() {
    return { compileS: 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [] };
  }

  notes(): string[] {
    return [];
  }

  async measure(points: SweepPoint[], ctx: RunnerContext): Promise<SweepVariant[]> {
    return points.map(p => {
      const x = this.entries.get(pointId(p));
      let v: SweepVariant = x ? structuredClone(x.variant) : { ...emptyVariant(p, 'runtime'), message: 'not in the manifest' };
      const why = x && v.status === 'ok' ? this.check(pointId(p)).why : null;
      if (why) v = { ...v, status: 'runtime', message: why };
      const same = v.status === 'ok' ? ctx.registry.claim(x!.codeHash, v) : null;
      if (same) v.identicalTo = same.id;
      ctx.onVariant?.(v);
      return v;
    });
  }
}

/** The manifest's programs and timer library as the GPU runner takes them (only those that passed their hash check run). */
function preparedOf(m: SlurmManifest, entries: Map<string, PreparedPoint>): PreparedPrograms {
  const sass = new ManifestSass(entries, !m.spec.gpu.launcher?.length);
  const built = (p: SweepPoint): BuildResult | undefined => {
    const f = entries.get(pointId(p))?.program;
    const run = f ? sass.check(pointId(p)).run : null;
    if (!f || !run) return undefined;
    return {
      key: pointId(p),
      status: 'ok',
      hash: f.sha256,
      outputPath: run,
      ptxasLog: '',
      messages: [],
      failureKind: null,
      compileMs: 0,
      cached: true,
    };
  };
  const lib = m.timerLibrary;
  return {
    sass,
    programs: points => points.map(p => Promise.resolve(built(p))),
    timerLibrary: async () => {
      if (!lib) throw new TimerUnavailableError('the CUPTI timer library was not built before submission');
      if ('problem' in lib) throw new TimerUnavailableError(lib.problem);
      const why = refusal(lib, 'CUPTI timer library');
      if (why) throw new TimerUnavailableError(why);
      return lib;
    },
  };
}

/** A runner that runs no nvcc: a task builds nothing (its programs come built), and says so if anything tries. */
function withoutNvcc(run: ProcessRunner): ProcessRunner {
  return (command, args, o) =>
    path.basename(command) === 'nvcc'
      ? Promise.reject(new Error('a Slurm task runs no nvcc: its programs were built before submission'))
      : run(command, args, o);
}

/** A path from the manifest, when it is there on this node (else the tool is looked for as usual). */
const here = (p: string | null) => (p && fs.existsSync(p) ? p : undefined);

/** The node's tools: ncu (the submitting machine's path first), nvidia-smi and its GPUs; no nvcc looked for or run. */
export async function taskToolchain(spec: SlurmSweepSpec): Promise<Toolchain> {
  const runner = withoutNvcc(runProcess);
  const o = { projectToolsBin: defaultProjectToolsBin(), paths: { ncu: here(spec.tools.ncu) }, runner };
  const [ncu, nvidiaSmi, cxxfilt] = await Promise.all([
    findOptionalTool('ncu', o),
    findOptionalTool('nvidia-smi', o),
    findOptionalTool('c++filt', o),
  ]);
  const gpus = nvidiaSmi ? await readGpus(nvidiaSmi.path, runner) : [];
  // the version the programs were built with; its path is never run here
  const nvcc = { name: 'nvcc' as const, path: 'nvcc', version: spec.versions.nvcc || null, source: 'setting' as const };
  return { nvcc, cuobjdump: null, nvdisasm: null, ncu, nvidiaSmi, cxxfilt, gpus, runner };
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
 * against its output; the measurement cache usually answers for it). The task holding it also
 * samples its stalls per source line when the sweep asks, and writes them before its result.
 */
export async function runSlurmTask(
  m: SlurmManifest,
  index: number,
  env: { analysis: FileAnalysis; toolchain: Toolchain; signal?: AbortSignal; log?: (line: string) => void; job?: string | null },
): Promise<{ written: number; points: number }> {
  // the process's start: node's own start-up is part of the task's time
  const startedAt = Math.round(performance.timeOrigin);
  const task = m.tasks.find(t => t.index === index);
  if (!task) throw new Error(`the manifest has no task ${index}`);
  const spec = m.spec;
  // the manifest is sealed by this user's key, but its factors are JSON again: a list once more
  const factors = spec.factors && UnrollFactors.of(spec.factors);
  const space = resolveSpace(env.analysis, spec.file, { ...spec, factors });
  const entries = new Map([m.asWritten, ...task.points].map(x => [pointId(x.point), x]));
  const o = { ...spec, factors, analysis: env.analysis, toolchain: env.toolchain, signal: env.signal };
  // on the node, Slurm picks the GPU (CUDA_VISIBLE_DEVICES): the default device, no placement of ours
  const runner = new GpuRunner({
    ...staticOptionsOf(o, space),
    gpu: { ...spec.gpu, gpus: undefined },
    params: space.macroParams,
    paramDefaults: space.defaults(spec.text),
    prepared: preparedOf(m, entries),
  });
  const on = await measuredOn(env.toolchain, env.job ?? null, env.toolchain.runner);
  env.log?.(`task ${index} on ${on.host}${on.gpu ? ` (${on.gpu})` : ''}: ${task.points.length} points, programs built before submission`);
  const mine = new Set(task.points.map(x => pointId(x.point)));
  const points = [AS_WRITTEN, ...task.points.map(x => x.point).filter(p => pointId(p) !== AS_WRITTEN_ID)];
  const registry = new RecordingRegistry(true);
  const stalls = !!spec.gpu.sourceStalls && mine.has(AS_WRITTEN_ID);
  let written = 0;
  const write = (v: SweepVariant) => {
    writeResult(m.sweepDir, { id: v.id, variant: { ...v, measuredOn: on }, codeHash: registry.hashes.get(v.id) ?? null, measuredOn: on });
    written++;
    env.log?.(`${v.id}: ${v.status}${v.medianMs !== null ? ` ${v.medianMs} ms` : ''}`);
  };
  const held: SweepVariant[] = [];
  try {
    await runner.measure(points, {
      signal: env.signal,
      registry,
      onPhase: (p, phase, detail) => env.log?.(`${pointId(p)}: ${phase}${detail ? ` ${detail}` : ''}`),
      onVariant: v => {
        if (!mine.has(v.id)) return;
        // with per-line stalls asked, the file as written's result waits for them: its result there means they are too
        if (stalls && v.id === AS_WRITTEN_ID) held.push(v);
        else write(v);
      },
    });
    if (held.length && !env.signal?.aborted) {
      env.log?.('as-written: stalls per source line');
      writeSourceStalls(m.sweepDir, await runner.sourceStalls(spec.text, env.signal));
      if (!env.signal?.aborted) write(held[0]);
    }
  } finally {
    if (env.job) writeTaskCost(m.sweepDir, { job: env.job, host: on.host, startedAt, endedAt: Date.now(), cost: runner.cost() });
  }
  return { written, points: task.points.length };
}
