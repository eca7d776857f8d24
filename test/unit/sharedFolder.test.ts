// A shared folder is hostile input (issue 37): on a cluster everyone in the group can write it, as
// a cloned repository is written by strangers. Each case here was reproduced first against the
// code before the fix, each in its own temp folders with a canary outside them, with stand-ins for
// sbatch/squeue (and for nvcc where a real compile proves nothing more): a swapped Slurm manifest,
// shell syntax in a shared folder's path, a planted CUPTI timer library, --keep-reports through a
// planted link, a re-run deleting through a jobs/ link, a killed writer's temporary file, a FIFO or
// /dev/zero where a file is read, and sbatch refusing the job.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { readManifest, readQueued, SlurmManifest, writeManifest, writeQueued, writeResult } from '../../src/engine/sweep/slurm/manifest';
import { SlurmRunner } from '../../src/engine/sweep/slurm/runner';
import { slurmSweepRunner } from '../../src/engine/sweep/slurm/factory';
import type { SlurmOptions } from '../../src/engine/sweep/slurm/queue';
import { runSweep } from '../../src/engine/sweep/sweep';
import { CodeRegistry, emptyVariant } from '../../src/engine/sweep/variant';
import { AS_WRITTEN } from '../../src/engine/sweep/space';
import { cuptiPaths, privateTimerCopy, timerLibrary, toolkitRoot, verifiedTimerLibrary } from '../../src/engine/gpu/cupti/timerLibrary';
import { timeNative } from '../../src/engine/gpu/cupti/timeNative';
import { exitCodeFor, EXIT } from '../../src/cli/io';
import { UnrollFactors } from '../../src/engine/variants/factors';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const KERNEL = '_Z12matmul_basicPKfS0_Pfi';
const CUPTI = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cupti');

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

// every key in a folder of this test: the user's own key is never touched, and a second key stands for another user
const KEYS = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-shared-keys-'));
const savedConfig = process.env.XDG_CONFIG_HOME;
before(() => {
  process.env.XDG_CONFIG_HOME = path.join(KEYS, 'me');
});
after(() => {
  if (savedConfig === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = savedConfig;
  fs.rmSync(KEYS, { recursive: true, force: true });
});

/** A temp root with `shared/` (the cluster's folder) and `outside/canary.txt` (what must survive). */
function sandbox(t: { after: (fn: () => void) => void }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-shared-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const shared = path.join(root, 'shared');
  const outside = path.join(root, 'outside');
  fs.mkdirSync(shared, { recursive: true });
  fs.mkdirSync(path.join(outside, 'victim'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'canary.txt'), 'canary');
  fs.writeFileSync(path.join(outside, 'victim', 'important.txt'), 'important');
  const intact = () => {
    assert.equal(fs.readFileSync(path.join(outside, 'canary.txt'), 'utf8'), 'canary', 'the canary outside is untouched');
    assert.equal(fs.readFileSync(path.join(outside, 'victim', 'important.txt'), 'utf8'), 'important', 'the folder outside is untouched');
  };
  return { root, shared, outside, intact };
}

function result(stdout: string, exitCode: number | null = 0, stderr = '', spawnError?: string): ProcessResult {
  return { command: '', args: [], exitCode, signal: null, stdout, stderr, timedOut: false, cancelled: false, durationMs: 1, spawnError };
}

const SPEC = (cacheDir: string) =>
  ({
    file: '/f.cu',
    text: 'x',
    arch: 'sm_90',
    flags: { args: [], arch: null, source: '', directory: '/', warnings: [] },
    cacheDir,
    gpu: { args: [], samples: 5, warmup: 1, clockControl: 'base', cacheControl: 'all', timeoutMs: 1000, launcher: [] },
    tools: { ncu: null },
    versions: { nvcc: '13.0', ncu: null },
  }) as never;

/** A stand-in Slurm: sbatch "runs" each task at once (the as-written point measured in 1 ms), squeue says COMPLETED. */
function standInSlurm(calls: string[][] = []): ProcessRunner {
  const done = new Set<string>();
  return async (cmd, args) => {
    calls.push([cmd, ...args]);
    if (cmd === 'sbatch') {
      if (args.includes('--test-only'))
        return result('', 0, 'sbatch: Job 1 to start at 2026-01-01T00:00:00 using 1 processors on nodes n1 in partition p');
      const m = readManifest(path.join(path.dirname(args[args.length - 1]), 'manifest.json'));
      for (const t of m.tasks)
        for (const x of t.points)
          writeResult(m.sweepDir, {
            id: x.variant.id,
            variant: { ...x.variant, samples: 5, medianMs: 1 },
            codeHash: null,
            measuredOn: { host: 'n1', gpu: null, clocks: null, job: '50' },
          });
      done.add('50');
      return result('50\n');
    }
    if (cmd === 'squeue') {
      const job = args[args.indexOf('-j') + 1];
      return result(done.has(job) ? `${job}_0|COMPLETED|n1|None\n` : '');
    }
    return result('', 0);
  };
}

/** `node CLI args…` with a time limit: a hang is a failure here, never a hung test run. */
function cli(args: string[], timeoutMs = 20_000) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env } });
  return { code: r.status, signal: r.signal, stderr: r.stderr, stdout: r.stdout };
}

