// Counter permission (issue 25, "works without profiling permission"): what ncu's ERR_NVGPUCTRPERM
// and the CUPTI timer's CUPTI_ERROR_INSUFFICIENT_PRIVILEGES make us say (src/engine/profile/
// permissionHelp.ts), and what a bench keeps when it happens: ncu refused on every variant; the
// CUPTI timer's timings kept when only --source-stalls' ncu run is refused; the timer refused
// itself. The refusal is the synthetic ncu fixture (test/fixtures/ncu/errors/synthetic-permission:
// ncu's wording as users quote it; no machine here refuses profiling). nvcc builds for real; the
// programs' runs are answered with the H100 recordings (test/fixtures/gpu/h100/).
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { classifyNcuFailure } from '../../src/engine/profile/ncuErrors';
import {
  cuptiPermissionProblem,
  ENABLE_COUNTERS,
  ERR_NVGPUCTRPERM_URL,
  ncuPermissionFix,
  withCuptiPermissionHelp,
} from '../../src/engine/profile/permissionHelp';
import { cuptiPaths, toolkitRoot } from '../../src/engine/gpu/cupti/timerLibrary';
import { benchLoop } from '../../src/engine/sweep/bench';
import type { BenchOptions } from '../../src/engine/gpu/options';
import { UnrollFactors } from '../../src/engine/variants/factors';

const ERRORS = path.join(REPO_ROOT, 'test', 'fixtures', 'ncu', 'errors');
const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const refusal = {
  stdout: fs.readFileSync(path.join(ERRORS, 'synthetic-permission.stdout.txt'), 'utf8'),
  exitCode: Number(fs.readFileSync(path.join(ERRORS, 'synthetic-permission.exit'), 'utf8').trim()),
};
const PRIVILEGES = 'cuptiActivityEnable(KERNEL): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES';

