// `npm run bench:gpu` (issue 11): scripts/device/bench-gpu-summary.mjs compares the hand loop's
// ncu raw pages with `unroll-lens bench --json`. Inputs are real recordings: the raw pages the
// CLI kept for matmul_basic's k loop on an H100 (test/fixtures/gpu/h100/cli/reports/, the same
// `--csv --page raw` shape the hand loop saves) and the JSON that run printed, whose medians
// come from those very pages; and a live `ncu --csv --page raw` stdout (test/fixtures/ncu/mini).
// scripts/device/hand-loop.sh is run with stand-ins for nvcc and ncu to check the sources it
// builds and the ncu command it runs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import { REPO_ROOT } from './helpers';
import { parseRawPage, toNanoseconds } from '../../src/engine/profile/ncuCsv';
import { summarize } from '../../src/engine/gpu/stages/summary';

interface FactorRow {
  factor: string;
  handMs: number | null;
  handSamples: number;
  oursMs: number | null;
  oursSamples: number;
  identicalTo: string | null;
  diff: number | null;
}
interface Target {
  value: number | null;
  ok: boolean | null;
  gpuRuns?: number | null;
}
interface Summary {
  factors: FactorRow[];
  largestMedianDiff: number | null;
  wall: { ratio: number | null; speedup2: number | null };
  targets: { ratio: Target; medians: Target; twoGpus: Target; cached: Target };
  failedRuns: number;
}
type Report = { variants: { label: string; medianMs: number | null; samples: number; identicalTo: string | null }[] } & Record<
  string,
  unknown