// ---------------------------------------------------------------------------------------------
// security holes

test('a Slurm manifest changed on the shared folder while its job was queued is refused, naming it; the node runs nothing of it', t => {
  const { shared } = sandbox(t);
  const file = path.join(shared, 'slurm', 'x', 'jobs', 'j', 'manifest.json');
  const m: SlurmManifest = {
    format: 2,
    sweepDir: path.join(shared, 'slurm', 'x'),
    spec: SPEC(path.join(shared, 'builds')),
    asWritten: {
      point: AS_WRITTEN,
      variant: emptyVariant(AS_WRITTEN, 'ok'),
      codeHash: null,
      program: { path: '/shared/p', sha256: 'a'.repeat(64) },
    },
    timerLibrary: null,
    tasks: [{ index: 0, points: [] }],
  };
  writeManifest(file, m);
  assert.deepEqual(readManifest(file).asWritten.program, m.asWritten.program, 'our own manifest reads back');
  // a group member swaps the program's path and its sha256 together, and the launcher
  const text = fs.readFileSync(file, 'utf8');
  const evil = text
    .replace(/\/shared\/p/g, '/tmp/evil')
    .replace(/a{64}/g, 'b'.repeat(64))
    .replace(/(\\*"launcher\\*":)\[\]/, '$1["/tmp/evil-launcher"]');
  assert.notEqual(evil, text);
  fs.writeFileSync(file, evil);
  assert.throws(
    () => readManifest(file),
    (e: Error) => e.message.includes(file) && /not sealed|seal/.test(e.message) && exitCodeFor(e) === EXIT.badInput,
  );
  // a manifest written by another user (another key) is not ours either
  fs.rmSync(file);
  process.env.XDG_CONFIG_HOME = path.join(KEYS, 'other');
  try {
    writeManifest(file, m);
  } finally {
    process.env.XDG_CONFIG_HOME = path.join(KEYS, 'me');
  }
  assert.throws(
    () => readManifest(file),
    (e: Error) => e.message.includes(file),
  );
  // the node: `slurm-task` exits 65 with the path, runs nothing
  const r = cli(['slurm-task', file, '0']);
  assert.equal(r.code, EXIT.badInput, r.stderr);
  assert.ok(r.stderr.includes(file), r.stderr);
  assert.doesNotMatch(r.stderr, /internal error|\s{4}at /);
});

let real: Toolchain | null = null;
let noNvcc: string | false = false;
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
    if (!cuptiPaths(await toolkitRoot(real))) noNvcc = 'no CUPTI in the toolkit';
  } catch (e) {
    if (process.env.CI) throw e;
    noNvcc = `no nvcc: ${(e as Error).message}`;
  }
});

