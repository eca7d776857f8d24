// The bench rows' i-cache entry (issue 13): the slowdown predicted from each variant's real SASS
// (icache_cliff.cu built here with nvcc) and, from the GPU run recorded on an H100
// (test/fixtures/gpu/h100/cli/icache_cliff.json, `bench --json`, and its raw pages), the slowdown
// and no_instruction share measured, which replace the prediction. No GPU is needed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT, SAMPLES, useCudaTools } from './helpers';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';
import type { LoopVariant } from '../../src/engine/variants/reports';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { benchJson } from '../../src/engine/sweep/bench';
import { icacheEntries } from '../../src/engine/icache/entries';
import { attachIcache } from '../../src/engine/sweep/sweep';
import type { SweepResult, SweepVariant } from '../../src/schema/types';
import { benchResult, benchRow } from './benchFixture';
import { parseRawPage } from '../../src/engine/profile/ncuCsv';
import { kernelProfile, stallBreakdown } from '../../src/engine/profile/stalls';
import { renderBench } from '../../src/cli/bench';
import { fromLoopReport } from '../../src/engine/sweep/loopVariantsResult';
import { sweepCsv } from '../../src/engine/sweep/export';
import { measuredIcacheMarkdown } from '../../src/server/features';
import { UnrollFactor, UnrollFactors } from '../../src/engine/variants/factors';

const CLI = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'cli');
const FILE = path.join(SAMPLES, 'icache_cliff.cu');
const LINE = 72;
/** The recorded `unroll-lens bench icache_cliff.cu --loop 72 --json` on an H100. */
const recorded: { kernel: string; gpu: string; variants: (Omit<SweepVariant, 'icache' | 'message'> & { message?: string })[] } = JSON.parse(
  fs.readFileSync(path.join(CLI, 'icache_cliff.json'), 'utf8'),
);
const labels = recorded.variants.map(v => v.label);
const factorOf = (label: string): UnrollFactor => (label === 'full' || label === 'default' ? label : Number(label));

const cuda = useCudaTools(['nvdisasm']);
let built: LoopVariant[] | null = null;

/** The variants of the recording, built for sm_90 as the bench built them (the file as written first). */
async function sass(): Promise<LoopVariant[]> {
  if (built) return built;
  const t = cuda.toolchain!;
  const text = fs.readFileSync(FILE, 'utf8');
  const analysis = await analyze(text, FILE);
  const flags = flagsFromSettings({}, SAMPLES);
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-icache-'));
  const builder = new VariantBuilder({ nvcc: t.nvcc, arch: 'sm_90', flags, cacheDir, runner: t.runner });
  const specs = labels.map(l => (l === 'as-written' ? new Map() : new Map([[LINE, factorOf(l)]])));
  built = await new VariantInspector({ toolchain: t, builder, arch: 'sm_90' }).inspectVariants(FILE, text, analysis, LINE, specs);
  return built;
}

/** The recorded rows as the bench's sweep holds them, before the i-cache is attached. */
function rows(): SweepVariant[] {
  return recorded.variants.map(v =>
    benchRow(v.label, {
      kernel: recorded.kernel,
      status: v.status,
      message: v.message ?? null,
      samples: v.samples,
      medianMs: v.medianMs,
      iqrMs: v.iqrMs,
      cv: v.cv,
      speedup: v.speedup,
      withinNoise: v.withinNoise,
      stallShare: v.stallShare,
      achievedOccupancy: v.achievedOccupancy,
      kernelInstructions: v.kernelInstructions,
      registers: v.registers,
      factors: v.label === 'as-written' ? {} : { [String(LINE)]: factorOf(v.label) },
    }),
  );
}

/**
 * The sweep's i-cache step (attachIcache) on these rows, each with its build's hot loop and
 * theoretical occupancy, as the GPU runner's SASS side gives them.
 */
function withIcache(list: SweepVariant[], s: LoopVariant[], arch: string): SweepVariant[] {
  const variants = list.map((v, i) => ({
    ...v,
    hotCode: { [String(LINE)]: s[i].icache ?? null },
    occupancy: s[i].warpsPerSm ? s[i].warpsPerSm! / 64 : null,
  }));
  const r = { arch, variants, warpsPerSm: null } as unknown as SweepResult;
  attachIcache(r);
  return r.variants;
}

const row = <T>(list: T[], label: string): T => list[labels.indexOf(label)];

