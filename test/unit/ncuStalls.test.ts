// Unit tests of the stall-reason summaries (src/engine/profile/stalls.ts) on real ncu output
// (test/fixtures/ncu/, README.md there). Expected numbers were computed from the CSV files with
// the commands quoted next to them (run in test/fixtures/ncu), not with the code under test.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseDetailsPage, parseRawPage, parseSourcePage } from '../../src/engine/profile/ncuCsv';
import { kernelProfile, perLineStalls, shares, stallBreakdown, stallsJson } from '../../src/engine/profile/stalls';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ncu');
const read = (rel: string): string => fs.readFileSync(path.join(FIXTURES, rel), 'utf8');
const raw = (name: string) => parseRawPage(read(`${name}.raw.csv`)).kernels[0];
const close = (a: number | undefined, b: number, what = '') =>
  assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

const REASONS = [
  'barrier',
  'branch_resolving',
  'dispatch_stall',
  'drain',
  'gmma',
  'imc_miss',
  'lg_throttle',
  'long_scoreboard',
  'math_pipe_throttle',
  'membar',
  'mio_throttle',
  'misc',
  'no_instruction',
  'not_selected',
  'selected',
  'short_scoreboard',
  'sleeping',
  'tex_throttle',
  'wait',
];

describe('kernelProfile: raw-page fixtures (H200)', () => {
  // Duration, instructions, registers:
  // python3 -c "import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print({n:(r[1][i],r[2][i]) for i,n in
  //   enumerate(r[0]) if n in ('gpu__time_duration.sum','smsp__inst_executed.sum','launch__registers_per_thread')})" FILE.raw.csv
  // no_instruction's share of the sum of the 19 smsp__average_warps_issue_stalled_* ratios:
  // python3 -c "import csv,sys;r=list(csv.reader(open(sys.argv[1])));v={n:float(r[2][i]) for i,n in enumerate(r[0])
  //   if n.startswith('smsp__average_warps_issue_stalled_')};print(len(v), sum(v.values()),
  //   v['smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio']/sum(v.values()))" FILE.raw.csv
  const cases: { file: string; durationNs: number; inst: number; regs: number; sum: number; picks: Record<string, number> }[] = [
    {
      file: 'hot-loop-32KiB',
      durationNs: 1693280,
      inst: 1108930416,
      regs: 16,
      sum: 1.160377,
      picks: { no_instruction: 0.156695, wait: 0.001975, branch_resolving: 0.001465, selected: 1, long_scoreboard: 0 },
    },
    {
      file: 'hot-loop-256KiB',
      durationNs: 7376224,
      inst: 1107511152,
      regs: 16,
      sum: 5.245518,
      picks: { no_instruction: 4.243906, wait: 0.001058, dispatch_stall: 0.000002, selected: 1 },
    },
    {
      file: 'linear-unroll-inner-full',
      durationNs: 309280,
      inst: 121040,
      regs: 46,
      sum: 15.278974,
      picks: { long_scoreboard: 11.94464, short_scoreboard: 1.142188, wait: 0.890916, barrier: 0.134976, no_instruction: 0.075857 },
    },
    {
      file: 'linear-unroll-outer-full',
      durationNs: 1658688,
      inst: 280472,
      regs: 32,
      sum: 35.39863,
      picks: { long_scoreboard: 32.324797, no_instruction: 0.411234, branch_resolving: 0.189981, wait: 1.082605 },
    },
  ];
  for (const c of cases) {
    test(`${c.file}: duration, instructions, registers, stall ratios and shares`, () => {
      const p = kernelProfile(raw(c.file));
      assert.equal(p.durationNs, c.durationNs);
      assert.equal(p.executedInstructions, c.inst);
      assert.equal(p.registers, c.regs);
      assert.equal(p.achievedOccupancy, null); // not collected in these runs
      assert.equal(p.stallSource, 'warp-state');
      assert.deepEqual(Object.keys(p.stalls), REASONS);
      for (const [reason, v] of Object.entries(c.picks)) {
        assert.equal(p.stalls[reason], v, reason);
        close(p.stallShare[reason], v / c.sum, reason);
      }
      close(
        Object.values(p.stallShare).reduce((a, b) => a + b, 0),
        1,
        'shares sum',
      );
      assert.equal(p.notIssued, undefined);
      assert.deepEqual(p.blockSize, [128, 1, 1]);
    });
  }

  test("the icache fact: no_instruction share rises with the hot loop's code size (32 KiB → 256 KiB)", () => {
    const small = kernelProfile(raw('hot-loop-32KiB'));
    const big = kernelProfile(raw('hot-loop-256KiB'));
    // 0.156695 / 1.160377 = 0.1350 and 4.243906 / 5.245518 = 0.8091 (commands above)
    close(small.stallShare.no_instruction, 0.13503800919873454, '32 KiB');
    close(big.stallShare.no_instruction, 0.8090537483619349, '256 KiB');
    assert.ok(big.stallShare.no_instruction > small.stallShare.no_instruction);
    // Same work (instructions within 0.2 %), 4.4× the time.
    assert.ok(Math.abs(big.executedInstructions! / small.executedInstructions! - 1) < 0.002);
    assert.ok(big.durationNs! / small.durationNs! > 4);
  });

  test('live ncu output (H100): thousands separators in ns, occupancy, three launches', () => {
    const rows = parseRawPage(read('mini/mini-raw-live.stdout.txt')).kernels.map(kernelProfile);
    // python3 csv on the '"'-lines of mini/mini-raw-live.stdout.txt: gpu__time_duration.sum ns 13,120 / 13,216 / 43,520,
    // sm__warps_active.avg.pct_of_peak_sustained_active 83.27 / 83.34 / 87.28, no_instruction 0.18 / 0.22 / 0.08
    assert.deepEqual(
      rows.map(r => [r.name, r.durationNs, r.achievedOccupancy, r.registers, r.stalls.no_instruction, r.stalls.math_pipe_throttle]),
      [
        ['void scale<4>(float *, int, float, int)', 13120, 83.27, 16, 0.18, 0.2],
        ['void scale<16>(float *, int, float, int)', 13216, 83.34, 16, 0.22, 0.07],
        ['accumulate(float *, int, int)', 43520, 87.28, 16, 0.08, 5.74],
      ],
    );
  });

  test('a details-page kernel gives the same profile shape (values rounded by ncu to 2 decimals)', () => {
    const k = parseDetailsPage(read('linear-unroll-inner-full.details.csv')).kernels[0];
    const p = kernelProfile(k);
    assert.equal(p.durationNs, 309280);
    assert.equal(p.executedInstructions, 121040);
    assert.equal(p.stalls.long_scoreboard, 11.94);
    assert.equal(p.stalls.selected, 1);
    assert.equal(p.stallSource, 'warp-state');
  });

  test('missing metrics are null, not zero', () => {
    const p = kernelProfile({
      id: 3,
      processId: null,
      processName: null,
      kernelName: 'k',
      context: null,
      stream: null,
      blockSize: null,
      gridSize: null,
      device: null,
      cc: null,
      metrics: {},
    });
    assert.deepEqual(p, {
      name: 'k',
      id: 3,
      durationNs: null,
      stalls: {},
      stallShare: {},
      stallSource: 'none',
      executedInstructions: null,
      achievedOccupancy: null,
      instructionsPerThread: null,
      threadInstructions: null,
      registers: null,
      blockSize: null,
      gridSize: null,
    });
  });
});

