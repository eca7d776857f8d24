// The editor's Slurm sweeps (issue 28): unrollLens.profile.slurm.* and sharedDirectory mapped to
// the engine's Slurm runner, combinations that cannot work refused with what to change, and the
// server's sweep request driven with a stand-in Slurm (real nvcc builds here, tasks that land
// their results over a few polls): partial results stream to the panel as points land, the
// progress shows each task's state, and cancelling runs scancel, says nothing is left queued.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { CancellationToken, Connection } from 'vscode-languageserver/node';
import { lineOf } from './helpers';
import { CudaDocuments } from '../../src/engine/parse/documents';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { readManifest, writeResult } from '../../src/engine/sweep/slurm/manifest';
import { ResultsService } from '../../src/server/results';
import { slurmOptionsFromSettings, slurmProblem, taskCommandFor } from '../../src/server/slurm';
import type { ServerToolchain } from '../../src/server/toolchain';
import type { DocumentFactsStore } from '../../src/server/facts';
import { DEFAULT_SETTINGS, Settings } from '../../src/settings';
import type { SweepResult } from '../../src/protocol';

const SRC = `#include <cstdio>
__global__ void k(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
int main() { k<<<1, 1>>>(nullptr, 0); printf("kernel=k checksum=0\\n"); return 0; }
`;

const P = DEFAULT_SETTINGS.profile;

test('settings → Slurm options: each as sbatch takes it; what cannot work is refused with what to change', () => {
  const o = slurmOptionsFromSettings({
    ...P.slurm,
    enabled: true,
    partition: ' gpu ',
    account: 'lab',
    time: '30',
    gpusPerTask: 2,
    pointsPerTask: 3,
    arrayMax: 4,
    extraArgs: ['--qos=high', ' '],
    pollSeconds: 5,
  });
  assert.deepEqual(o, {
    partition: 'gpu',
    account: 'lab',
    time: '30',
    gpusPerTask: 2,
    pointsPerTask: 3,
    arrayMax: 4,
    extra: ['--qos=high'],
    pollSeconds: 5,
  });
  assert.match(slurmProblem({ ...P, slurm: { ...P.slurm, enabled: true } })!, /needs unrollLens\.profile\.sharedDirectory/);
  const shared = { ...P, sharedDirectory: '/shared' };
  assert.equal(slurmProblem(shared), null);
  assert.match(slurmProblem({ ...shared, samples: 20, maxSamples: 100 })!, /adaptive sampling .*set it to 0/);
  assert.match(slurmProblem({ ...shared, gpus: '0,1' })!, /profile\.gpus does not apply/);
  // what the nodes run: the setting; else this checkout's CLI with node; else unroll-lens on the node's PATH
  assert.deepEqual(taskCommandFor({ ...P.slurm, taskCommand: ['/opt/node', '/opt/ul.js'] }), ['/opt/node', '/opt/ul.js']);
  const dev = taskCommandFor(P.slurm);
  assert.equal(dev[0], 'node');
  assert.match(dev[1], /bin\/unroll-lens\.js$/);
  assert.deepEqual(taskCommandFor(P.slurm, os.tmpdir()), ['unroll-lens']);
  // restricted under Workspace Trust: a workspace cannot turn on sbatch or name what the nodes run
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
    capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
  };
  const restricted = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  for (const k of ['enabled', 'taskCommand', 'partition', 'account', 'extraArgs'])
    assert.ok(restricted.includes(`unrollLens.profile.slurm.${k}`), k);
  assert.ok(restricted.includes('unrollLens.profile.sharedDirectory'));
});

let real: Toolchain | null = null;
let skip: string | false = false;
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

function result(stdout: string, exitCode = 0): ProcessResult {
  return { command: '', args: [], exitCode, signal: null, stdout, stderr: '', timedOut: false, cancelled: false, durationMs: 1 };
}

/**
 * A stand-in Slurm: each squeue poll moves every job's tasks on by one step (PENDING, RUNNING,
 * then COMPLETED with its points' results written), one task after the other; `stuck` keeps every
 * task RUNNING after the first until scancel.
 */