describe('bench i-cache entries: measured replaces predicted', () => {
  test('the recorded GPU run: every measured row shows its measured slowdown and no_instruction share', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const s = await sass();
    const out = withIcache(rows(), s, 'sm_90');
    // The reference: the most unrolled variant measured whose hot code fits the first level.
    const fitting = labels.filter((_, i) => out[i].icache?.fits);
    assert.ok(fitting.includes('64') && !fitting.includes('as-written'), `fitting: ${fitting}`);
    const reference = fitting.reduce((a, b) => (row(s, b).icache!.bytes > row(s, a).icache!.bytes ? b : a));
    for (const r of out) {
      const c = r.icache!;
      assert.ok(c.measured);
      // Issue 22: a slower variant whose hot loop fits is measured slower, but not for the i-cache.
      assert.equal(c.shown, c.measured.slowdown > 1 && c.fits ? 'not-icache' : 'measured', r.label);
      // the panel's rows name it by their own label (×64)
      assert.equal(c.reference, row(out, reference).label);
      // this median ÷ the reference's, and ncu's no_instruction share of this row
      assert.ok(Math.abs(c.measured.slowdown - r.medianMs! / row(out, reference).medianMs!) < 1e-3, r.label);
      assert.equal(c.measured.noInstruction, r.stallShare!.no_instruction);
      // 6.25 % achieved occupancy of sm_90's 64 warps: the launch really had 4 warps per SM
      assert.equal(c.warpsSource, 'achieved');
      assert.equal(c.warpsPerSm, Math.round((r.achievedOccupancy! / 100) * 64));
      assert.match(c.basis, /achieved occupancy/);
    }
    assert.equal(row(out, reference).icache!.measured!.slowdown, 1);
    // The file as written (2048 copies) overflows the cache: predicted and measured slower, stalled on instruction fetch.
    const big = row(out, 'as-written').icache!;
    assert.equal(big.fits, false);
    assert.ok(big.bytes! > 128 * 1024);
    assert.ok(big.predicted!.low > 1 && big.predicted!.low <= big.predicted!.high, JSON.stringify(big.predicted));
    assert.ok(big.measured!.slowdown > 1.2 && big.measured!.noInstruction! > 0.3, JSON.stringify(big.measured));
    assert.equal(big.shown, 'measured');
    assert.equal(big.measured!.attribution!.cause, 'icache');
    // ×1 (rolled) is 1.38× the time of ×64 with a hot loop that fits and 8 % no_instruction: not the i-cache.
    const rolled = row(out, '1').icache!;
    assert.ok(rolled.measured!.slowdown > 1.3 && rolled.fits, JSON.stringify(rolled));
    assert.equal(rolled.shown, 'not-icache');
    assert.match(
      rolled.measured!.attribution!.why,
      /^slower, not i-cache: hot loop fits \(\d+\.\d KiB\); no_instruction 8 % \(reference 1 %\); top stall wait 47 %$/,
    );
    // ×16 fits: no penalty predicted beyond the fit's spread
    const small = row(out, '16').icache!;
    assert.equal(small.fits, true);
    assert.ok(small.predicted!.low <= 1.05, JSON.stringify(small.predicted));
    // The loop hover: the measurement replaces the prediction, the prediction kept beside it.
    const hoverLine = measuredIcacheMarkdown({ variants: out } as unknown as SweepResult);
    assert.match(
      hoverLine,
      /^\*\*i-cache\*\* \(measured on the GPU\): the file as written \d\.\d\d× the time of ×\d+, no_instruction \d+ % of stalls \(predicted \d\.\d\d–\d\.\d\d×\)$/,
    );
    assert.equal(
      measuredIcacheMarkdown({
        variants: withIcache(
          rows().map(r => ({ ...r, medianMs: null })),
          s,
          'sm_90',
        ),
      } as unknown as SweepResult),
      '',
    );
  });

  test("no_instruction and the launch's warps come from the raw pages the same run kept", async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const s = await sass();
    // The recorded raw page of each variant, read as the bench's time stage reads it.
    const fromPages = rows().map((r, i) => {
      const page = parseRawPage(fs.readFileSync(path.join(CLI, 'reports', `icache_cliff-L72-${labels[i]}-0.raw.csv`), 'utf8'));
      const p = kernelProfile(page.kernels[0]);
      return { ...r, stallShare: p.stallShare, achievedOccupancy: p.achievedOccupancy };
    });
    const out = icacheEntries(fromPages, s, 'sm_90');
    const asWritten = out[labels.indexOf('as-written')]!;
    const page = parseRawPage(fs.readFileSync(path.join(CLI, 'reports', 'icache_cliff-L72-as-written-0.raw.csv'), 'utf8'));
    assert.equal(asWritten.measured!.noInstruction, stallBreakdown(page.kernels[0]).stallShare.no_instruction);
    assert.equal(asWritten.warpsPerSm, 4);
    // the basis names where the no_instruction share came from: the timer that measured
    assert.match(icacheEntries(fromPages, s, 'sm_90', 'ncu')[0]!.basis, /no_instruction share from ncu's warp-stall metrics/);
    assert.match(icacheEntries(fromPages, s, 'sm_90', 'cupti')[0]!.basis, /no_instruction share from the CUPTI timer's PC samples/);
  });

  test('without a GPU run every row is predicted, at the theoretical occupancy', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const s = await sass();
    const unmeasured = rows().map(r => ({ ...r, status: 'cancelled' as const, medianMs: null, stallShare: null, achievedOccupancy: null }));
    const out = withIcache(unmeasured, s, 'sm_90');
    for (const [i, r] of out.entries()) {
      const c = r.icache!;
      assert.equal(c.shown, 'predicted', r.label);
      assert.equal(c.measured, null);
      assert.equal(c.reference, null);
      assert.equal(c.warpsSource, 'theoretical');
      assert.equal(c.warpsPerSm, s[i].warpsPerSm);
      assert.ok(c.predicted && c.predicted.low <= c.predicted.high);
    }
  });

  test('one variant measured has nothing to be compared with: still predicted', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const s = await sass();
    const only = rows().map((r, i) => (i === 0 ? r : { ...r, status: 'cancelled' as const, medianMs: null }));
    const out = withIcache(only, s, 'sm_90');
    assert.equal(out[0].icache!.shown, 'predicted');
    assert.equal(out[0].icache!.measured, null);
    assert.equal(out[0].icache!.reference, null);
    // the prediction is still for the launch ncu measured
    assert.equal(out[0].icache!.warpsSource, 'achieved');
  });

  test('bench text marks (measured) / (predicted); the JSON and the panel result carry the same entry', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const s = await sass();
    const measured = withIcache(rows(), s, 'sm_90');
    const report = benchResult({
      gpu: recorded.gpu,
      clockControl: 'none',
      variants: measured,
      loops: [{ line: LINE, written: 'default', tripCount: 'runtime', pragma: null }],
    });
    const text = renderBench(report);
    assert.match(text, /i-cache slowdown vs 64/);
    const asWrittenLine = text.split('\n').find(l => l.startsWith('as-written') && l.includes('KiB'))!;
    assert.match(asWrittenLine, /\d\.\d\d× \(measured\)/);
    assert.doesNotMatch(text, /\(predicted\)\s/);
    const json = benchJson(report);
    // the contract names the reference by bench label (64), the panel by its row label (×64)
    assert.deepEqual(json.variants[0].icache, { ...measured[0].icache, reference: '64' });
    // A run that measured nothing: the text says predicted.
    const cancelled = withIcache(
      rows().map(r => ({ ...r, status: 'cancelled' as const, medianMs: null })),
      s,
      'sm_90',
    );
    assert.match(renderBench({ ...report, variants: cancelled }), /as-written .*KiB .*× \(predicted\)/);
    // The panel shows the bench's result itself: its rows name the reference by their own label.
    const panel = report;
    const v = panel.variants[0];
    assert.equal(v.icache!.shown, 'measured');
    assert.equal(v.icache!.reference, '×64');
    assert.deepEqual(v.icache!.measured, measured[0].icache!.measured);
    // Export CSV saves the column too.
    const [header, first] = sweepCsv(panel)
      .split('\r\n')
      .map(l => l.split(','));
    assert.equal(first[header.indexOf('icache shown')], 'measured');
    assert.equal(Number(first[header.indexOf('icache measured slowdown')]), v.icache!.measured!.slowdown);
    assert.equal(first[header.indexOf('icache reference')], '×64');
  });

  test('"Build unroll variants" (SASS only): the panel rows carry predictions, never a measurement', async t => {
    if (cuda.skip) return t.skip(cuda.skip);
    const t0 = cuda.toolchain!;
    const text = fs.readFileSync(FILE, 'utf8');
    const analysis = await analyze(text, FILE);
    const builder = new VariantBuilder({
      nvcc: t0.nvcc,
      arch: 'sm_90',
      flags: flagsFromSettings({}, SAMPLES),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-icache-')),
      runner: t0.runner,
    });
    const report = await new VariantInspector({ toolchain: t0, builder, arch: 'sm_90' }).inspectLoop(
      FILE,
      text,
      analysis,
      LINE,
      UnrollFactors.of([16, 'full']),
    );
    const r = fromLoopReport(report, { file: FILE, analysis, arch: 'sm_90', nvcc: null });
    const byLabel = new Map(r.variants.map(v => [v.label, v.icache]));
    for (const c of byLabel.values()) {
      assert.equal(c!.shown, 'predicted');
      assert.equal(c!.measured, null);
      assert.equal(c!.warpsSource, 'theoretical');
    }
    assert.equal(byLabel.get('×16')!.fits, true);
    assert.equal(byLabel.get('full')!.fits, false);
  });
});