test("shell syntax in a shared folder's path runs nothing when the timer library is built", async t => {
  if (noNvcc) return t.skip(noNvcc);
  const { root, shared } = sandbox(t);
  const team = path.join(shared, "team's $(touch p1) `touch p2`");
  fs.mkdirSync(team, { recursive: true });
  const args: string[][] = [];
  const toolchain: Toolchain = { ...real!, runner: (c, a, o) => (args.push(a), real!.runner(c, a, o)) };
  const lib = await timerLibrary({ toolchain, cacheDir: path.join(team, 'builds') });
  const found = execFileSync('find', [root, process.cwd(), '-maxdepth', '6', '-name', 'p[12]'], { encoding: 'utf8' }).trim();
  assert.equal(found, '', 'no command in the path ran');
  assert.ok(fs.readFileSync(lib).includes(Buffer.from('InitializeInjection')), 'the library is built all the same');
  assert.ok(lib.startsWith(team), lib);
  // nvcc pastes its arguments into sh command lines: none of them holds the shared folder's path
  for (const a of args) for (const x of a) assert.ok(!x.includes('$('), `nvcc argument ${x}`);
});

/** A toolkit with CUPTI and an nvcc that "builds" the timer by writing `bytes` to its -o (relative to its cwd). */
function fakeToolkit(root: string, bytes: string, runs: string[][] = []): Toolchain {
  const top = path.join(root, 'toolkit');
  fs.mkdirSync(path.join(top, 'include'), { recursive: true });
  fs.mkdirSync(path.join(top, 'lib64'), { recursive: true });
  for (const f of ['include/cupti.h', 'include/cupti_activity.h', 'lib64/libcupti.so']) fs.writeFileSync(path.join(top, f), f);
  const runner: ProcessRunner = async (cmd, args, o) => {
    if (args.includes('--dryrun')) return result('', 0, `#$ TOP=${top}/bin/..\n`);
    runs.push(args);
    const out = args[args.indexOf('-o') + 1];
    fs.writeFileSync(path.resolve(o?.cwd ?? '.', out), bytes);
    return result('');
  };
  return {
    nvcc: { name: 'nvcc', path: path.join(top, 'bin', 'nvcc'), version: '13.0', source: 'setting' },
    runner,
  } as unknown as Toolchain;
}

test('a timer library planted in the shared folder is never used: ours is sealed with our key, and checked before use', async t => {
  const { root, shared } = sandbox(t);
  const runs: string[][] = [];
  const toolchain = fakeToolkit(root, 'GOOD LIBRARY', runs);
  const cacheDir = path.join(shared, 'builds');
  const lib = await timerLibrary({ toolchain, cacheDir });
  assert.equal(fs.readFileSync(lib, 'utf8'), 'GOOD LIBRARY');
  assert.equal(await timerLibrary({ toolchain, cacheDir }), lib, 'ours is reused');
  assert.equal(runs.length, 1, 'built once');
  // someone with write access to the shared folder replaces it
  fs.rmSync(lib);
  fs.writeFileSync(lib, 'PLANTED');
  const again = await timerLibrary({ toolchain, cacheDir });
  assert.equal(fs.readFileSync(again, 'utf8'), 'GOOD LIBRARY', 'the planted file is not what we load');
  assert.equal(runs.length, 2, 'built again, privately');
  // another user (another key) does not share our folder, nor we theirs
  process.env.XDG_CONFIG_HOME = path.join(KEYS, 'other');
  try {
    const theirs = await timerLibrary({ toolchain: fakeToolkit(root, 'THEIR LIBRARY'), cacheDir });
    assert.notEqual(path.dirname(theirs), path.dirname(lib), 'a folder per user');
  } finally {
    process.env.XDG_CONFIG_HOME = path.join(KEYS, 'me');
  }
  assert.equal(fs.readFileSync(await timerLibrary({ toolchain, cacheDir }), 'utf8'), 'GOOD LIBRARY');
  // what a program run here loads: a private copy of the checked bytes; a file swapped after the check is refused
  const checked = await verifiedTimerLibrary({ toolchain, cacheDir });
  const copy = privateTimerCopy(checked);
  assert.ok(!copy.startsWith(shared), copy);
  assert.equal(fs.readFileSync(copy, 'utf8'), 'GOOD LIBRARY');
  assert.equal(fs.statSync(path.dirname(copy)).mode & 0o077, 0, 'in a folder only we can read');
  fs.rmSync(checked.path);
  fs.writeFileSync(checked.path, 'SWAPPED AFTER THE CHECK');
  assert.throws(() => privateTimerCopy(checked), /refused to load the CUPTI timer library .*sha256/);
});