function standIn(stuck = false) {
  const calls: string[][] = [];
  const scripts: string[] = [];
  const jobs = new Map<string, { indices: number[]; manifest: string; step: number; cancelled: boolean; after?: string }>();
  const run: ProcessRunner = async (cmd, args) => {
    calls.push([cmd, ...args]);
    // asked before anything is built: would the scheduler take these options (nothing is queued)
    if (cmd === 'sbatch' && args.includes('--test-only')) return result('');
    if (cmd === 'sbatch') {
      const job = String(40 + jobs.size);
      const indices = /--array=([\d,-]+)/
        .exec(args.join(' '))![1]
        .split(',')
        .flatMap(r => {
          const [a, b = a] = r.split('-').map(Number);
          return Array.from({ length: b - a + 1 }, (_, i) => a + i);
        });
      const after = /--dependency=afterany:(\d+)/.exec(args.join(' '))?.[1];
      const manifest = path.join(path.dirname(args[args.length - 1]), 'manifest.json');
      scripts.push(fs.readFileSync(args[args.length - 1], 'utf8'));
      jobs.set(job, { indices, manifest, step: 0, cancelled: false, after });
      return result(`${job}\n`);
    }
    if (cmd === 'scancel') {
      for (const j of args) if (jobs.has(j)) jobs.get(j)!.cancelled = true;
      return result('');
    }
    if (cmd === 'squeue') {
      const id = args[args.indexOf('-j') + 1];
      const j = jobs.get(id);
      if (!j) return result('');
      // an array waits for the file as written's task (--dependency=afterany)
      const waiting = j.after !== undefined && (jobs.get(j.after)?.step ?? 0) < 2;
      if (!j.cancelled && !waiting) j.step++;
      const m = readManifest(j.manifest);
      return result(
        j.indices
          .map((i, k) => {
            const at = j.step - 2 * k; // task k runs at its step 1, ends at step 2
            if (j.cancelled && at < 2) return `${id}_${i}|CANCELLED|node1|None\n`;
            if (at <= 0) return `${id}_${i}|PENDING||${waiting ? 'Dependency' : 'JobArrayTaskLimit'}\n`;
            if (at === 1 || (stuck && (Number(id) > 40 || k > 0))) return `${id}_${i}|RUNNING|node1|None\n`;
            for (const x of m.tasks[i].points) {
              const on = { host: 'node1', gpu: 'NVIDIA H100 80GB HBM3', clocks: null, job: `${id}_${i}` };
              const v = { ...x.variant, samples: 5, medianMs: 1 + k, q1Ms: 1 + k, q3Ms: 1 + k, iqrMs: 0 };
              writeResult(m.sweepDir, { id: x.variant.id, variant: v, codeHash: x.codeHash, measuredOn: on });
            }
            return `${id}_${i}|COMPLETED|node1|None\n`;
          })
          .join(''),
      );
    }
    return result('', 1);
  };
  return { run, calls, scripts };
}