describe('stallBreakdown: metric families', () => {
  test('PC-sampling counts (old scheme) when the warp-state ratios are absent; not-issued kept apart', () => {
    const k = raw('linear-unroll-outer-full');
    const onlyPcsamp = Object.fromEntries(Object.entries(k.metrics).filter(([n]) => !n.startsWith('smsp__average_warps_issue_stalled_')));
    const b = stallBreakdown(onlyPcsamp);
    assert.equal(b.source, 'pc-sampling');
    // python3 -c "import csv,sys;r=list(csv.reader(open(sys.argv[1])));print({n[33:]:r[2][i] for i,n in enumerate(r[0])
    //   if n.startswith('smsp__pcsamp_warps_issue_stalled_') and r[2][i]!='0'})" linear-unroll-outer-full.raw.csv
    const nonzero = Object.fromEntries(Object.entries(b.stalls).filter(([, v]) => v));
    assert.deepEqual(nonzero, {
      branch_resolving: 15,
      long_scoreboard: 1091,
      no_instruction: 16,
      selected: 41,
      short_scoreboard: 10,
      wait: 37,
    });
    assert.ok('warpgroup_arrive' in b.stalls);
    const ni = Object.fromEntries(Object.entries(b.notIssued ?? {}).filter(([, v]) => v));
    assert.deepEqual(ni, { branch_resolving: 15, long_scoreboard: 1091, no_instruction: 16, short_scoreboard: 10, wait: 37 });
    // 1210 samples in all (smsp__pcsamp_sample_count); shares exclude the not-issued variants.
    close(b.stallShare.long_scoreboard, 1091 / 1210, 'long_scoreboard');
  });

  test('warp-state ratios win over PC sampling when both are present', () => {
    assert.equal(stallBreakdown(raw('linear-unroll-outer-full')).source, 'warp-state');
  });

  test('plain maps, Maps, strings with separators, suffix preference, _not_issued ratios, unknown reasons', () => {
    const b = stallBreakdown({
      'smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio': '1,000',
      'smsp__average_warps_issue_stalled_selected_per_issue_active.ratio': 1,
      'smsp__average_warps_issue_stalled_future_reason_per_issue_active.ratio': 999000,
      'smsp__average_warps_issue_stalled_wait_per_issue_active.ratio': null,
      'smsp__average_warps_issue_stalled_long_scoreboard_not_issued_per_issue_active.ratio': 900,
      'gpu__time_duration.sum': 5,
    });
    assert.deepEqual(b.stalls, { future_reason: 999000, long_scoreboard: 1000, selected: 1 });
    assert.deepEqual(b.notIssued, { long_scoreboard: 900 });
    close(b.stallShare.long_scoreboard, 1000 / 1000001);
    const m = new Map<string, number>([
      ['smsp__warps_issue_stalled_barrier.avg', 7],
      ['smsp__warps_issue_stalled_barrier.sum', 30],
      ['smsp__warps_issue_stalled_no_instruction.sum', 10],
    ]);
    const c = stallBreakdown(m);
    assert.equal(c.source, 'counters');
    assert.deepEqual(c.stalls, { barrier: 30, no_instruction: 10 });
    assert.deepEqual(c.stallShare, { barrier: 0.75, no_instruction: 0.25 });
  });

  test('no stall metrics, all-zero stalls, garbage', () => {
    assert.deepEqual(stallBreakdown({}), { stalls: {}, stallShare: {}, source: 'none' });
    assert.deepEqual(stallBreakdown(null), { stalls: {}, stallShare: {}, source: 'none' });
    assert.deepEqual(shares({ a: 0, b: 0 }), { a: 0, b: 0 });
    const z = stallBreakdown({ smsp__pcsamp_warps_issue_stalled_wait: 0 });
    assert.deepEqual(z, { stalls: { wait: 0 }, stallShare: { wait: 0 }, source: 'pc-sampling' });
    for (const x of [42, 'x', [], { metrics: 5 }, { a: { value: 'x' } }] as unknown[]) {
      stallBreakdown(x as Record<string, number>);
    }
  });
});

