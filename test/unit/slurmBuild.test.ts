// A Slurm sweep builds once, before submission (issue 28): with a stand-in for sbatch/squeue and
// real nvcc, every point's SASS and program are built on the submitting side into the shared
// build cache; the manifest names each program with its hash; a point whose build fails is its
// final result and is not submitted, nor is one with an earlier point's machine code (it takes
// that point's timing); a re-run builds nothing again. On the node side, a task runs nothing of a
// program whose hash differs from the manifest's (and never nvcc): the point says why.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { runSweep } from '../../src/engine/sweep/sweep';
import { slurmSweepRunner } from '../../src/engine/sweep/slurm/factory';
import { readManifest, readResult, SlurmManifest, writeResult } from '../../src/engine/sweep/slurm/manifest';
import { runSlurmTask } from '../../src/engine/sweep/slurm/task';
import type { SlurmOptions } from '../../src/engine/sweep/slurm/queue';
import { hashFile } from '../../src/engine/variants/cache';
import type { GpuRunConfig } from '../../src/engine/gpu/options';
import { UnrollFactors } from '../../src/engine/variants/factors';

const SRC = `#include <cstdio>
#ifndef FAIL
#define FAIL 0
#endif
#if FAIL
#error FAIL=1 does not build
#endif
__global__ void k(float* y) {
  for (int i = 0; i < 4; ++i) y[i] *= 2.0f;
}
int main() { k<<<1, 1>>>(nullptr); printf("kernel=k checksum=0\\n"); return 0; }
`;

const SLURM: SlurmOptions = {
  partition: '',
  account: '',
  time: '',
  gpusPerTask: 0,
  arrayMax: 0,
  pointsPerTask: 1,
  extra: [],
  pollSeconds: 1,
};
const GPU: GpuRunConfig = {
  args: [],
  samples: 5,
  warmup: 1,
  clockControl: 'base',
  cacheControl: 'all',
  timeoutMs: 10_000,
  launcher: [],
  timer: 'ncu',
};

function result(stdout: string, exitCode = 0): ProcessResult {
  return { command: '', args: [], exitCode, signal: null, stdout, stderr: '', timedOut: false, cancelled: false, durationMs: 1 };
}

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

/** A stand-in Slurm whose tasks "measure" each point they are given (1 ms): what was submitted is what matters here. */
function standIn() {
  const manifests: SlurmManifest[] = [];
  const arrays = new Map<string, number[]>();
  const run: ProcessRunner = async (cmd, args) => {
    if (cmd === 'sbatch' && args.includes('--test-only')) return result(''); // the options checked first: taken
    if (cmd === 'sbatch') {
      const m = readManifest(path.join(path.dirname(args[args.length - 1]), 'manifest.json'));
      const job = String(100 + arrays.size);
      const indices = /--array=([\d,-]+)/
        .exec(args.join(' '))![1]
        .split(',')
        .flatMap(r => {
          const [a, b = a] = r.split('-').map(Number);
          return Array.from({ length: b - a + 1 }, (_, i) => a + i);
        });
      arrays.set(job, indices);
      if (!manifests.includes(m) && !manifests.some(x => JSON.stringify(x) === JSON.stringify(m))) manifests.push(m);
      const on = { host: 'node1', gpu: null, clocks: null, job };
      for (const i of indices)
        for (const x of m.tasks[i].points)
          writeResult(m.sweepDir, {
            id: x.variant.id,
            variant: { ...x.variant, samples: 5, medianMs: 1 },
            codeHash: x.codeHash,
            measuredOn: on,
          });
      return result(`${job}\n`);
    }
    if (cmd === 'squeue') {
      const job = args[args.indexOf('-j') + 1];
      return result((arrays.get(job) ?? []).map(i => `${job}_${i}|COMPLETED|node1|None\n`).join(''));
    }
    return result('', 1);
  };
  return { run, manifests };
}