/** The results service over stubs: the connection keeps the panel's updates, the toolchain the progress lines. */
async function service(root: string, settings: Settings, run: ProcessRunner) {
  const file = path.join(root, 'k.cu');
  fs.writeFileSync(file, SRC);
  const analysis = (await CudaDocuments.create()).analyzeOnce(SRC, file);
  const updates: { result: SweepResult; progress: unknown }[] = [];
  const progress: string[] = [];
  const toolchain = {
    tools: async () => ({ ...real!, ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' } }),
    flagsFor: () => ({ args: [], arch: null, source: 'default', directory: root, warnings: [] }),
    archFor: () => 'sm_90',
    log: () => undefined,
    runRequest: async <T>(
      w: { token: CancellationToken },
      f: (signal: AbortSignal, report: (pc: number, m: string) => void) => Promise<T>,
    ): Promise<T> => {
      const ac = new AbortController();
      w.token.onCancellationRequested(() => ac.abort());
      return f(ac.signal, (_pc, m) => progress.push(m));
    },
  } as unknown as ServerToolchain;
  const connection = { sendNotification: (_t: unknown, p: { result: SweepResult; progress: unknown }) => updates.push(p) };
  const facts = { record: () => undefined } as unknown as DocumentFactsStore;
  const svc = new ResultsService(
    connection as unknown as Connection,
    toolchain,
    facts,
    () => settings,
    () => root,
    () => [root],
    run,
  );
  return { svc, file, analysis, updates, progress };
}

function token() {
  const listeners: (() => void)[] = [];
  const t = {
    isCancellationRequested: false,
    onCancellationRequested: (f: () => void) => (listeners.push(f), { dispose: () => undefined }),
  };
  return { token: t as unknown as CancellationToken, cancel: () => ((t.isCancellationRequested = true), listeners.forEach(f => f())) };
}

function slurmSettings(root: string, samples: number): Settings {
  return {
    ...DEFAULT_SETTINGS,
    profile: {
      ...P,
      timer: 'ncu',
      samples,
      sharedDirectory: path.join(root, 'shared'),
      slurm: { ...P.slurm, enabled: true, partition: 'gpu', pollSeconds: 1, taskCommand: ['/cluster/node', '/cluster/ul.js'] },
    },
  };
}

test("the editor's sweep on Slurm: built here, partial results as tasks land, each task's state in the progress; Cancel runs scancel", async t => {
  if (skip) return t.skip(skip);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-slurm-server-'));
  try {
    const slurm = standIn();
    const s = await service(root, slurmSettings(root, 5), slurm.run);
    const params = {
      uri: `file://${s.file}`,
      kernelLine: 2,
      loops: [lineOf(SRC, 'for (int i')],
      factors: ['1', '2'],
      runId: 'r1',
    };
    const r = await s.svc.sweep(params, SRC, s.analysis, token().token);
    assert.equal(r.result.complete, true);
    assert.deepEqual(
      r.result.variants.map(v => [v.status, v.measuredOn?.host]),
      [
        ['ok', 'node1'],
        ['ok', 'node1'],
        ['ok', 'node1'],
      ],
    );
    // submitted through sbatch with the settings' options, the job script running the settings' command
    const sbatch = slurm.calls.filter(c => c[0] === 'sbatch' && !c.includes('--test-only'));
    assert.equal(sbatch.length, 2, 'the file as written, then the array of the others');
    const asked = slurm.calls.filter(c => c[0] === 'sbatch' && c.includes('--test-only'));
    assert.ok(asked.length >= 1 && asked.every(c => c.includes('--partition=gpu')), 'the options were put to sbatch --test-only first');
    assert.ok(slurm.calls.indexOf(asked[0]) < slurm.calls.indexOf(sbatch[0]));
    assert.ok(sbatch.every(c => c.includes('--partition=gpu')));
    assert.match(
      slurm.scripts[0],
      /exec env -u UNROLL_LENS_RUN '\/cluster\/node' '\/cluster\/ul\.js' slurm-task '[^']+manifest\.json' "\$SLURM_ARRAY_TASK_ID"/,
    );
    const script = fs.readdirSync(path.join(root, 'shared', 'slurm'), { recursive: true }) as string[];
    assert.deepEqual(
      script.filter(f => f.endsWith('job.sh')),
      [],
      'the submission folders go once their tasks ended',
    );
    // the panel got the points as they landed, before the end
    const partial = s.updates.filter(u => u.progress !== null).map(u => u.result.variants.length);
    assert.ok(partial.length >= 2 && partial[0] < 3, `partial updates: ${partial.join(', ')}`);
    assert.equal(s.updates.at(-1)!.progress, null);
    // the progress said where each task was
    assert.ok(
      s.progress.some(m => /Slurm task 41_\d PENDING \(Dependency\)/.test(m)),
      s.progress.join('\n'),
    );
    assert.ok(s.progress.some(m => /Slurm task 41_\d RUNNING on node1/.test(m)));
    assert.ok(s.progress.some(m => /building 3 points here before submitting/.test(m)));
    assert.ok(
      r.result.notes.some(n => /measured on Slurm \(node1\): 3 points submitted/.test(n)),
      r.result.notes.join('\n'),
    );
    assert.equal(r.result.timing?.slurm?.tasks, 3);

    // cancelled while the array's tasks run: scancel, and the result says nothing is left queued
    const stuck = standIn(true);
    const c = await service(root, slurmSettings(root, 6), stuck.run);
    const tk = token();
    const running = c.svc.sweep({ ...params, runId: 'r2' }, SRC, c.analysis, tk.token);
    const end = Date.now() + 60_000;
    while (!c.updates.some(u => u.result.variants.length >= 1) && Date.now() < end) await new Promise(res => setTimeout(res, 100));
    tk.cancel();
    const rc = await running;
    assert.equal(rc.result.complete, false);
    const scancel = stuck.calls.filter(x => x[0] === 'scancel');
    assert.deepEqual(scancel, [['scancel', '41']], 'the array still running is cancelled');
    const note = rc.result.notes.find(n => n.startsWith('Slurm: cancelled'));
    assert.match(note ?? '', /scancel 41 ran and squeue lists none of this sweep's tasks queued or running/);
    assert.equal(c.updates.at(-1)!.progress, null, 'the last update carries the note to the command');
    assert.ok(c.updates.at(-1)!.result.notes.includes(note!));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a Slurm sweep the settings cannot run is refused before anything is built or submitted', async t => {
  if (skip) return t.skip(skip);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-slurm-server-'));
  try {
    const slurm = standIn();
    const settings = slurmSettings(root, 5);
    const s = await service(root, { ...settings, profile: { ...settings.profile, maxSamples: 50 } }, slurm.run);
    await assert.rejects(
      s.svc.sweep({ uri: `file://${s.file}`, kernelLine: 2, factors: ['1'], runId: 'r' }, SRC, s.analysis, token().token),
      /adaptive sampling \(unrollLens\.profile\.maxSamples\) does not work in a Slurm sweep/,
    );
    assert.deepEqual(slurm.calls, []);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
