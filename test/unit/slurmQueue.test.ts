// The Slurm sweep's side of the queue (issue 28) against a stand-in for sbatch/squeue/sacct/scancel:
// argv never through a shell, task states parsed, a task gone from the queue taken as ended, a
// re-run adopting tasks still queued, cancel running scancel and waiting until nothing is queued.
import { test } from 'node:test';
import * as assert from 'assert';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { arraySpec, cancelJobs, parseSqueue, queueState, sbatchArgs, SlurmOptions } from '../../src/engine/sweep/slurm/queue';
import { jobScript, readQueued, readResult, writeQueued, writeResult, writeTaskCost } from '../../src/engine/sweep/slurm/manifest';
import { runTimingText } from '../../src/schema/runTimingText';
import { SlurmRunner } from '../../src/engine/sweep/slurm/runner';
import { CodeRegistry, emptyVariant } from '../../src/engine/sweep/variant';
import { AS_WRITTEN } from '../../src/engine/sweep/space';

const OPTS: SlurmOptions = {
  partition: 'gpu',
  account: 'lab',
  time: '30',
  gpusPerTask: 1,
  arrayMax: 4,
  pointsPerTask: 1,
  extra: ['--qos=high; rm -rf /'],
  pollSeconds: 1,
};

function result(stdout: string, exitCode = 0, stderr = ''): ProcessResult {
  return { command: '', args: [], exitCode, signal: null, stdout, stderr, timedOut: false, cancelled: false, durationMs: 1 };
}

test('sbatch argv: each option its own element, the extra ones before the script, --array with its limit', () => {
  const a = sbatchArgs(OPTS, { name: 'n', indices: [1, 2, 3, 5], script: '/s/job.sh', logDir: '/s/logs', chdir: '/s', after: '7' });
  assert.deepEqual(a, [
    '--parsable',
    '--job-name=n',
    '--array=1-3,5%4',
    '--output=/s/logs/%A_%a.out',
    '--chdir=/s',
    '--partition=gpu',
    '--account=lab',
    '--time=30',
    '--gres=gpu:1',
    '--dependency=afterany:7',
    '--qos=high; rm -rf /',
    '/s/job.sh',
  ]);
  assert.equal(arraySpec([0]), '0');
  assert.ok(
    !sbatchArgs({ ...OPTS, gpusPerTask: 0, partition: '' }, { name: 'n', indices: [0], script: 's', logDir: 'l', chdir: 'c' }).some(x =>
      /gres|partition/.test(x),
    ),
  );
});

test('squeue lines: states, nodes, reasons, pending ranges expanded', () => {
  const t = parseSqueue('12_0|COMPLETED|n1|None\n12_1|CANCELLED by 0|n2|None\n12_[2-3%1]|PENDING||JobArrayTaskLimit\n');
  assert.deepEqual(
    t.map(x => [x.id, x.state, x.node, x.reason]),
    [
      ['12_0', 'COMPLETED', 'n1', null],
      ['12_1', 'CANCELLED', 'n2', null],
      ['12_2', 'PENDING', null, 'JobArrayTaskLimit'],
      ['12_3', 'PENDING', null, 'JobArrayTaskLimit'],
    ],
  );
});

test('the job script quotes its paths for sh and drops our run marker', () => {
  const s = jobScript(["/opt/node's/node", '/x/cli.js'], '/shared/m $(x).json');
  assert.match(
    s,
    /exec env -u UNROLL_LENS_RUN '\/opt\/node'\\''s\/node' '\/x\/cli.js' slurm-task '\/shared\/m \$\(x\)\.json' "\$SLURM_ARRAY_TASK_ID"/,
  );
});