test('a Slurm sweep builds every program here before submitting; build failures and identical code are not submitted', async t => {
  if (skip) return t.skip(skip);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-slurm-build-'));
  try {
    const file = path.join(root, 'k.cu');
    fs.writeFileSync(file, SRC);
    const analysis = await analyze(SRC, file);
    const nvccRuns: string[][] = [];
    const toolchain: Toolchain = {
      ...real!,
      ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
      runner: (cmd, args, o) => {
        if (cmd === real!.nvcc.path) nvccRuns.push(args);
        return real!.runner(cmd, args, o);
      },
    };
    const shared = path.join(root, 'shared');
    const sweep = (s: ReturnType<typeof standIn>) =>
      runSweep({
        file,
        text: SRC,
        analysis,
        kernel: 'k',
        loops: [lineOf(SRC, 'for (int i')],
        factors: UnrollFactors.of([4, 'full']),
        params: { FAIL: ['0', '1'] },
        toolchain,
        arch: 'sm_90',
        flags: { args: [], arch: null, source: 'default', directory: root, warnings: [] } as never,
        cacheDir: path.join(shared, 'builds'),
        gpu: GPU,
        runner: slurmSweepRunner({ slurm: SLURM, sharedRoot: shared, command: ['node', 'cli'], run: s.run }),
      });
    const first = standIn();
    const r = await sweep(first);
    const byId = new Map(r.variants.map(v => [v.id, v]));
    const fail = r.variants.filter(v => v.params.FAIL === '1');
    assert.equal(fail.length, 2);
    for (const v of fail) {
      assert.equal(v.status, 'compile', JSON.stringify(v));
      assert.match(v.message ?? '', /FAIL=1 does not build/);
    }
    // the file as written, then the one point with new machine code: nothing else was submitted
    const submitted = first.manifests.flatMap(m => m.tasks.flatMap(x => x.points.map(p => p.variant.id)));
    const four = r.variants.find(v => v.factors[Object.keys(v.factors)[0]] === 4 && v.params.FAIL === '0')!;
    const full = r.variants.find(v => v.factors[Object.keys(v.factors)[0]] === 'full' && v.params.FAIL === '0')!;
    assert.deepEqual(submitted.sort(), ['as-written', four.id].sort());
    assert.equal(full.identicalTo, four.id, 'unroll 4 and full unroll of a 4-trip loop are the same machine code');
    assert.equal(full.status, 'ok');
    assert.equal(full.medianMs, 1, "the copy takes its original's timing");
    assert.equal(readResult(first.manifests[0].sweepDir, full.id), null, 'no task measured the copy');
    assert.equal(byId.get('as-written')?.status, 'ok');
    // the manifest names each program built here, with the hash it has
    for (const m of first.manifests)
      for (const x of [m.asWritten, ...m.tasks.flatMap(y => y.points)]) {
        assert.ok(x.program, `${x.variant.id} has a program`);
        assert.ok(x.program.path.startsWith(path.join(shared, 'builds')), x.program.path);
        assert.equal(hashFile(x.program.path), x.program.sha256);
      }
    assert.ok(
      r.notes.some(n => /1 not submitted \(the machine code of an earlier point\), 2 not submitted \(their build failed here\)/.test(n)),
      r.notes.join('\n'),
    );
    assert.ok(r.timing?.slurm, 'the run cost says it is a Slurm sweep');
    const programs = nvccRuns.filter(a => !a.includes('-cubin') && a.some(x => x.endsWith('.cu')));
    assert.ok(programs.length >= 3, `programs built: ${programs.length}`);

    // a re-run: every result reused, nothing built again, nothing submitted
    nvccRuns.length = 0;
    const second = standIn();
    const r2 = await sweep(second);
    assert.equal(second.manifests.length, 0, 'nothing submitted');
    // (a failed compile without a dependency list is not stored by the build cache: the FAIL=1 points try again)
    assert.deepEqual(
      nvccRuns.filter(a => a.some(x => x.endsWith('.cu')) && !a.includes('-DFAIL=1')),
      [],
      'nothing that built is compiled again',
    );
    assert.deepEqual(
      r2.variants.map(v => [v.id, v.status, v.medianMs]),
      r.variants.map(v => [v.id, v.status, v.medianMs]),
    );

    // on the node: a program that changed since it was built is refused, and nothing is run for it
    const m = first.manifests.find(x => x.tasks.some(y => y.points.some(p => p.variant.id === four.id)))!;
    const task = m.tasks.find(y => y.points.some(p => p.variant.id === four.id))!;
    fs.rmSync(path.join(m.sweepDir, 'results'), { recursive: true, force: true });
    const tampered = path.join(root, 'tampered');
    fs.copyFileSync(task.points[0].program!.path, tampered);
    fs.appendFileSync(tampered, 'x');
    const forged: SlurmManifest = {
      ...m,
      asWritten: { ...m.asWritten, program: { ...m.asWritten.program!, path: tampered } },
      tasks: [{ ...task, points: task.points.map(p => ({ ...p, program: { ...p.program!, path: tampered } })) }],
    };
    const ran: string[] = [];
    const nodeTools: Toolchain = { ...toolchain, nvidiaSmi: null, runner: async cmd => (ran.push(cmd), result('', 1)) };
    await runSlurmTask(forged, task.index, { analysis, toolchain: nodeTools, job: '7_1' });
    assert.deepEqual(ran, [], 'nothing run: neither the refused program nor nvcc');
    const refused = readResult(m.sweepDir, four.id);
    assert.equal(refused?.variant.status, 'runtime');
    assert.match(refused?.variant.message ?? '', /refused to run the program .*sha256 .*re-run the sweep/);

    // a program that passed its check runs from a private copy of the bytes checked (issue 37): a file
    // swapped in the shared folder after the check is never what runs
    const named: { arg: string; bytes: Buffer | null }[] = [];
    const recording: Toolchain = {
      ...nodeTools,
      runner: async (cmd, args) => {
        for (const a of [cmd, ...args])
          if (/program|\.out$|[/]k[^/]*$/.test(path.basename(a)) || a.includes('program-'))
            named.push({ arg: a, bytes: fs.existsSync(a) && fs.statSync(a).isFile() ? fs.readFileSync(a) : null });
        return result('', 1);
      },
    };
    await runSlurmTask(m, task.index, { analysis, toolchain: recording, job: '7_2' });
    const originals = [m.asWritten, ...task.points].map(x => x.program!.path);
    const runs = named.filter(n => n.arg.includes('program-'));
    assert.ok(runs.length > 0, `the program ran from a private copy: ${JSON.stringify(named.map(n => n.arg))}`);
    assert.ok(!named.some(n => originals.includes(n.arg)), 'never from the shared build cache itself');
    for (const r of runs)
      assert.ok(
        originals.some(o => r.bytes?.equals(fs.readFileSync(o))),
        'each copy is the bytes of a program that passed its check',
      );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