test('--keep-reports DIR writes the timer records into DIR, never through a link planted there', async t => {
  const { root, outside, intact } = sandbox(t);
  const keep = path.join(root, 'kept');
  fs.mkdirSync(keep);
  const name = 'matmul_unroll-as-written-run-0.timer.jsonl';
  fs.symlinkSync(path.join(outside, 'canary.txt'), path.join(keep, name));
  const records = fs.readFileSync(path.join(CUPTI, 'matmul_unroll-as-written-run-0.timer.jsonl'), 'utf8');
  const runner: ProcessRunner = async (_cmd, _args, o) => {
    fs.appendFileSync(o!.env!.UNROLL_LENS_TIMER_OUT!, records);
    return result(fs.readFileSync(path.join(SAMPLES, '..', 'test', 'fixtures', 'gpu', 'h100', 'matmul_unroll.stdout'), 'utf8'));
  };
  const r = await timeNative(
    { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') },
    { kernel: KERNEL, kernels: [KERNEL] },
    {
      toolchain: { runner } as unknown as Toolchain,
      launcher: [],
      args: [],
      samples: 20,
      warmup: 2,
      timeoutMs: 10_000,
      library: '/lib/timer.so',
      keepReportsDir: keep,
    },
  );
  intact();
  assert.ok(fs.lstatSync(path.join(keep, name)).isSymbolicLink(), 'the planted link is left alone');
  assert.match(r.message ?? '', /keep-reports.*link/);
  // without the link the records are kept, whole
  fs.rmSync(path.join(keep, name));
  const ok = await timeNative(
    { label: 'as-written', program: '/x/prog', file: path.join(SAMPLES, 'matmul_unroll.cu') },
    { kernel: KERNEL, kernels: [KERNEL] },
    {
      toolchain: { runner } as unknown as Toolchain,
      launcher: [],
      args: [],
      samples: 20,
      warmup: 2,
      timeoutMs: 10_000,
      library: '/lib/timer.so',
      keepReportsDir: keep,
    },
  );
  assert.equal(ok.status, 'ok', ok.message ?? '');
  assert.equal(fs.readFileSync(path.join(keep, name), 'utf8'), records);
});

// ---------------------------------------------------------------------------------------------
// data lost, leak, hang, crash

test('a re-run never deletes outside its sweep: a jobs/ link and a planted queued.json entry delete nothing', async t => {
  const { shared, outside, intact } = sandbox(t);
  const runner = new SlurmRunner({
    spec: SPEC(path.join(shared, 'builds')),
    sharedRoot: shared,
    slurm: SLURM,
    command: ['node', 'cli'],
    run: standInSlurm(),
  });
  fs.mkdirSync(runner.dir, { recursive: true });
  fs.symlinkSync(outside, path.join(runner.dir, 'jobs'));
  // planted as plain JSON (as the code before the fix wrote it) …
  const entry = { job: '77', tasks: { '0': ['nothing'] }, folder: path.join(runner.dir, 'jobs', 'victim'), submittedAt: 1 };
  fs.writeFileSync(path.join(runner.dir, 'queued.json'), JSON.stringify([entry]));
  await assert.rejects(runner.measure([AS_WRITTEN], { registry: new CodeRegistry(true) }), /jobs.*link|link.*jobs/);
  intact();
  // … and sealed by us (a jobs/ folder replaced by a link after we submitted): still nothing outside goes
  fs.rmSync(path.join(runner.dir, 'jobs'));
  fs.mkdirSync(path.join(runner.dir, 'jobs'));
  writeQueued(runner.dir, [entry]);
  fs.rmSync(path.join(runner.dir, 'jobs'), { recursive: true });
  fs.symlinkSync(outside, path.join(runner.dir, 'jobs'));
  const again = new SlurmRunner({
    spec: SPEC(path.join(shared, 'builds')),
    sharedRoot: shared,
    slurm: SLURM,
    command: ['node', 'cli'],
    run: standInSlurm(),
  });
  await assert.rejects(again.measure([AS_WRITTEN], { registry: new CodeRegistry(true) }), /link/);
  intact();
  // and a queued entry naming a folder outside jobs/ (sealed or not) is never removed
  fs.rmSync(path.join(runner.dir, 'jobs'));
  writeQueued(runner.dir, [{ ...entry, folder: path.join(outside, 'victim') }]);
  const third = new SlurmRunner({
    spec: SPEC(path.join(shared, 'builds')),
    sharedRoot: shared,
    slurm: SLURM,
    command: ['node', 'cli'],
    run: standInSlurm(),
  });
  const out = await third.measure([AS_WRITTEN], { registry: new CodeRegistry(true) });
  assert.equal(out[0].status, 'ok');
  intact();
});

test("a killed writer's temporary file is cleaned up by the next run; finished results and others' files stay", async t => {
  const { shared } = sandbox(t);
  const runner = new SlurmRunner({
    spec: SPEC(path.join(shared, 'builds')),
    sharedRoot: shared,
    slurm: SLURM,
    command: ['node', 'cli'],
    run: standInSlurm(),
  });
  const results = path.join(runner.dir, 'results');
  fs.mkdirSync(results, { recursive: true });
  // what the safe writer leaves when killed between its write and its rename
  const left = path.join(results, '.0123456789abcdef0123456789abcdef.json.4242-0a1b2c3d4e5f.tmp');
  fs.writeFileSync(left, 'half');
  const old = new Date(Date.now() - 3600_000);
  fs.utimesSync(left, old, old);
  const fresh = path.join(results, '.fedcba9876543210fedcba9876543210.json.4243-0a1b2c3d4e5f.tmp');
  fs.writeFileSync(fresh, 'being written by a task right now');
  const mine = path.join(results, 'notes.txt');
  fs.writeFileSync(mine, 'not ours');
  const out = await runner.measure([AS_WRITTEN], { registry: new CodeRegistry(true) });
  assert.equal(out[0].status, 'ok');
  assert.ok(!fs.existsSync(left), 'the killed writer’s temporary file is gone');
  assert.ok(fs.existsSync(fresh), 'a temporary file a live writer may still rename is left');
  assert.ok(fs.existsSync(mine), 'a file we did not write is left');
});

/** Runs `fn`'s body in a child process with a time limit: a blocked read there is a failure here. */
function inChild(body: string, timeoutMs = 10_000) {
  const script = `const m = require(${JSON.stringify(path.join(REPO_ROOT, 'out', 'src', 'engine', 'sweep', 'slurm', 'manifest.js'))});\n${body}`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: timeoutMs, env: { ...process.env } });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