>;
interface Run {
  report: Report | null;
  wallS: number | null;
  exit: number | null;
}
interface SummaryModule {
  FACTORS: string[];
  durationsMs(text: string, kernel?: RegExp): number[];
  stallColumns(text: string): number;
  median(values: number[]): number | null;
  oursByLabel(report: Report): Map<string, { medianMs: number | null; samples: number }>;
  compareMedians(hand: Record<string, number[]>, report: Report | null): { rows: FactorRow[]; largest: number | null };
  summarise(input: {
    hand: Record<string, number[]>;
    handWallS: number | null;
    cold: Run | null;
    cached: Run | null;
    gpus1?: Run | null;
    gpus2?: Run | null;
    alternatives?: (Run & { name: string })[];
  }): Summary;
  renderMarkdown(s: Summary): string;
}

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'device', 'bench-gpu-summary.mjs');
const CLI = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cli');
const page = (label: string) => fs.readFileSync(path.join(CLI, 'reports', `matmul_unroll-L51-${label}-0.raw.csv`), 'utf8');
const recordedJson = (): Report => JSON.parse(fs.readFileSync(path.join(CLI, 'matmul_basic.json'), 'utf8'));
const load = (): Promise<SummaryModule> => import(pathToFileURL(SCRIPT).href);
const close = (a: number | null, b: number) => assert.ok(a !== null && Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

/** The hand loop's durations per factor, from the CLI's own raw pages of the same run. */
async function handFromRecording(m: SummaryModule, swap?: [string, string]): Promise<Record<string, number[]>> {
  const hand: Record<string, number[]> = {};
  for (const f of m.FACTORS) {
    const from = swap && f === swap[0] ? swap[1] : swap && f === swap[1] ? swap[0] : f;
    hand[f] = m.durationsMs(page(from));
  }
  return hand;
}

describe('bench:gpu summary (issue 11)', () => {
  test('raw page in us: 20 launches, the medians the CLI printed from the same pages', async () => {
    const m = await load();
    const expected: Record<string, number> = {
      default: 0.058272,
      '1': 0.168736,
      '2': 0.096096,
      '4': 0.060032,
      '8': 0.058016,
      '16': 0.057712,
      full: 0.060176,
    };
    const json = recordedJson();
    for (const f of m.FACTORS) {
      const d = m.durationsMs(page(f));
      assert.equal(d.length, 20, f);
      close(m.median(d), expected[f]);
      close(m.median(d), json.variants.find(v => v.label === f)!.medianMs!);
      // The tool's own reader and statistics agree launch by launch.
      const tool = parseRawPage(page(f)).kernels.map(k => {
        const t = k.metrics['gpu__time_duration.sum'];
        return toNanoseconds(t.value, t.unit)! / 1e6;
      });
      assert.equal(d.length, tool.length);
      d.forEach((x, i) => close(x, tool[i]));
      close(m.median(d), summarize(tool).medianMs!);
      assert.equal(m.stallColumns(page(f)), 19);
    }
    assert.equal(m.durationsMs(page('1'))[0] > 0.16, true);
  });

  test('live ncu stdout in ns with thousands separators: log lines and program output skipped', async () => {
    const m = await load();
    const live = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'ncu', 'mini', 'mini-raw-live.stdout.txt'), 'utf8');
    assert.deepEqual(m.durationsMs(live), [0.01312, 0.013216, 0.04352]);
    assert.deepEqual(m.durationsMs(live, /^accumulate/), [0.04352]);
    assert.equal(m.median(m.durationsMs(live)), 0.013216);
    assert.deepEqual(m.durationsMs('==PROF== Disconnected\nno csv here\n'), []);
    assert.equal(m.median([]), null);
  });

  test('hand and ours from the same recordings: every difference 0, targets judged', async () => {
    const m = await load();
    const hand = await handFromRecording(m);
    const cold: Run = { report: recordedJson(), wallS: 40, exit: 0 };
    const cached: Run = {
      report: { ...recordedJson(), timing: { wallS: 1.2, compileS: 0, checkS: 0, profileS: 0, gpuIdleS: 0, gpuRuns: 0, gpus: [null] } },
      wallS: 1.5,
      exit: 0,
    };
    const s = m.summarise({ hand, handWallS: 100, cold, cached, gpus1: { ...cold, wallS: 40 }, gpus2: { ...cold, wallS: 22 } });
    assert.deepEqual(
      s.factors.map(r => r.factor),
      ['default', '1', '2', '4', '8', '16', 'full'],
    );
    assert.ok(s.factors.every(r => r.diff === 0 && r.handSamples === 20 && r.oursSamples === 20));
    assert.equal(s.largestMedianDiff, 0);
    assert.equal(s.wall.ratio, 0.4);
    close(s.wall.speedup2, 40 / 22);
    assert.deepEqual(
      Object.values(s.targets).map(t => t.ok),
      [true, true, true, true],
    );
    const md = m.renderMarkdown(s);
    assert.match(md, /\| 1 \| 0\.1687 \(20\) \| 0\.1687 \(20\) \| 0\.00% \|/);
    assert.match(md, /\| as-written \| — \| 0\.0582 \(20\) \| — \|/);
    assert.match(md, /ratio ours \/ hand \| 0\.400 \| ≤ 0\.5 \| PASS/);
  });

  test('other settings: wall time against the hand loop and their own median differences', async () => {
    const m = await load();
    const hand = await handFromRecording(m);
    const cold: Run = { report: recordedJson(), wallS: 40, exit: 0 };
    const s = m.summarise({
      hand,
      handWallS: 100,
      cold,
      cached: null,
      alternatives: [
        { name: 'profiles-per-gpu 1', report: recordedJson(), wallS: 55, exit: 0 },
        { name: 'ncu-passes split', report: recordedJson(), wallS: 48, exit: 1 },
      ],
    });
    const alt = (
      s as unknown as { alternatives: { name: string; wallS: number | null; ratio: number | null; largestMedianDiff: number | null }[] }
    ).alternatives;
    assert.deepEqual(
      alt.map(a => [a.name, a.wallS, a.ratio, a.largestMedianDiff]),
      [
        ['profiles-per-gpu 1', 55, 0.55, 0],
        ['ncu-passes split', null, null, 0],
      ],
    );
    assert.match(m.renderMarkdown(s), /\| profiles-per-gpu 1 \| 55\.00 s \| 0\.550 \| 0\.00% \|/);
  });

  test('misses: factors 1 and 2 swapped, slow run, cached run that launched, one GPU', async () => {
    const m = await load();
    const hand = await handFromRecording(m, ['1', '2']);
    const cold: Run = { report: recordedJson(), wallS: 60, exit: 0 };
    const cached: Run = { report: { ...recordedJson(), timing: { gpuRuns: 3 } }, wallS: 1.5, exit: 0 };
    const s = m.summarise({ hand, handWallS: 100, cold, cached });
    // |ours − hand| / hand: factor 1 has hand 0.096096 (the ×2 page), ours 0.168736; factor 2 the reverse.
    close(s.factors.find(r => r.factor === '1')!.diff, (0.168736 - 0.096096) / 0.096096);
    close(s.factors.find(r => r.factor === '2')!.diff, (0.168736 - 0.096096) / 0.168736);
    close(s.largestMedianDiff, (0.168736 - 0.096096) / 0.096096);
    assert.equal(s.targets.medians.ok, false);
    assert.equal(s.targets.ratio.ok, false);
    assert.equal(s.targets.cached.ok, false);
    assert.equal(s.targets.cached.gpuRuns, 3);
    assert.equal(s.targets.twoGpus.ok, null);
    assert.match(m.renderMarkdown(s), /2 GPUs vs 1 \| — \(fewer than 2 GPUs\) \| ≥ 1\.7× \| MISS \(not measured\)/);
    // A run that exited non-zero gives no wall-time ratio (and is counted as failed).
    const failed = m.summarise({ hand, handWallS: 100, cold: { ...cold, wallS: 20, exit: 1 }, cached });
    assert.equal(failed.wall.ratio, null);
    assert.equal(failed.targets.ratio.ok, null);
    assert.equal(failed.failedRuns, 1);
  });

  test('identicalTo: a row with the same code carries, or else takes, the numbers of the row it names', async () => {
    const m = await load();
    const r = recordedJson();
    const full = r.variants.find(v => v.label === 'full')!;
    const four = r.variants.find(v => v.label === '4')!;
    full.identicalTo = '4';
    full.medianMs = null;
    full.samples = 0;
    const ours = m.oursByLabel(r);
    assert.deepEqual(ours.get('full'), { ...ours.get('4'), identicalTo: '4', status: 'ok' });
    close(ours.get('full')!.medianMs, four.medianMs!);
    // The hand loop's own full page against ours copied from ×4: 0.060176 vs 0.060032.
    const c = m.compareMedians(await handFromRecording(m), r);
    close(c.rows.find(x => x.factor === 'full')!.diff, Math.abs(0.060032 - 0.060176) / 0.060176);
    // A factor missing on one side: no largest difference.
    assert.equal(m.compareMedians({ default: [1] }, r).largest, null);
  });

  test('main: reads an output folder and writes summary.md and summary.json', async () => {
    const m = await load();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bench-gpu-'));
    fs.mkdirSync(path.join(dir, 'hand'));
    for (const f of m.FACTORS) fs.writeFileSync(path.join(dir, 'hand', `hand-${f}.csv`), page(f));
    fs.writeFileSync(path.join(dir, 'hand', 'hand-loop.wall_s'), '95.125\n');
    fs.copyFileSync(path.join(CLI, 'matmul_basic.json'), path.join(dir, 'ours-cold.json'));
    fs.writeFileSync(path.join(dir, 'ours-cold.wall_s'), '38.05\n');
    fs.writeFileSync(path.join(dir, 'ours-cold.exit'), '0\n');
    const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8')) as Summary;
    assert.equal(s.wall.ratio, 38.05 / 95.125);
    assert.equal(s.largestMedianDiff, 0);
    assert.equal(s.targets.cached.ok, null);
    assert.equal(fs.readFileSync(path.join(dir, 'summary.md'), 'utf8'), r.stdout);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('hand-loop.sh (issue 11): the sources it builds and the ncu command it runs', () => {
  test('one pragma line before line 51 per factor, none for default; one ncu run each', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-hand-loop-'));
    const fakeNvcc = path.join(tmp, 'nvcc');
    const fakeNcu = path.join(tmp, 'ncu');
    fs.writeFileSync(fakeNvcc, '#!/bin/sh\ntouch prog\n', { mode: 0o755 });
    fs.writeFileSync(fakeNcu, '#!/bin/sh\necho "ncu $*"\n', { mode: 0o755 });
    const out = path.join(tmp, 'out');
    const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts', 'device', 'hand-loop.sh'), out], {
      encoding: 'utf8',
      env: { ...process.env, NVCC: fakeNvcc, NCU: fakeNcu },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /hand-loop: total wall \d+\.\d{3} s/);
    assert.ok(Number(fs.readFileSync(path.join(out, 'hand-loop.wall_s'), 'utf8')) >= 0);
    const original = fs.readFileSync(path.join(REPO_ROOT, 'cuda-samples', 'matmul_unroll.cu'), 'utf8').split('\n');
    assert.match(original[50], /^ {4}for \(int k = 0; k < n; \+\+k\)$/);
    const pragmas: Record<string, string | null> = {
      default: null,
      '1': '#pragma unroll 1',
      '2': '#pragma unroll 2',
      '4': '#pragma unroll 4',
      '8': '#pragma unroll 8',
      '16': '#pragma unroll 16',
      full: '#pragma unroll',
    };
    for (const [f, pragma] of Object.entries(pragmas)) {
      const built = fs.readFileSync(path.join(out, `hand-${f}.cu`), 'utf8').split('\n');
      const expected = pragma === null ? original : [...original.slice(0, 50), `    ${pragma}`, ...original.slice(50)];
      assert.deepEqual(built, expected, f);
      assert.equal(
        fs.readFileSync(path.join(out, `hand-${f}.csv`), 'utf8').trim(),
        'ncu --clock-control none --cache-control all --kernel-name-base mangled --kernel-name regex:^_Z12matmul_basic.* --launch-skip 2 ' +
          '--launch-count 20 --metrics gpu__time_duration.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio ' +
          '--csv --page raw ./prog --only matmul_basic --reps 25',
      );
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the recorded runs (H100, H200 pair): what docs/measurements.md quotes', async () => {
    const m = (await load()) as SummaryModule & { readDir(dir: string): Parameters<SummaryModule['summarise']>[0] };
    const h100 = m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'bench-gpu')));
    close(h100.wall.ratio, 28.583 / 58.354);
    assert.equal(h100.factors.length, 7);
    assert.ok(h100.factors.every(r => r.handSamples === 20 && r.oursSamples === 20));
    assert.equal(Math.round(h100.largestMedianDiff! * 10000) / 100, 0.34);
    assert.equal(h100.targets.cached.gpuRuns, 0);
    assert.deepEqual(
      Object.values(h100.targets).map(t => t.ok),
      [true, true, null, true],
    );
    const alt = (h100 as unknown as { alternatives: { name: string; wallS: number; largestMedianDiff: number }[] }).alternatives;
    assert.deepEqual(
      alt.map(a => [a.name, a.wallS, Math.round(a.largestMedianDiff * 10000) / 100]),
      [
        ['ncu-passes split', 27.759, 1.8],
        ['profiles-per-gpu 1', 38.246, 0.69],
        ['profiles-per-gpu 3', 26.432, 0.99],
      ],
    );
    // the JSON contract of the real run: identical code named, the run's cost, the cached re-run's
    const cold = JSON.parse(
      fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'bench-gpu', 'ours-cold.json'), 'utf8'),
    );
    assert.deepEqual(
      cold.variants.map((v: { label: string; identicalTo: string | null }) => [v.label, v.identicalTo]),
      [
        ['as-written', null],
        ['default', 'as-written'],
        ['1', null],
        ['2', null],
        ['4', null],
        ['8', null],
        ['16', null],
        ['full', '4'],
      ],
    );
    assert.deepEqual(Object.keys(cold.timing), ['wallS', 'compileS', 'checkS', 'profileS', 'gpuIdleS', 'gpuRuns', 'gpus']);
    assert.equal(cold.timing.gpuRuns, 6);

    // the final code (ncu prints the raw page itself): the headline numbers
    const final = m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'bench-gpu-final')));
    close(final.wall.ratio, 27.274 / 57.465);
    assert.equal(Math.round(final.largestMedianDiff! * 10000) / 100, 0.53);
    assert.equal(final.targets.cached.gpuRuns, 0);
    assert.deepEqual(
      Object.values(final.targets).map(t => t.ok),
      [true, true, null, true],
    );

    const pair = m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200x2', 'bench-gpu')));
    close(pair.wall.speedup2, 28.103 / 25.03);
    assert.equal(pair.targets.twoGpus.ok, false);
    assert.equal(pair.targets.ratio.ok, false, 'the H200 pair: 28.3 s against a 55.8 s hand loop');
  });

  test('issue 25, the CUPTI timer (H100 pair): judged against ncu unflushed, the loop with stalls and the timing-only loop', async () => {
    const m = (await load()) as SummaryModule & {
      readDir(dir: string): Parameters<SummaryModule['summarise']>[0];
      renderMarkdown(s: unknown): string;
    };
    const dir = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100x2', 'bench-gpu-native');
    const s = m.summarise(m.readDir(dir)) as Summary & {
      native: boolean;
      wall: { timingRatio: number | null };
      targets: { timingRatio: Target };
    };
    assert.equal(s.native, true, 'the JSON says the CUPTI timer measured');
    close(s.wall.ratio, 11.669 / 54.22);
    close(s.wall.timingRatio, 10.071 / 40.814);
    // every CUPTI median 1.2–1.4 µs under ncu's --cache-control none: the per-launch offset (docs/measurements.md)
    for (const r of s.factors) {
      const us = (r.oursMs! - r.handMs!) * 1000;
      assert.ok(us < -1.1 && us > -1.5, `${r.factor}: ${us} µs`);
    }
    assert.deepEqual(
      [s.targets.ratio.ok, s.targets.timingRatio.ok, s.targets.medians.ok, s.targets.cached.ok, s.targets.twoGpus.ok],
      [false, true, false, true, false],
    );
    const md = m.renderMarkdown(s);
    assert.match(md, /\| ratio, timing only \| 0\.247 \| ≤ 0\.25 \| PASS \|/);
    assert.match(md, /hand ncu --cache-control none median ms/);
  });

  test('issue 25, the final code on one H100 (runs started ahead): both wall-time targets met in one run', async () => {
    const m = (await load()) as SummaryModule & { readDir(dir: string): Parameters<SummaryModule['summarise']>[0] };
    const s = m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'bench-gpu-native'))) as Summary & {
      native: boolean;
      wall: { timingRatio: number | null };
      targets: { timingRatio: Target };
    };
    assert.equal(s.native, true);
    close(s.wall.ratio, 9.434 / 52.62);
    close(s.wall.timingRatio, 8.236 / 38.242);
    assert.deepEqual(
      [s.targets.ratio.ok, s.targets.timingRatio.ok, s.targets.medians.ok, s.targets.cached.ok, s.targets.twoGpus.ok],
      [true, true, false, true, null],
    );
    // the medians' miss is the fixed per-launch offset: 0.9–1.6 µs under ncu on every factor
    for (const r of s.factors) {
      const us = (r.oursMs! - r.handMs!) * 1000;
      assert.ok(us < -0.9 && us > -1.6, `${r.factor}: ${us} µs`);
    }
  });
  test('issue 25, runs started ahead on every GPU (H100 pair): few and many launches per run, both wall-time targets met', async () => {
    const m = (await load()) as SummaryModule & { readDir(dir: string): Parameters<SummaryModule['summarise']>[0] };
    const judge = (name: string) =>
      m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100x2', name))) as Summary & {
        native: boolean;
        wall: { timingRatio: number | null };
        targets: { timingRatio: Target };
      };
    const many = judge('bench-gpu-ahead');
    close(many.wall.ratio, 11.257 / 60.085);
    close(many.wall.timingRatio, 10.106 / 47.298);
    // --reps 8: 7 timed launches a run, so 3 runs a variant; the hand loop ran ncu 3 times per factor
    // (hand-<f>.run2.csv, .run3.csv) and takes its first 20 launches, as the bench does
    const few = judge('bench-gpu-few');
    assert.ok(
      few.factors.every(r => r.handSamples === 20 && r.oursSamples === 20),
      JSON.stringify(few.factors),
    );
    close(few.wall.ratio, 15.64 / 109.059);
    close(few.wall.timingRatio, 14.895 / 85.187);
    for (const s of [many, few]) {
      assert.equal(s.native, true);
      assert.deepEqual(
        [s.targets.ratio.ok, s.targets.timingRatio.ok, s.targets.medians.ok, s.targets.cached.ok, s.targets.twoGpus.ok],
        [true, true, false, true, false],
      );
      // the medians' miss is the fixed per-launch offset, the same on few and many launches
      for (const r of s.factors) {
        const us = (r.oursMs! - r.handMs!) * 1000;
        assert.ok(us < -0.5 && us > -1.6, `${r.factor}: ${us} µs`);
      }
    }
  });
  test('issue 25, serialized kernel records (one H100): both wall-time targets met, medians now a little over ncu unflushed', async () => {
    const m = (await load()) as SummaryModule & { readDir(dir: string): Parameters<SummaryModule['summarise']>[0] };
    const s = m.summarise(m.readDir(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'bench-gpu-serial'))) as Summary & {
      native: boolean;
      wall: { timingRatio: number | null };
      targets: { timingRatio: Target };
    };
    assert.equal(s.native, true);
    close(s.wall.ratio, 8.258 / 53.847);
    close(s.wall.timingRatio, 7.37 / 38.515);
    assert.deepEqual([s.targets.ratio.ok, s.targets.timingRatio.ok, s.targets.medians.ok, s.targets.cached.ok], [true, true, false, true]);
    // serialized records: every factor 0.2–1.0 µs over ncu (concurrent-kernel records were 0.9–1.6 µs under)
    for (const r of s.factors) {
      const us = (r.oursMs! - r.handMs!) * 1000;
      assert.ok(us > 0.2 && us < 1.0, `${r.factor}: ${us} µs`);
    }
  });
});
