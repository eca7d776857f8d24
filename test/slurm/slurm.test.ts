// The Slurm sweep against real Slurm (issue 28): a single-node cluster on localhost (test/slurm/
// cluster.ts), a GPU sweep of matmul_basic's loop built on the submitting side (nvcc, through a
// wrapper that logs every run with the Slurm job it ran in, if any) and submitted through sbatch,
// its tasks running the programs on the "node", the GPU runs replaying H100 recordings through the
// stand-in GPU (test/fixtures/fake-gpu, slowed so a task can be killed midway). One task is
// scancelled while it runs; the re-run submits only what is missing. No task ran nvcc, each
// program was built once, every point was measured exactly once over both runs, the results equal
// a local run of the same sweep, and nothing is left queued, running or half-written. Skipped when not root or Slurm is missing,
// except under CI=true, where it must run (.ci/run installs slurm-wlm).
import { test } from 'node:test';
import * as assert from 'assert';
import { spawn, execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { slurmMissing, startCluster } from './cluster';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const FAKE = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-gpu');
/** Each ncu run of the stand-in GPU takes this long: time to cancel a task while it runs. */
const RUN_DELAY_MS = 4000;

/** A launcher in front of the stand-in GPU: each profiling run waits, then logs its program once it has finished (`stalls PROGRAM` for a per-line stalls run). */
function wrapper(file: string, log: string): void {
  fs.writeFileSync(
    file,
    `#!${process.execPath}
'use strict';
const fs = require('fs');
const { execFileSync } = require('child_process');
const args = process.argv.slice(2);
const profiling = args.length > 0 && args[0].endsWith('/ncu') && !args.includes('--version') && !args.includes('--import');
if (profiling) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${RUN_DELAY_MS});
const out = execFileSync(${JSON.stringify(path.join(FAKE, 'launcher'))}, ['--scale', '4=0.6,1=1.8', ...args], { maxBuffer: 1 << 28 });
process.stdout.write(out);
if (profiling) {
  const program = args.slice(1).find(a => a.startsWith('/') && fs.existsSync(a) && fs.statSync(a).isFile());
  fs.appendFileSync(${JSON.stringify(log)}, (args.includes('SourceCounters') ? 'stalls ' : '') + program + '\\n');
}
`,
    { mode: 0o755 },
  );
}

/** nvcc in front of the real one: logs each run (the sweep's phase, the Slurm job it ran in or "-", its arguments). */
function nvccWrapper(file: string, log: string): void {
  const real = execFileSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(
    file,
    `#!/bin/sh\necho "\${UL_PHASE:-?} \${SLURM_JOB_ID:--} $*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(real)} "$@"\n`,
    { mode: 0o755 },
  );
}

/** The nvcc runs of a phase that built something (a cubin or a program; not --version and the like), by where they ran. */
function builds(log: string, phase: string): { job: string; program: boolean }[] {
  const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return lines
    .map(l => l.split(' '))
    .filter(w => w[0] === phase && w.some(a => a.endsWith('/variant.cu')))
    .map(w => ({ job: w[1], program: !w.includes('-cubin') }));
}

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function sweep(root: string, extra: string[], env: Record<string, string>, during?: () => Promise<void>): Promise<Run> {
  const args = [CLI, 'sweep', path.join(root, 'matmul_unroll.cu'), '--loops', '51', '--factors', '1,2,4', '--arch', 'sm_90'];
  args.push('--timer', 'ncu', '--samples', '20', '--source-stalls', '--json', ...extra);
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PATH: `${root}/bin:${process.env.PATH}`, XDG_CACHE_HOME: path.join(root, 'xdg') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', d => (out += d));
  child.stderr.on('data', d => (err += d));
  const done = new Promise<Run>(r => child.on('close', code => r({ code, out, err })));
  return during ? during().then(() => done) : done;
}

/** What a result must agree on, per variant. */
function summary(json: string): unknown {
  const r = JSON.parse(json) as Record<string, unknown> & { variants: Record<string, unknown>[]; best: { id: string } | null };
  const keys = ['id', 'status', 'kernelInstructions', 'registers', 'identicalTo', 'samples', 'medianMs', 'iqrMs', 'speedup', 'stallShare'];
  return {
    best: r.best?.id ?? null,
    variants: r.variants.map(v => Object.fromEntries(keys.map(k => [k, v[k]]))),
    // --source-stalls: sampled by the task that measured the file as written, as a local run samples them
    lineStalls: [r.lineStalls, r.lineStallsSource, r.lineStallsProblem ?? null],
  };
}

function squeue(env: Record<string, string>): string[][] {
  const out = execFileSync('squeue', ['-h', '-r', '-t', 'all', '-o', '%i|%T|%j'], { env: { ...process.env, ...env }, encoding: 'utf8' });
  return out
    .split('\n')
    .filter(Boolean)
    .map(l => l.split('|'));
}

test('a GPU sweep through real Slurm: one task scancelled midway, the re-run submits only what is missing, results equal a local run', async t => {
  const why = slurmMissing();
  if (why) {
    if (process.env.CI === 'true') assert.fail(`CI must run the Slurm test: ${why}`);
    return t.skip(why);
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-slurm-'));
  const started = Date.now();
  const cluster = await startCluster(path.join(root, 'cluster'));
  try {
    fs.mkdirSync(path.join(root, 'bin'));
    fs.symlinkSync(path.join(FAKE, 'ncu'), path.join(root, 'bin', 'ncu'));
    const nvccLog = path.join(root, 'nvcc-runs.log');
    nvccWrapper(path.join(root, 'bin', 'nvcc'), nvccLog);
    fs.copyFileSync(path.join(REPO_ROOT, 'cuda-samples', 'matmul_unroll.cu'), path.join(root, 'matmul_unroll.cu'));
    const slurmLog = path.join(root, 'slurm-runs.log');
    const localLog = path.join(root, 'local-runs.log');
    wrapper(path.join(root, 'slurm-launcher'), slurmLog);
    wrapper(path.join(root, 'local-launcher'), localLog);
    const shared = path.join(root, 'shared');
    const slurmArgs = ['--launcher', path.join(root, 'slurm-launcher'), '--shared-dir', shared, '--slurm'];
    slurmArgs.push('--gres-gpus', '0', '--array-max', '1', '--poll-seconds', '1', '--time', '10');

    // 1: submitted; the array's running task is scancelled once the first of its points has landed
    let killed = '';
    /** Tasks cancelled too late: they had written their result. */
    const missed: string[] = [];
    const results = () =>
      (fs.readdirSync(path.join(shared, 'slurm'), { recursive: true }) as string[]).filter(f => /results\/[0-9a-f]+\.json$/.test(f));
    const jobsWithResults = () =>
      results().map(f => {
        const sealed = JSON.parse(fs.readFileSync(path.join(shared, 'slurm', f), 'utf8')) as { body: string };
        return (JSON.parse(sealed.body) as { measuredOn: { job: string } }).measuredOn.job;
      });
    const first = await sweep(root, slurmArgs, { ...cluster.env, UL_PHASE: 'first' }, async () => {
      const end = Date.now() + 300_000;
      while (!killed && Date.now() < end) {
        await new Promise(r => setTimeout(r, 300));
        if (!fs.existsSync(path.join(shared, 'slurm')) || results().length < 2) continue;
        // a task still measuring: RUNNING, and no result of it yet (one that has written its result may still be listed)
        const done = jobsWithResults();
        const running = squeue(cluster.env).find(([id, state]) => state === 'RUNNING' && !done.includes(id) && !missed.includes(id));
        if (running) {
          execFileSync('scancel', [running[0]], { env: { ...process.env, ...cluster.env } });
          // The task may have written its result between the look and the cancel (its point is
          // not lost then): only a task with no result a moment after the cancel counts.
          await new Promise(r => setTimeout(r, 1500));
          if (jobsWithResults().includes(running[0])) missed.push(running[0]);
          else killed = running[0];
        }
      }
    });
    assert.ok(killed, `no task was running to cancel; stderr: ${first.err}\n${cluster.log()}`);
    assert.equal(first.code, 0, first.err);
    const r1 = JSON.parse(first.out) as { variants: { id: string; status: string; message?: string }[] };
    const lost = r1.variants.filter(v => v.status !== 'ok');
    assert.equal(lost.length, 1, `one point lost to the cancelled task: ${JSON.stringify(r1.variants)}`);
    assert.match(lost[0].message ?? '', new RegExp(`Slurm task ${killed} ended CANCELLED`));

    // 2: the re-run submits only the lost point
    const second = await sweep(root, slurmArgs, { ...cluster.env, UL_PHASE: 'second' });
    assert.equal(second.code, 0, second.err);
    const jobs = new Map<string, number>();
    for (const [id] of squeue(cluster.env)) jobs.set(id.split('_')[0], (jobs.get(id.split('_')[0]) ?? 0) + 1);
    assert.deepEqual(
      [...jobs].sort((a, b) => Number(a[0]) - Number(b[0])).map(([, n]) => n),
      [1, 3, 1],
      'the file as written, the array of 3, then the one lost point',
    );

    // built here, before submission, once: no task ran nvcc (every nvcc run logged outside a Slurm job), the
    // first run built each of the 4 programs (and their cubins) once, the re-run built nothing
    const firstBuilds = builds(nvccLog, 'first');
    assert.deepEqual(
      firstBuilds.filter(b => b.job !== '-'),
      [],
      'no Slurm task ran nvcc',
    );
    assert.equal(firstBuilds.filter(b => b.program).length, 4, fs.readFileSync(nvccLog, 'utf8'));
    assert.equal(firstBuilds.filter(b => !b.program).length, 4, fs.readFileSync(nvccLog, 'utf8'));
    assert.deepEqual(builds(nvccLog, 'second'), [], 'the re-run built nothing: its programs were in the shared build cache');
    assert.ok(
      !fs
        .readFileSync(nvccLog, 'utf8')
        .split('\n')
        .some(l => /^\S+ \d+ /.test(l)),
      'no nvcc run at all inside a Slurm job',
    );

    // every point measured exactly once over both runs, and the file as written's stalls per source line sampled once
    const logged = fs.readFileSync(slurmLog, 'utf8').trim().split('\n');
    const runs = logged.filter(l => !l.startsWith('stalls '));
    assert.equal(runs.length, 4, logged.join('\n'));
    assert.equal(new Set(runs).size, 4, `a program measured twice:\n${logged.join('\n')}`);
    assert.equal(logged.length - runs.length, 1, `one per-line stalls run:\n${logged.join('\n')}`);

    // what the runs cost: the tasks' own reports, never zeros for what nobody measured
    type Cost = { timing: { slurm: { tasks: number; reported: number; queueS: number | null; taskS: number | null }; gpuRuns: number } };
    const c1 = (JSON.parse(first.out) as Cost).timing;
    const c2 = (JSON.parse(second.out) as Cost).timing;
    assert.equal(c1.slurm.tasks, 4);
    assert.ok(c1.slurm.reported >= 3 && c1.slurm.queueS !== null && c1.slurm.taskS! > 0 && c1.gpuRuns >= 3, JSON.stringify(c1));
    assert.deepEqual([c2.slurm.tasks, c2.slurm.reported], [1, 1], JSON.stringify(c2));

    // 3: the same sweep here (no Slurm) gives the same results
    const local = await sweep(root, ['--launcher', path.join(root, 'local-launcher'), '--shared-dir', path.join(root, 'local')], {
      UL_PHASE: 'local',
    });
    assert.equal(local.code, 0, local.err);
    assert.deepEqual(summary(second.out), summary(local.out));

    // nothing queued or running, no half-written file, no submission folder left
    assert.deepEqual(
      squeue(cluster.env).filter(([, s]) => !['COMPLETED', 'CANCELLED', 'FAILED'].includes(s)),
      [],
    );
    const left = (fs.readdirSync(path.join(shared, 'slurm'), { recursive: true }) as string[]).filter(f =>
      /\.tmp$|queued\.json$|jobs\/./.test(f),
    );
    assert.deepEqual(left, []);
    t.diagnostic(`slurm stage: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await cluster.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
});
