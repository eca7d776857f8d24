// Warps per SM from launches written the way users write them (issue 22), checked against an
// independent occupancy calculator: the rules of the CUDA occupancy calculator (cuda_occupancy.h,
// cudaOccMaxBlocksPerSM{Warps,Regs,Smem}Limit, and cudaOccupancyMaxPotentialBlockSize of
// cuda_runtime.h) written out below for an H100 (sm_90), not the product's own
// src/engine/occupancy/limits.ts. The fixtures' registers come from ptxas -v when nvcc is here.
// The same fixtures run on a GPU through scripts/device/occupancy-check.cu.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { findLaunches } from '../../src/engine/parse/launches';
import { maxPotentialBlockSize } from '../../src/engine/occupancy/launch';
import { warpsPerSmInFile } from '../../src/engine/occupancy/warpsPerSm';
import { launchWarpsPerSm } from '../../src/engine/occupancy/warpsPerSm';
import { theoreticalOccupancy } from '../../src/engine/occupancy/limits';
import { analyze, lineOf, REPO_ROOT } from './helpers';

const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'launch-styles');
const H100 = { count: 132, gpu: 'NVIDIA H100 80GB HBM3' };

// --- The oracle: cudaOccDeviceProp of an H100 (cudaGetDeviceProperties) and cuda_occupancy.h's rules.
const P = {
  maxThreadsPerBlock: 1024,
  maxThreadsPerMultiProcessor: 2048,
  maxBlocksPerMultiProcessor: 32,
  regsPerMultiprocessor: 65536,
  regsPerBlock: 65536,
  regAllocationUnit: 256,
  maxRegsPerThread: 255,
  subPartitions: 4,
  sharedMemPerMultiprocessor: 233472,
  sharedMemPerBlock: 49152,
  reservedSharedMemPerBlock: 1024,
  smemAllocationUnit: 128,
};
const roundUp = (x: number, u: number) => Math.ceil(x / u) * u;

/** cudaOccupancyMaxActiveBlocksPerMultiprocessor on an H100, default carveout, no opt-in. */
function oracleBlocks(regs: number, staticSmem: number, threads: number, dynamicSmem: number): number {
  if (threads > P.maxThreadsPerBlock || threads <= 0) return 0;
  const warps = Math.ceil(threads / 32);
  const byWarps = Math.floor(P.maxThreadsPerMultiProcessor / 32 / warps);
  const regsPerWarp = roundUp(regs * 32, P.regAllocationUnit);
  let byRegs: number;
  if (regsPerWarp * roundUp(warps, P.subPartitions) > P.regsPerBlock || regsPerWarp * warps > P.regsPerBlock || regs > P.maxRegsPerThread)
    byRegs = 0;
  else if (regsPerWarp === 0) byRegs = Infinity;
  else byRegs = Math.floor((Math.floor(P.regsPerMultiprocessor / P.subPartitions / regsPerWarp) * P.subPartitions) / warps);
  const smem = roundUp(staticSmem + P.reservedSharedMemPerBlock + dynamicSmem, P.smemAllocationUnit);
  const bySmem = smem > P.sharedMemPerBlock + P.reservedSharedMemPerBlock ? 0 : Math.floor(P.sharedMemPerMultiprocessor / smem);
  return Math.min(byWarps, byRegs, bySmem, P.maxBlocksPerMultiProcessor);
}

/** cudaOccupancyMaxPotentialBlockSize (cuda_runtime.h): the largest block size with the most resident threads. */
function oraclePotential(regs: number, staticSmem: number, dynamicSmem: number): { block: number; blocksPerSm: number } {
  let funcMax = P.maxThreadsPerBlock;
  while (funcMax > 32 && oracleBlocks(regs, staticSmem, funcMax, dynamicSmem) === 0) funcMax -= 32;
  let best = { block: 0, blocksPerSm: 0 };
  for (let t = funcMax; t > 0; t -= 32) {
    const b = oracleBlocks(regs, staticSmem, t, dynamicSmem);
    if (t * b > best.block * best.blocksPerSm) best = { block: t, blocksPerSm: b };
    if (t * b === P.maxThreadsPerMultiProcessor) break;
  }
  return best;
}

