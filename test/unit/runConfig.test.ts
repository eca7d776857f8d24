// The GPU run configuration (engine/gpu/options.ts GpuRunConfig) is built in two places only:
// from the flags (cli/gpuOptions.ts runFlagsOf + runConfigFromFlags, shared by bench, sweep and
// compare) and from the editor settings (server/runOptions.ts runConfigFromSettings). Each edge:
// every flag or setting reaches the configuration, its defaults are the settings declaration's,
// and the bench and the comparison pass it through to the GPU runner as it came.
import { strict as assert } from 'assert';
import { describe, test } from 'node:test';
import * as os from 'os';
import * as path from 'path';
import { COMMANDS } from '../../src/cli/main';
import { runConfigFromFlags, runFlagsOf } from '../../src/cli/gpuOptions';
import { runConfigFromSettings } from '../../src/server/runOptions';
import { BenchOptions, runConfigOf } from '../../src/engine/gpu/options';
import { defaultCacheDir } from '../../src/engine/variants/build';
import { DEFAULT_SETTINGS } from '../../src/settings';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';
import { UnrollFactors } from '../../src/engine/variants/factors';
import { SAMPLES } from './helpers';

const cliff = path.join(SAMPLES, 'icache_cliff.cu');
const twoGpus = { gpus: [{}, {}] } as unknown as Pick<Toolchain, 'gpus'>;
const P = DEFAULT_SETTINGS.profile;

function argsOf(command: string, argv: string[]): { run: ReturnType<typeof runFlagsOf> } {
  return COMMANDS.find(c => c.name === command)!.argsOf(argv) as { run: ReturnType<typeof runFlagsOf> };
}

describe('from the flags: one builder for bench, sweep and compare', () => {
  test('no flags: the settings declaration defaults, the same for every command', () => {
    const f = runFlagsOf({});
    assert.deepEqual(f.config, {
      args: P.args,
      samples: P.samples,
      maxSamples: P.maxSamples,
      warmup: P.warmup,
      clockControl: P.clockControl,
      cacheControl: P.cacheControl,
      timer: P.timer,
      stalls: P.stalls === 'on',
      counters: P.counters === 'on',
      elements: undefined,
      timeoutMs: P.timeoutSeconds * 1000,
      launcher: P.launcher,
      keepReportsDir: undefined,
      profilesPerGpu: P.profilesPerGpu,
      sourceStalls: false,
    });
    assert.deepEqual([f.gpus, f.sharedDir, f.fresh], [undefined, undefined, false]);
    for (const [cmd, base] of [
      ['bench', [cliff, '--loop', '72']],
      ['sweep', [cliff]],
    ] as const)
      assert.deepEqual({ ...argsOf(cmd, [...base]).run.config, passes: undefined }, { ...f.config, passes: undefined }, cmd);
    // compare counts by default; bench alone takes --ncu-passes
    assert.equal(argsOf('compare', [cliff, '--kernels', 'hot_loop']).run.config.counters, true);
    assert.equal(argsOf('bench', [cliff, '--loop', '72']).run.config.passes, 'combined');
    assert.equal('passes' in argsOf('sweep', [cliff]).run.config, false);
  });

  test('every flag reaches the configuration', () => {
    const { run } = argsOf('bench', [
      cliff,
      '--loop',
      '72',
      '--args',
      '-n 4 "a b"',
      '--samples',
      '30',
      '--max-samples',
      '90',
      '--warmup',
      '3',
      '--timer',
      'ncu',
      '--clock-control',
      'none',
      '--cache-control',
      'none',
      '--stalls',
      'off',
      '--counters',
      'on',
      '--elements',
      '4096',
      '--timeout',
      '7',
      '--launcher',
      'srun -p gpu',
      '--keep-reports',
      '/tmp/keep',
      '--source-stalls',
      '--ncu-passes',
      'split',
      '--profiles-per-gpu',
      '2',
      '--gpus',
      '1',
      '--shared-dir',
      '/shared',
      '--fresh',
    ]);
    assert.deepEqual(run.config, {
      args: ['-n', '4', 'a b'],
      samples: 30,
      maxSamples: 90,
      warmup: 3,
      clockControl: 'none',
      cacheControl: 'none',
      timer: 'ncu',
      stalls: false,
      counters: true,
      elements: 4096,
      timeoutMs: 7000,
      launcher: ['srun', '-p', 'gpu'],
      keepReportsDir: '/tmp/keep',
      passes: 'split',
      profilesPerGpu: 2,
      sourceStalls: true,
    });
    assert.deepEqual([run.gpus, run.sharedDir, run.fresh], ['1', '/shared', true]);
    // sweep reads --args itself ({NAME} of its --param axes): what it checked is what runs
    assert.deepEqual(argsOf('sweep', [cliff, '--param', 'N=1,2', '--args', '--n {N}']).run.config.args, ['--n', '{N}']);
  });

  test('the placement once the toolchain is known: GPUs checked against it, folders from --shared-dir, --fresh turns the cache off', () => {
    const here = runConfigFromFlags(runFlagsOf({ gpus: 'all' }), twoGpus);
    assert.deepEqual(here.config.gpus, [0, 1]);
    assert.equal(here.cacheDir, defaultCacheDir());
    assert.equal(here.config.runDir, os.tmpdir(), 'no launcher: run files in the temp folder');
    assert.equal(here.config.measurementCacheDir, path.join(path.dirname(defaultCacheDir()), 'measurements'));
    assert.throws(() => runConfigFromFlags(runFlagsOf({ gpus: '2' }), twoGpus), /--gpus: there is no GPU 2/);
    // with a launcher the GPUs are the node's: not checked against this machine's
    assert.deepEqual(runConfigFromFlags(runFlagsOf({ gpus: '5', launcher: 'srun' }), twoGpus).config.gpus, [5]);
    const shared = runConfigFromFlags(runFlagsOf({ 'shared-dir': '/shared', fresh: true }), twoGpus);
    assert.deepEqual(
      [shared.cacheDir, shared.config.runDir, shared.config.measurementCacheDir, shared.config.gpus],
      [path.resolve('/shared/builds'), path.resolve('/shared/runs'), null, []],
    );
  });

  test("in the order a Slurm sweep's folder hash has always had (its spec's JSON names the folder)", () => {
    const { config } = runConfigFromFlags(runFlagsOf({}, { args: [] }), twoGpus);
    assert.deepEqual(Object.keys(config), [
      'args',
      'samples',
      'maxSamples',
      'warmup',
      'clockControl',
      'cacheControl',
      'timer',
      'stalls',
      'counters',
      'elements',
      'timeoutMs',
      'launcher',
      'keepReportsDir',
      'gpus',
      'runDir',
      'measurementCacheDir',
      'profilesPerGpu',
      'sourceStalls',
    ]);
  });
});