describe('stallsJson: the documented contract', () => {
  test('{"kernels":[{"name","durationNs","stalls","stallShare"}]} in launch order', () => {
    const j = stallsJson(parseRawPage(read('mini/mini-raw-live.stdout.txt')).kernels);
    assert.deepEqual(Object.keys(j), ['kernels']);
    assert.equal(j.kernels.length, 3);
    for (const k of j.kernels) assert.deepEqual(Object.keys(k), ['name', 'durationNs', 'stalls', 'stallShare']);
    assert.deepEqual(
      j.kernels.map(k => [k.name, k.durationNs]),
      [
        ['void scale<4>(float *, int, float, int)', 13120],
        ['void scale<16>(float *, int, float, int)', 13216],
        ['accumulate(float *, int, int)', 43520],
      ],
    );
    const again = JSON.parse(JSON.stringify(j));
    assert.deepEqual(again, j);
  });

  test('accepts profiles, raw rows and details kernels alike', () => {
    const row = raw('hot-loop-32KiB');
    const a = stallsJson([row]);
    const b = stallsJson([kernelProfile(row)]);
    assert.deepEqual(a, b);
    assert.equal(a.kernels[0].durationNs, 1693280);
    assert.equal(stallsJson(parseDetailsPage(read('linear-unroll-inner-full.details.csv')).kernels).kernels[0].durationNs, 309280);
    assert.deepEqual(stallsJson([]), { kernels: [] });
  });
});