test('queue state: squeue first, sacct for a job squeue forgot; cancel waits until every task has ended', async () => {
  const calls: string[][] = [];
  let cancelled = false;
  const run: ProcessRunner = async (cmd, args) => {
    calls.push([cmd, ...args]);
    if (cmd === 'scancel') return ((cancelled = true), result(''));
    if (cmd === 'squeue')
      return args.includes('5') ? result(cancelled ? '5_0|CANCELLED|n|None\n' : '5_0|RUNNING|n|None\n') : result('', 1, 'Invalid job id');
    return result('6_0|TIMEOUT|n3|None\n');
  };
  const s = await queueState(run, ['5', '6']);
  assert.equal(s.get('5_0')?.state, 'RUNNING');
  assert.equal(s.get('6_0')?.state, 'TIMEOUT');
  await cancelJobs(run, ['5']);
  assert.ok(calls.some(c => c[0] === 'scancel' && c[1] === '5'));
  assert.equal((await queueState(run, ['5'])).get('5_0')?.state, 'CANCELLED');
});

test('results: sealed, whole; a re-run adopts tasks still queued instead of submitting them again', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-slurmq-'));
  try {
    const spec = {
      file: '/f.cu',
      text: 'x',
      arch: 'sm_90',
      flags: { args: [], arch: null, source: '', directory: '/', warnings: [] },
      cacheDir: root,
      gpu: { args: [], samples: 5, warmup: 1, clockControl: 'base', cacheControl: 'all', timeoutMs: 1000, launcher: [] },
      tools: { ncu: null },
      versions: { nvcc: '13.0', ncu: null },
    } as never;
    const calls: string[][] = [];
    let finished = false;
    const run: ProcessRunner = async (cmd, args) => {
      calls.push([cmd, ...args]);
      if (cmd === 'squeue') return result(finished ? '9_0|COMPLETED|n|None\n' : '9_0|RUNNING|n|None\n');
      return result('', 1, 'unexpected');
    };
    const runner = new SlurmRunner({ spec, sharedRoot: root, slurm: OPTS, command: ['node', 'cli'], run });
    writeQueued(runner.dir, [{ job: '9', tasks: { '0': ['as-written'] }, folder: path.join(runner.dir, 'jobs', 'a'), submittedAt: 1000 }]);
    const on = { host: 'n', gpu: 'NVIDIA H100', clocks: null, job: '9_0' };
    const v = { ...emptyVariant(AS_WRITTEN, 'ok'), medianMs: 1 };
    const landing = setTimeout(() => {
      writeResult(runner.dir, { id: 'as-written', variant: v, codeHash: 'h', measuredOn: on });
      const cost = { compileS: 0, checkS: 0.5, profileS: 4, gpuIdleS: 1, gpuRuns: 2, gpus: [null] };
      writeTaskCost(runner.dir, { job: '9_0', host: 'n', startedAt: 3000, endedAt: 9000, cost });
      finished = true;
    }, 300);
    const out = await runner.measure([AS_WRITTEN], { registry: new CodeRegistry(true) });
    clearTimeout(landing);
    assert.equal(out[0].status, 'ok');
    assert.deepEqual(out[0].measuredOn, on);
    assert.ok(!calls.some(c => c[0] === 'sbatch'), 'nothing submitted: the earlier run’s task was waited for');
    assert.deepEqual(readQueued(runner.dir), []);
    assert.equal(readResult(runner.dir, 'as-written')?.variant.medianMs, 1);
    assert.equal(runner.gpu, 'NVIDIA H100');
    // its cost: what the task reported, and its queue time from when the earlier run submitted it
    const c = runner.cost();
    assert.deepEqual([c.checkS, c.profileS, c.gpuRuns, c.compileS], [0.5, 4, 2, 0]);
    assert.deepEqual(c.slurm, { tasks: 1, reported: 1, queueS: 2, taskS: 6 });
    // an edited result is no result
    const f = fs.readdirSync(path.join(runner.dir, 'results'))[0];
    const file = path.join(runner.dir, 'results', f);
    const before = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, before.replace('medianMs\\":1', 'medianMs\\":0.5'));
    assert.notEqual(fs.readFileSync(file, 'utf8'), before);
    assert.equal(readResult(runner.dir, 'as-written'), null);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a task still ending when its result lands gets a few seconds to leave the queue: its folder goes with it', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'unroll-lens-slurmq-'));
  try {
    const spec = {
      file: '/f.cu',
      text: 'x',
      arch: 'sm_90',
      flags: { args: [], arch: null, source: '', directory: '/', warnings: [] },
      cacheDir: root,
      gpu: { args: [], samples: 5, warmup: 1, clockControl: 'base', cacheControl: 'all', timeoutMs: 1000, launcher: [] },
      tools: { ncu: null },
      versions: { nvcc: '13.0', ncu: null },
    } as never;
    // RUNNING until the result lands, then COMPLETING for two looks (slurmd writing the log), then gone
    let landed = false;
    let looksSinceLanding = 0;
    const run: ProcessRunner = async cmd => {
      if (cmd === 'squeue') {
        if (!landed) return result('9_0|RUNNING|n|None\n');
        return result(++looksSinceLanding <= 2 ? '9_0|COMPLETING|n|None\n' : '9_0|COMPLETED|n|None\n');
      }
      return result('', 1, 'unexpected');
    };
    const runner = new SlurmRunner({ spec, sharedRoot: root, slurm: OPTS, command: ['node', 'cli'], run });
    const folder = path.join(runner.dir, 'jobs', 'mx7ymhke-6d4942');
    fs.mkdirSync(path.join(folder, 'logs'), { recursive: true });
    for (const f of ['manifest.json', 'job.sh', 'logs/9_0.out']) fs.writeFileSync(path.join(folder, f), 'x');
    writeQueued(runner.dir, [{ job: '9', tasks: { '0': ['as-written'] }, folder, submittedAt: 1000 }]);
    const landing = setTimeout(() => {
      const v = { ...emptyVariant(AS_WRITTEN, 'ok'), medianMs: 1 };
      writeResult(runner.dir, {
        id: 'as-written',
        variant: v,
        codeHash: 'h',
        measuredOn: { host: 'n', gpu: null, clocks: null, job: '9_0' },
      });
      landed = true;
    }, 300);
    const out = await runner.measure([AS_WRITTEN], { registry: new CodeRegistry(true) });
    clearTimeout(landing);
    assert.equal(out[0].status, 'ok');
    assert.ok(looksSinceLanding >= 3, `the queue looked at until the task ended (${looksSinceLanding} looks)`);
    assert.deepEqual(readQueued(runner.dir), []);
    assert.equal(fs.existsSync(folder), false, 'the submission folder is removed');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('the run cost of a Slurm sweep says whose each number is, never a zero for what nobody measured', () => {
  const t = { wallS: 120, compileS: 3, checkS: 1.5, profileS: 40, gpuIdleS: 2, gpuRuns: 6, gpus: [] };
  assert.equal(
    runTimingText({ ...t, slurm: { tasks: 4, reported: 3, queueS: 12, taskS: 65 } }),
    'run: 2 min wall · compile 3.0 s here · Slurm: 4 tasks, queued 12.0 s, ran 1 min 5 s · check 1.5 s · profile 40.0 s · ' +
      'GPU idle 2.0 s · 6 GPU runs (3 of 4 tasks reported)',
  );
  const none = runTimingText({
    ...t,
    checkS: 0,
    profileS: 0,
    gpuIdleS: 0,
    gpuRuns: 0,
    slurm: { tasks: 2, reported: 0, queueS: null, taskS: null },
  })!;
  assert.match(none, /Slurm: 2 tasks, none reported its time \(queue, check and profile times unknown\)$/);
  assert.doesNotMatch(none, /check 0|profile 0|0 GPU runs/);
  assert.match(
    runTimingText({ ...t, slurm: { tasks: 0, reported: 0, queueS: null, taskS: null } })!,
    /compile 3\.0 s here · Slurm: nothing submitted/,
  );
  assert.match(
    runTimingText({ ...t, slurm: { tasks: 1, reported: 1, queueS: null, taskS: 5 } })!,
    /1 task, queue time unknown, ran 5\.0 s/,
  );
});