/** Registers and static shared memory of a fixture's kernel, from ptxas -v (the recorded count without nvcc, outside CI). */
function usage(file: string, recorded: number): { registers: number; shared: number; from: string } {
  const r = spawnSync('nvcc', ['-arch=sm_90', '-cubin', '-o', '/dev/null', '-Xptxas', '-v', file], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    if (process.env.CI) throw new Error(`nvcc is needed for the launch-style fixtures in CI: ${r.error?.message ?? r.stderr}`);
    return { registers: recorded, shared: 0, from: 'recorded (no nvcc here)' };
  }
  const stderr = r.stderr;
  const regs = /Used (\d+) registers/.exec(stderr);
  const smem = /(\d+) bytes smem/.exec(stderr);
  assert.ok(regs, stderr);
  return { registers: Number(regs[1]), shared: smem ? Number(smem[1]) : 0, from: 'ptxas -v' };
}

interface Case {
  file: string;
  kernel: string;
  /** Registers nvcc 13.0 gave the kernel (used only without nvcc). */
  recorded: number;
  /** Resident warps per SM on an H100, by the oracle, from what the program does. */
  truth: (r: { registers: number; shared: number }) => number;
  /** The range we must show when a value is not known (null: exact). */
  range?: (r: { registers: number; shared: number }) => [number, number];
  /** The program picks one of several values at run time: the truth must lie in the range. */
  ambiguous?: boolean;
  /** Texts the source must name (each input and its line). */
  inputs: (text: string) => string[];
}

const S = H100.count;
const fit = (r: { registers: number; shared: number }, t: number, d = 0) => oracleBlocks(r.registers, r.shared, t, d);
const L = (text: string, needle: string) => lineOf(text, needle);