describe('from the editor settings: one builder for bench, compare and sweep', () => {
  test('every setting reaches the configuration', () => {
    const { cacheDir, config } = runConfigFromSettings(
      {
        ...P,
        args: ['-n', '8'],
        samples: 25,
        maxSamples: 75,
        warmup: 4,
        clockControl: 'none',
        cacheControl: 'none',
        timer: 'ncu',
        stalls: 'off',
        counters: 'on',
        timeoutSeconds: 9,
        launcher: [],
        runCommand: ['{program}', '{args}'],
        compileCommand: ['make', '{output}'],
        checkCommand: ['diff', '{stdout}', '{baselineStdout}'],
        sourceStalls: false,
        gpus: '0,1',
        measurementCache: true,
        profilesPerGpu: 3,
      },
      { cacheDir: '/c/builds', gpusHere: 2 },
    );
    assert.equal(cacheDir, '/c/builds');
    assert.deepEqual(config, {
      args: ['-n', '8'],
      samples: 25,
      maxSamples: 75,
      warmup: 4,
      clockControl: 'none',
      cacheControl: 'none',
      timer: 'ncu',
      stalls: false,
      counters: true,
      timeoutMs: 9000,
      launcher: [],
      runCommand: ['{program}', '{args}'],
      compileCommand: ['make', '{output}'],
      checkCommand: ['diff', '{stdout}', '{baselineStdout}'],
      sourceStalls: false,
      gpus: [0, 1],
      runDir: os.tmpdir(),
      measurementCacheDir: path.join('/c', 'measurements'),
      profilesPerGpu: 3,
    });
  });

  test('the placement: the shared directory moves everything, the cache off is null, GPUs not placed here are no list', () => {
    const shared = runConfigFromSettings(
      { ...P, sharedDirectory: '/shared', measurementCache: false },
      { cacheDir: '/c/builds', gpusHere: 1 },
    );
    assert.deepEqual(
      [shared.cacheDir, shared.config.runDir, shared.config.measurementCacheDir],
      [path.resolve('/shared/builds'), path.resolve('/shared/runs'), null],
    );
    // a Slurm job's nodes (or a static sweep) choose no GPU here: the setting is not even read
    assert.equal(runConfigFromSettings({ ...P, gpus: '7' }, { cacheDir: '/c/b', gpusHere: null }).config.gpus, undefined);
    assert.throws(() => runConfigFromSettings({ ...P, gpus: '7' }, { cacheDir: '/c/b', gpusHere: 1 }), /unrollLens\.profile\.gpus/);
    // empty templates are "not set": the program itself, nvcc, no check
    const d = runConfigFromSettings(P, { cacheDir: '/c/b', gpusHere: 1 }).config;
    assert.deepEqual([d.runCommand, d.compileCommand, d.checkCommand], [undefined, undefined, undefined]);
  });
});

describe('the bench and the comparison pass the configuration through', () => {
  test("runConfigOf: a bench's options less the job, every run field as it came", () => {
    const { config } = runConfigFromSettings(P, { cacheDir: '/c/b', gpusHere: 1 });
    const o = {
      ...config,
      toolchain: {} as Toolchain,
      arch: 'sm_90',
      flags: { arch: null } as unknown as BenchOptions['flags'],
      cacheDir: '/c/b',
      nvccTimeoutMs: 1000,
      loops: [3],
      factors: UnrollFactors.of([4]),
      kernel: 'k',
      signal: new AbortController().signal,
      progress: () => undefined,
    } satisfies BenchOptions;
    assert.deepEqual(runConfigOf(o), config);
  });
});