/** Everything the user needs to allow the counters: the driver option and where it goes, the reload, root or CAP_SYS_ADMIN, NVIDIA's page. */
function assertEnableHelp(text: string): void {
  assert.match(text, /NVreg_RestrictProfilingToAdminUsers=0/);
  assert.match(text, /\/etc\/modprobe\.d\//);
  assert.match(text, /reload the nvidia kernel module or reboot/);
  assert.match(text, /as root/);
  assert.match(text, /CAP_SYS_ADMIN/);
  assert.match(text, /NVIDIA's page "ERR_NVGPUCTRPERM"/);
  assert.ok(text.includes(ERR_NVGPUCTRPERM_URL));
}

/** That timing with the CUPTI timer works without the permission, and why. */
const CUPTI_WORKS =
  /Timing alone works without that permission: the CUPTI timer \(--timer cupti.*Activity API, which needs no counter access/;

describe('the permission messages', () => {
  test("the recorded refusal is ncu's own wording", () => {
    assert.ok(
      refusal.stdout.includes(
        '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. ' +
          'For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM',
      ),
    );
    assert.equal(ERR_NVGPUCTRPERM_URL, 'https://developer.nvidia.com/ERR_NVGPUCTRPERM');
  });

  test('ncu refused: time with --timer cupti (no counters needed), or allow the counters', () => {
    const f = classifyNcuFailure(refusal.stdout, '', refusal.exitCode);
    assert.equal(f.kind, 'permission');
    assert.match(f.message, /ERR_NVGPUCTRPERM/);
    assert.match(f.fix!, CUPTI_WORKS);
    assertEnableHelp(f.fix!);
    // the CUPTI advice first: it works now, the driver option needs an administrator
    assert.ok(f.fix!.indexOf('--timer cupti') < f.fix!.indexOf('NVreg_'));
  });

  test('ncu refused after the CUPTI timer timed: the timings stand, no advice to use the timer already used', () => {
    const fix = ncuPermissionFix(true);
    assert.match(fix, /^The timings, by the CUPTI timer, need no such permission and are kept; stall reasons need the counters\./);
    assert.doesNotMatch(fix, CUPTI_WORKS);
    assertEnableHelp(fix);
  });

  test('the CUPTI timer refused (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): the same fix, once', () => {
    const problem = cuptiPermissionProblem(['cuptiActivityFlushAll (exit): CUPTI_ERROR_NOT_INITIALIZED', PRIVILEGES])!;
    assert.match(
      problem,
      /^the CUPTI timer was refused by the NVIDIA driver \(cuptiActivityEnable\(KERNEL\): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES\)/,
    );
    assertEnableHelp(problem);
    assert.doesNotMatch(problem, CUPTI_WORKS);
    assert.equal(cuptiPermissionProblem(['cuptiActivityEnable(KERNEL): CUPTI_ERROR_NOT_SUPPORTED']), null);
    assert.equal(cuptiPermissionProblem([]), null);

    const reported = `the CUPTI timer reported: ${PRIVILEGES}`;
    const helped = withCuptiPermissionHelp(reported);
    assert.ok(helped.startsWith(`${reported}. This user may not profile the GPU. `));
    assertEnableHelp(helped);
    // said once, whoever adds it first (the time stage's problem may carry it already)
    assert.equal(withCuptiPermissionHelp(helped), helped);
    assert.equal(withCuptiPermissionHelp(problem), problem);
    assert.equal(withCuptiPermissionHelp('the CUPTI timer reported: CUPTI_ERROR_UNKNOWN'), 'the CUPTI timer reported: CUPTI_ERROR_UNKNOWN');
    assert.ok(ENABLE_COUNTERS.length > 0);
  });
});

function ok(over: Partial<ProcessResult>): ProcessResult {
  return {
    command: '',
    args: [],
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    cancelled: false,
    durationMs: 1,
    ...over,
  };
}

let real: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-perm-'));
const FAKE_NCU = '/fake/bin/ncu';
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

/** A bench of matmul_basic's loop (as written and ×4) whose programs and ncu runs `answer` answers; nvcc and the disassemblers run for real. */
async function bench(answer: ProcessRunner, over: Partial<BenchOptions>) {
  const file = path.join(SAMPLES, 'matmul_unroll.cu');
  const text = fs.readFileSync(file, 'utf8');
  const analysis = await analyze(text, file);
  const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
  const calls: string[][] = [];
  const runner: ProcessRunner = async (cmd, args, o) => {
    if ([real!.nvcc.path, real!.nvdisasm?.path, real!.cuobjdump?.path, real!.cxxfilt?.path].includes(cmd))
      return real!.runner(cmd, args, o);
    calls.push([cmd, ...args]);
    return answer(cmd, args, o);
  };
  const r = await benchLoop(file, text, analysis, {
    toolchain: { ...real!, runner, ncu: { name: 'ncu', path: FAKE_NCU, version: '2025.3.1', source: 'PATH' }, gpus: [] },
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: path.join(CACHE, 'builds'),
    loops: [line],
    factors: UnrollFactors.of([4]),
    args: ['--only', 'matmul_basic', '--reps', '25'],
    samples: 20,
    warmup: 2,
    clockControl: 'none',
    timeoutMs: 60_000,
    launcher: [],
    measurementCacheDir: null,
    ...over,
  });
  return { r, line, calls };
}

/**
 * The program as the H100 ran it with the CUPTI timer: its records (or `records`) where
 * UNROLL_LENS_TIMER_OUT says, its output on stdout. The program's build key names the loop and
 * factor (`-L51x4`); the as-written build has none.
 */
function timedProgram(records?: string): ProcessRunner {
  return async (cmd, _args, o) => {
    const out = o?.env?.UNROLL_LENS_TIMER_OUT;
    if (!out || !o?.env?.CUDA_INJECTION64_PATH) return ok({ exitCode: 1, stderr: 'not run with the timer' });
    const m = /-L(\d+)x([^./-]+)/.exec(path.basename(cmd));
    const recorded = path.join(H100, 'cupti', `matmul_unroll-${m ? `${m[1]}=${m[2]}` : 'as-written'}-run-0.timer.jsonl`);
    fs.appendFileSync(out, records ?? fs.readFileSync(recorded, 'utf8'));
    return ok({ stdout: fs.readFileSync(path.join(H100, 'matmul_unroll.stdout'), 'utf8') });
  };
}

describe('a bench on a machine that refuses profiling', () => {
  test('--timer ncu: every variant fails as profile, saying --timer cupti works and how to allow the counters', async t => {
    if (skip) return t.skip(skip);
    const { r, calls } = await bench(
      async cmd => (cmd === FAKE_NCU ? ok({ exitCode: refusal.exitCode, stdout: refusal.stdout }) : ok({ exitCode: 1 })),
      { timer: 'ncu' },
    );
    assert.ok(
      calls.some(c => c[0] === FAKE_NCU),
      'ncu ran',
    );
    assert.deepEqual(
      r.variants.map(v => v.status),
      r.variants.map(() => 'profile'),
    );
    const m = r.variants[0].message!;
    assert.match(m, /ncu may not read the GPU performance counters of device 0/);
    assert.match(m, CUPTI_WORKS);
    assertEnableHelp(m);
  });

  test('--timer cupti --source-stalls: the timings are kept, the per-line stalls fail with the permission fix', async t => {
    if (skip) return t.skip(skip);
    if (!cuptiPaths(await toolkitRoot(real!))) return t.skip('no CUPTI in the toolkit');
    const { r, calls, line } = await bench(
      async (cmd, args, o) =>
        cmd === FAKE_NCU ? ok({ exitCode: refusal.exitCode, stdout: refusal.stdout }) : timedProgram()(cmd, args, o),
      // base clocks (the settings' default) reach ncu's stall run; the timer itself never locks them
      { timer: 'cupti', sourceStalls: true, clockControl: 'base' },
    );
    assert.ok(
      calls.some(c => c[0] === FAKE_NCU && c.includes('SourceCounters')),
      'the per-line stall run went to ncu',
    );
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.samples]),
      [
        ['as-written', 'ok', 20],
        [`${line}=4`, 'ok', 20],
      ],
    );
    assert.ok(
      r.variants.every(v => v.medianMs !== null && v.medianMs > 0),
      'medians from the CUPTI records',
    );
    assert.deepEqual(r.measurement, { tool: 'cupti', clocks: 'as-is', caches: 'warm', duration: 'kernel-record' }); // recorded before the range profiler
    assert.equal(r.clockControl, 'none', 'the timings ran at the clocks the GPU set');
    assert.equal(r.lineStalls, null);
    const problem = r.lineStallsProblem!;
    assert.match(problem, /ncu may not read the GPU performance counters of device 0/);
    assert.match(problem, /The timings, by the CUPTI timer, need no such permission and are kept/);
    assert.doesNotMatch(problem, CUPTI_WORKS);
    assertEnableHelp(problem);
  });

  test('--timer cupti refused itself (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): profile, with the fix', async t => {
    if (skip) return t.skip(skip);
    if (!cuptiPaths(await toolkitRoot(real!))) return t.skip('no CUPTI in the toolkit');
    const records = `{"init":1,"cupti":130001,"pid":1,"base":"0"}\n{"error":"${PRIVILEGES}"}\n{"end":1,"records":0,"dropped":0}\n`;
    const { r, calls } = await bench(timedProgram(records), { timer: 'cupti' });
    assert.ok(!calls.some(c => c[0] === FAKE_NCU), 'no ncu ran');
    assert.equal(r.variants[0].status, 'profile');
    const m = r.variants[0].message!;
    assert.match(m, /CUPTI_ERROR_INSUFFICIENT_PRIVILEGES/);
    assert.equal(m.split('NVreg_RestrictProfilingToAdminUsers=0 (').length, 2, 'the fix, once');
    assertEnableHelp(m);
  });
});