test('a FIFO or a device where the shared folder should hold a file never blocks or fills us', async t => {
  const { shared } = sandbox(t);
  const dir = path.join(shared, 'slurm', 'x');
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mkfifo', [path.join(dir, 'queued.json')]);
  const q = inChild(`console.log(JSON.stringify(m.readQueued(${JSON.stringify(dir)})))`);
  assert.equal(q.signal, null, 'readQueued returned (it blocked on the FIFO before)');
  assert.equal(q.stdout.trim(), '[]');
  // the sweep that reads it: SIGTERM ends it (it used to block on the FIFO, deaf to signals)
  assert.deepEqual(readQueued(dir), []);
  // on the node: a manifest that is /dev/zero or a FIFO is refused at once, naming it
  const fifo = path.join(dir, 'manifest.json');
  execFileSync('mkfifo', [fifo]);
  for (const file of ['/dev/zero', fifo]) {
    const r = cli(['slurm-task', file, '0'], 15_000);
    assert.equal(r.signal, null, `slurm-task ${file} ended by itself`);
    assert.equal(r.code, EXIT.badInput, r.stderr);
    assert.ok(r.stderr.includes(file), r.stderr);
  }
  // a task log that is a FIFO (read for why a task ended) is skipped, not waited on
  const logs = path.join(dir, 'jobs', 'a', 'logs');
  fs.mkdirSync(logs, { recursive: true });
  execFileSync('mkfifo', [path.join(logs, '9_0.out')]);
  const tail = inChild(`console.log(JSON.stringify(m.logTail(${JSON.stringify(path.join(logs, '9_0.out'))})))`);
  assert.equal(tail.signal, null, 'the log was not waited on');
  assert.equal(tail.stdout.trim(), '""', tail.stderr);
  fs.writeFileSync(path.join(logs, '9_1.out'), 'x'.repeat(1 << 20) + '\nline a\nline b\nline c\n');
  assert.equal(
    JSON.parse(inChild(`console.log(JSON.stringify(m.logTail(${JSON.stringify(path.join(logs, '9_1.out'))})))`).stdout),
    'line a | line b | line c',
  );
});