const CASES: Case[] = [
  {
    file: 'local_int.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(Math.ceil(S / S), fit(r, 128)) * 4,
    inputs: t => [
      `\`sms\`: the SM count (cudaDeviceGetAttribute, line ${L(t, 'cudaDeviceGetAttribute(')})`,
      `\`threads\` = 128 (line ${L(t, '    int threads = 128')})`,
    ],
  },
  {
    file: 'dim3_props.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(2, fit(r, 128)) * 4,
    inputs: t => [
      `\`block\` = dim3(32, 4, 1) (line ${L(t, '    dim3 block(32, 4)')})`,
      `\`prop.multiProcessorCount\`: the SM count (cudaGetDeviceProperties, line ${L(t, 'cudaGetDeviceProperties(')})`,
    ],
  },
  {
    file: 'constexpr_sms.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(4, fit(r, 256)) * 8,
    inputs: t => [
      `\`kThreads\` = 256 (line ${L(t, 'constexpr int kThreads')})`,
      `\`kBlocksPerSm\` = 4 (line ${L(t, 'constexpr int kBlocksPerSm')})`,
    ],
  },
  {
    file: 'macro_grid.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(Math.ceil(396 / S), fit(r, 512)) * 16,
    // Without the GPU's name: 114 or 132 SMs.
    range: r => [Math.min(Math.ceil(396 / 132), fit(r, 512)) * 16, Math.min(Math.ceil(396 / 114), fit(r, 512)) * 16],
    inputs: t => [
      `\`BLOCK\` = 512 (#define, line ${L(t, '#define BLOCK')})`,
      `\`GRID\` = (3 * 132) (#define, line ${L(t, '#define GRID')})`,
    ],
  },
  {
    file: 'dynamic_smem.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(8, fit(r, 64, 48 * 1024)) * 2,
    inputs: t => [`\`smemBytes\` = 48 * 1024 (line ${L(t, 'size_t smemBytes')})`, '49152 B dynamic'],
  },
  {
    file: 'launch_kernel_ex.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(2, fit(r, 96)) * 3,
    inputs: t => [
      `\`config.blockDim\` = dim3(96) (line ${L(t, 'config.blockDim =')})`,
      `\`config.gridDim\` = dim3(sms * 2) (line ${L(t, 'config.gridDim =')})`,
    ],
  },
  {
    file: 'occupancy_blocks.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => fit(r, 128) * 4,
    inputs: t => [`cudaOccupancyMaxActiveBlocksPerMultiprocessor, line ${L(t, 'cudaOccupancyMaxActiveBlocksPerMultiprocessor(')}`],
  },
  {
    file: 'occupancy_potential.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => {
      const p = oraclePotential(r.registers, r.shared, 0);
      return p.blocksPerSm * Math.ceil(p.block / 32);
    },
    inputs: t => [`cudaOccupancyMaxPotentialBlockSize, line ${L(t, 'cudaOccupancyMaxPotentialBlockSize(')}`],
  },
  {
    file: 'helper_params.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(1, fit(r, 192)) * 6,
    inputs: t => [`\`threads\` = \`192\` passed to run() at line ${L(t, 'run(x, sms, 192)')}`],
  },
  {
    file: 'two_block_sizes.cu',
    kernel: 'step',
    recorded: 8,
    truth: r => Math.min(1, fit(r, 256)) * 8,
    ambiguous: true,
    range: r => [Math.min(1, fit(r, 128)) * 4, Math.min(1, fit(r, 256)) * 8],
    inputs: t => [`\`threads\` = 128 (line ${L(t, '    int threads = 128')})`, `\`threads\` = 256 (line ${L(t, '        threads = 256')})`],
  },
  {
    file: 'runtime_grid.cu',
    kernel: 'step',
    recorded: 8,
    // At the default n = 1 << 22: 32768 blocks over 132 SMs, more than fit.
    truth: r => Math.min(Math.ceil(Math.ceil((1 << 22) / 128) / S), fit(r, 128)) * 4,
    range: r => [4, fit(r, 128) * 4],
    inputs: t => [`\`threads\` = 128 (line ${L(t, '    int threads = 128')})`, 'not known'],
  },
  {
    file: 'launch_bounds_api.cu',
    kernel: 'bounded',
    recorded: 8,
    truth: r => Math.min(4, fit(r, 256)) * 8,
    inputs: t => [`\`block\` = dim3(256, 1, 1) (line ${L(t, 'dim3 grid(4 * sms), block(256)')})`],
  },
  {
    file: 'register_heavy.cu',
    kernel: 'heavy',
    recorded: 54,
    truth: r => Math.min(8, fit(r, 256)) * 8,
    inputs: t => [`\`threads\` = 256 (line ${L(t, 'const int threads = 256')})`, 'registers/thread'],
  },
];

describe('the oracle agrees with the product occupancy calculator (sm_90, up to 48 KiB shared memory)', () => {
  test('every registers × block size × shared memory combination', () => {
    let checked = 0;
    for (let regs = 0; regs <= 255; regs += 7)
      for (let threads = 32; threads <= 1024; threads += 32)
        for (const smem of [0, 1000, 4096, 12 * 1024, 33 * 1024, 48 * 1024]) {
          const ours = theoreticalOccupancy({
            arch: 'sm_90',
            registersPerThread: regs,
            threadsPerBlock: threads,
            sharedBytesPerBlock: smem,
          })!;
          assert.equal(ours.activeBlocksPerSM, oracleBlocks(regs, 0, threads, smem), `regs ${regs} threads ${threads} smem ${smem}`);
          checked++;
        }
    assert.ok(checked > 5000);
  });

  test('cudaOccupancyMaxPotentialBlockSize: the same block size and blocks per SM', () => {
    for (let regs = 8; regs <= 255; regs += 5)
      for (const smem of [0, 8192, 40 * 1024]) {
        const ours = maxPotentialBlockSize({ arch: 'sm_90', registers: regs, staticShared: 0, maxThreads: null }, smem, 0);
        assert.deepEqual(ours, oraclePotential(regs, 0, smem), `regs ${regs} smem ${smem}`);
      }
  });
});