describe('perLineStalls: source page per line', () => {
  test('H200 cuda,sass: samples and reasons per line of bloat.cu, matched by file name or path suffix', () => {
    const page = parseSourcePage(read('linear-unroll-inner-full.source-cuda-sass.csv'));
    for (const name of ['bloat.cu', 'kernels/bloat.cu', '/home/dev/kernels/bloat.cu', 'C:\\work\\kernels\\bloat.cu']) {
      const lines = perLineStalls(page, name);
      // python3 command of ncuCsv.test.ts (line rows of the same file)
      assert.deepEqual(
        lines.filter(l => l.samples).map(l => [l.line, l.samples, l.stalls]),
        [
          [17, 3, { barrier: 1, short_scoreboard: 1, wait: 1 }],
          [19, 25, { branch_resolving: 1, long_scoreboard: 19, selected: 2, wait: 3 }],
          [23, 7, { selected: 3, wait: 4 }],
          [25, 191, { dispatch_stall: 2, long_scoreboard: 163, selected: 9, short_scoreboard: 7, wait: 10 }],
        ],
        name,
      );
    }
    const l25 = perLineStalls(page, 'bloat.cu').find(l => l.line === 25)!;
    assert.equal(l25.file, '/home/dev/kernels/bloat.cu');
    assert.equal(l25.samplesNotIssued, 180);
    assert.equal(l25.instructionsExecuted, 81920);
    close(l25.stallShare.long_scoreboard, 163 / 191);
    assert.deepEqual(l25.kernels, ['void linear<(int)1, (int)0>(const float *, const float *, const float *, float *)']);
    assert.equal(perLineStalls(page, 'other.cu').length, 0);
    assert.equal(perLineStalls(page).length, 10);
  });

  test('H100: a kernel with code in two files; lines of each file apart', () => {
    const page = parseSourcePage(read('mini/mini-source-cuda-sass.accumulate.stdout.txt'));
    assert.deepEqual(
      perLineStalls(page, 'mini_helper.cuh').map(l => [l.line, l.samples, l.samplesNotIssued]),
      [[5, 4949, 679]],
    );
    assert.deepEqual(
      perLineStalls(page, 'capture/mini.cu').map(l => [l.line, l.samples]),
      [
        [23, 34],
        [25, 9],
        [26, 11],
        [27, 11],
        [28, 3053],
        [29, 5],
        [30, 33],
      ],
    );
    assert.deepEqual(
      perLineStalls(page).map(l => l.file.split('/').pop()),
      [...Array(7).fill('mini.cu'), 'mini_helper.cuh'],
    );
  });

  test('lines shared by several kernels add up; sass-only pages have no lines', () => {
    const one = parseSourcePage(read('linear-unroll-inner-full.source-cuda-sass.csv'));
    const twice = { functions: [...one.functions, { ...one.functions[0], kernelName: 'other<2>' }] };
    const l25 = perLineStalls(twice, 'bloat.cu').find(l => l.line === 25)!;
    assert.equal(l25.samples, 382);
    assert.equal(l25.stalls.long_scoreboard, 326);
    assert.equal(l25.kernels.length, 2);
    assert.deepEqual(perLineStalls(parseSourcePage(read('mini/mini-source-sass.accumulate.stdout.txt'))), []);
    assert.deepEqual(perLineStalls({ functions: [] }, 'x.cu'), []);
  });
});