test('sbatch refusing the job, or missing, is a user error with its own message, found before anything is built', async t => {
  if (noNvcc) return t.skip(noNvcc);
  const { root, shared } = sandbox(t);
  const file = path.join(root, 'k.cu');
  const SRC =
    '__global__ void k(float* y) {\n  for (int i = 0; i < 4; ++i) y[i] *= 2.0f;\n}\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n';
  fs.writeFileSync(file, SRC);
  const analysis = await analyze(SRC, file);
  const nvccRuns: string[][] = [];
  const toolchain: Toolchain = {
    ...real!,
    ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
    runner: (cmd, args, o) => (cmd === real!.nvcc.path && !args.includes('--dryrun') && nvccRuns.push(args), real!.runner(cmd, args, o)),
  };
  const refusing: Record<string, ProcessRunner> = {
    refused: async cmd =>
      cmd === 'sbatch' ? result('', 1, 'sbatch: error: Batch job submission failed: Invalid partition name specified\n') : result(''),
    missing: async cmd => (cmd === 'sbatch' ? result('', null, '', 'spawn sbatch ENOENT') : result('')),
  };
  for (const [kind, run] of Object.entries(refusing)) {
    const e = await runSweep({
      file,
      text: SRC,
      analysis,
      kernel: 'k',
      loops: [2],
      factors: UnrollFactors.of([1, 2]),
      toolchain,
      arch: 'sm_90',
      flags: { args: [], arch: null, source: 'default', directory: root, warnings: [] } as never,
      cacheDir: path.join(shared, 'builds'),
      gpu: { args: [], samples: 5, warmup: 1, clockControl: 'base', cacheControl: 'all', timeoutMs: 10_000, launcher: [], timer: 'ncu' },
      runner: slurmSweepRunner({ slurm: { ...SLURM, partition: 'nosuch' }, sharedRoot: shared, command: ['node', 'cli'], run }),
    }).then(
      () => null,
      (x: Error) => x,
    );
    assert.ok(e, `${kind}: the sweep fails`);
    assert.equal(exitCodeFor(e), EXIT.usage, `${kind}: ${e.stack}`);
    if (kind === 'refused') assert.match(e.message, /Invalid partition name specified.*--partition/s);
    else assert.match(e.message, /sbatch.*not found|no sbatch/i);
    assert.deepEqual(nvccRuns, [], `${kind}: nothing was built`);
  }
});