describe('launch styles: warps per SM on an H100 against the oracle', () => {
  assert.ok(CASES.length >= 9);
  for (const c of CASES) {
    test(`${c.file}`, async () => {
      const file = path.join(DIR, c.file);
      const text = fs.readFileSync(file, 'utf8');
      const r = usage(file, c.recorded);
      const analysis = await analyze(text, file);
      const o = { kernel: c.kernel, arch: 'sm_90', registers: r.registers, sharedBytes: r.shared };
      const onH100 = warpsPerSmInFile(text, analysis, { ...o, sms: H100 });
      const truth = c.truth(r);
      if (c.ambiguous) {
        // Which value runs is decided at run time: the truth is inside the range shown.
        assert.ok(onH100.range && truth >= onH100.range.low && truth <= onH100.range.high, onH100.source);
      } else assert.equal(onH100.warpsPerSm, truth, `${c.file} (${r.from}: ${r.registers} registers): ${onH100.source}`);
      assert.equal(onH100.kind, 'launch');
      for (const needle of c.inputs(text))
        assert.ok(onH100.source.includes(needle), `${c.file}: "${needle}" missing from\n${onH100.source}`);
      // Without the GPU's name: the same where the grid is written in SMs; else the range the SM counts allow.
      const unnamed = warpsPerSmInFile(text, analysis, o);
      if (c.range) {
        const [low, high] = c.range(r);
        const got = unnamed.range ?? { low: unnamed.warpsPerSm, high: unnamed.warpsPerSm };
        assert.deepEqual([got.low, got.high], [low, high], unnamed.source);
        assert.ok(truth >= got.low && truth <= got.high);
        assert.match(unnamed.source, new RegExp(`the prediction covers ${low}–${high} warps/SM`));
      } else {
        assert.equal(unnamed.warpsPerSm, truth, unnamed.source);
        assert.equal(unnamed.range, undefined, unnamed.source);
      }
    });
  }
});

describe('launch values as written', () => {
  test('the issue-22 reproduction: `int threads = 128` and a grid of cudaDeviceGetAttribute SMs is 1 block of 4 warps, not 64 warps', () => {
    const text = fs.readFileSync(path.join(DIR, 'local_int.cu'), 'utf8');
    const [l] = findLaunches(text);
    assert.deepEqual([l.kernel, l.block.value, l.grid.value, l.grid.blocksPerSm], ['step', 128, null, 1]);
  });

  test('cudaLaunchKernelEx and cudaLaunchKernel are launches of the kernel they name', () => {
    const ex = findLaunches(fs.readFileSync(path.join(DIR, 'launch_kernel_ex.cu'), 'utf8'));
    assert.deepEqual(
      ex.map(l => [l.kernel, l.config.style, l.block.value, l.grid.blocksPerSm, l.sharedBytes?.value]),
      [['step', 'cudaLaunchKernelEx', 96, 2, 0]],
    );
    const api = findLaunches(fs.readFileSync(path.join(DIR, 'launch_bounds_api.cu'), 'utf8'));
    assert.deepEqual(
      api.map(l => [l.kernel, l.config.style, l.block.value, l.grid.blocksPerSm]),
      [['bounded', 'cudaLaunchKernel', 256, 4]],
    );
  });

  test('reaching writes: the last unconditional write wins, conditional ones add, loops and compound writes are unknown', () => {
    const body = (lines: string[]) => ['__global__ void k() {}', 'int main(int argc, char **argv) {', ...lines, '}'].join('\n');
    const block = (lines: string[]) => findLaunches(body(lines))[0].config.block;
    const values = (lines: string[]) => {
      const v = block(lines);
      return v.unknown.length
        ? v.unknown.map(u => u.says)
        : v.candidates.map(c => c.at({ sms: 1, fit: () => 1, optimal: () => ({ block: 1, blocksPerSm: 1 }) }));
    };
    assert.deepEqual(values(['int t = 64;', 't = 128;', 'k<<<1, t>>>();']), [128]);
    assert.deepEqual(values(['int t = 64;', 'if (argc > 2) t = 128;', 'k<<<1, t>>>();']), [64, 128]);
    assert.deepEqual(values(['int t = 64;', 'if (argc > 2) { t = 256; }', 'k<<<1, t>>>();']), [64, 256]);
    assert.deepEqual(values(['int t = 64;', 'k<<<1, t>>>();', 't = 512;']), [64]);
    assert.match(String(values(['for (int t = 32; t <= 1024; t *= 2)', '  k<<<1, t>>>();'])), /`t` changes at line 3 \(`t \*=`\)/);
    assert.match(
      String(values(['int t = argc * 32;', 'k<<<1, t>>>();'])),
      /`t` = argc \* 32 \(line 3\), and `argc` is a parameter of main\(\)/,
    );
    // A later write inside a loop around the launch reaches it.
    assert.deepEqual(values(['int t = 64;', 'for (int i = 0; i < 2; i++) {', '  k<<<1, t>>>();', '  t = 128;', '}']), [64, 128]);
    // A value from the command line is set aside: the program's default is what runs without arguments.
    const opt = block(['int t = 64;', 'if (argc > 1) t = atoi(argv[1]);', 'k<<<1, t>>>();']);
    assert.equal(opt.candidates.length, 1);
    assert.match(opt.options[0].says, /`t` may be set from the command line \(line 4\)/);
  });

  test('a kernel launched only through a pointer, listed in a table of the file, takes that launch', async () => {
    const file = path.join(REPO_ROOT, 'cuda-samples', 'icache_cliff.cu');
    const text = fs.readFileSync(file, 'utf8');
    const w = warpsPerSmInFile(text, await analyze(text, file), { kernel: 'hot_loop', arch: 'sm_90', registers: 24, sharedBytes: 0 });
    // The driver's defaults: 256 threads, one block per SM.
    assert.equal(w.warpsPerSm, Math.min(1, oracleBlocks(24, 0, 256, 0)) * 8);
    // the struct table's initializer lists it (issue 26), so the launch through `v.kernel` is its launch
    assert.match(w.source, /through `v\.kernel` \(the table `variants` at line \d+ lists hot_loop\)/);
    assert.match(w.source, /`threads` may be set from the command line/);
  });

  test("the sweep's warps per SM caps the SM-count grid by the blocks that fit (48 KiB dynamic shared memory: 4 of 8)", () => {
    const text = fs.readFileSync(path.join(DIR, 'dynamic_smem.cu'), 'utf8');
    const w = launchWarpsPerSm(text, 'step', 'sm_90')!;
    assert.equal(w.warpsPerSm, Math.min(8, oracleBlocks(0, 0, 64, 48 * 1024)) * 2);
    assert.match(w.source, /grid = SM count; 4 blocks fit/);
  });
});

describe('the oracle against the CUDA driver (recorded on an H100)', () => {
  // scripts/device/occupancy-check.cu run on nvidia-h100-x1 (driver 580.159.04, nvcc 13.0.88):
  // cudaOccupancyMaxActiveBlocksPerMultiprocessor for each fixture's kernel and launch.
  const recorded = JSON.parse(
    fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'occupancy-check', 'occupancy-check.json'), 'utf8'),
  ) as { sms: number; fixtures: { fixture: string; registers: number; warpsPerSm: number; note: string }[] };

  test('every fixture: the driver gives the warps per SM the oracle (and so the product) gives', () => {
    assert.equal(recorded.sms, S);
    for (const c of CASES) {
      const rows = recorded.fixtures.filter(f => f.fixture === c.file);
      assert.ok(rows.length, `${c.file} not in the recording`);
      const r = { registers: rows[0].registers, shared: 0 };
      // An ambiguous fixture was run both ways; its first row is the program without arguments.
      assert.equal(c.truth(r), rows[0].warpsPerSm, `${c.file}: ${rows[0].note}`);
    }
  });
});
