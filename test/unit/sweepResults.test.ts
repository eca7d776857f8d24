// What happens to a SweepResult after the sweep: saved and listed, exported as CSV and T4,
// shown as sweep --json; and the older one-loop reports converted into it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, SAMPLES } from './helpers';
import type { SweepResult, SweepVariant } from '../../src/protocol';
import { emptyVariant } from '../../src/engine/sweep/variant';
import { listResults, loadResult, resultsDir, saveResult, stamp } from '../../src/engine/sweep/store';
import { csvField, sweepCsv, sweepT4 } from '../../src/engine/sweep/export';
import { sweepJson } from '../../src/engine/sweep/json';
import { fromLoopReport } from '../../src/engine/sweep/loopVariantsResult';
import type { LoopReport, LoopVariant } from '../../src/engine/variants/reports';

function variant(factors: SweepVariant['factors'], params: SweepVariant['params'], over: Partial<SweepVariant> = {}): SweepVariant {
  return { ...emptyVariant({ factors, params }, 'ok'), ...over };
}

/** A small GPU result by hand: two loops, one parameter. */
function gpuResult(over: Partial<SweepResult> = {}): SweepResult {
  const timed = (median: number) => ({
    samples: 20,
    medianMs: median,
    q1Ms: median * 0.99,
    q3Ms: median * 1.01,
    iqrMs: median * 0.02,
    cv: 0.01,
  });
  return {
    schema: 1,
    file: '/w/k.cu',
    kernel: 'k',
    kernelLine: 3,
    loops: [
      { line: 40, written: 'default', tripCount: 'runtime', pragma: null },
      { line: 52, written: 'full', tripCount: 8, pragma: 'unroll' },
    ],
    arch: 'sm_90',
    nvcc: '13.0',
    gpu: 'NVIDIA H100 80GB HBM3',
    static: false,
    strategy: 'exhaustive',
    origin: 'sweep',
    createdAt: '2026-11-23T10:00:00.000Z',
    factors: [4, 'full'],
    params: { BLOCK: ['8', '16'] },
    spaceSize: 8,
    evaluations: 4,
    baseline: 'as-written',
    best: '40=4,52=full|BLOCK=8',
    bestBasis: 'fastest median kernel time',
    icacheBudgetBytes: 49920,
    icacheBudgetNote: 'measured',
    variants: [
      variant(
        {},
        {},
        {
          ...timed(1.0),
          kernelInstructions: 200,
          speedup: 1,
          withinNoise: true,
          compileMs: 900,
          stallShare: { long_scoreboard: 0.6, no_instruction: 0.1 },
        },
      ),
      variant(
        { 40: 4, 52: 'full' },
        { BLOCK: '8' },
        {
          ...timed(0.8),
          kernelInstructions: 260,
          registers: 32,
          speedup: 1.25,
          withinNoise: false,
          compileMs: 1100,
          loopInstructions: { 40: 70, 52: 12 },
          effectiveUnroll: { 40: 4, 52: 8 },
          stallShare: { long_scoreboard: 0.5, wait: 0.2 },
        },
      ),
      variant(
        { 40: 'full', 52: 'full' },
        { BLOCK: '8' },
        { ...timed(0.8), identicalTo: '40=4,52=full|BLOCK=8', speedup: 1.25, compileMs: 1000 },
      ),
      variant(
        { 40: 4, 52: 'full' },
        { BLOCK: '16' },
        { status: 'compile', message: '=HYPERLINK("http://x") error: "BLOCK", bad\nsecond line', compileMs: 300 },
      ),
      variant({ 40: 4, 52: 4 }, { BLOCK: '16' }, { status: 'cancelled' }),
    ],
    notes: [],
    complete: true,
    ...over,
  };
}

describe('saved results (.unroll-lens/results)', () => {
  test('saved atomically under <kernel>-<YYYYMMDD-HHMMSS>.json; no temporary file left; never overwrites', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-store-'));
    const r = gpuResult();
    const a = saveResult(ws, r);
    assert.equal(path.dirname(a), resultsDir(ws));
    assert.equal(path.basename(a), `k-${stamp(new Date(r.createdAt))}.json`);
    assert.match(path.basename(a), /^k-\d{8}-\d{6}\.json$/);
    assert.deepEqual(loadResult(a), r);
    const b = saveResult(ws, r);
    assert.notEqual(a, b);
    assert.match(path.basename(b), /-2\.json$/);
    assert.deepEqual(fs.readdirSync(resultsDir(ws)).sort(), [path.basename(a), path.basename(b)].sort(), 'no temporary files remain');
    // a template kernel name becomes a safe file name
    const t = saveResult(ws, { ...r, kernel: 'matmul<16>::op()' });
    assert.match(path.basename(t), /^matmul_16_op_-\d{8}-\d{6}\.json$/);
  });

  test('a reader never sees a partial file: readers during a save find the old listing or the whole new file', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-store-'));
    const big = gpuResult({ variants: Array.from({ length: 3000 }, (_, i) => variant({ 40: i + 1 }, {}, { message: 'x'.repeat(100) })) });
    const file = saveResult(ws, big);
    // the only names ever visible are whole results (a temporary file starts with '.', which listing skips)
    const { results, skipped } = listResults(ws);
    assert.equal(results.length, 1);
    assert.deepEqual(skipped, []);
    assert.equal(loadResult(file).variants.length, 3000);
  });

  test('listing: newest first, with kernel, time, static/GPU and best; garbage and foreign files skipped with a reason', () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-store-'));
    saveResult(ws, gpuResult({ createdAt: '2026-11-20T10:00:00.000Z', kernel: 'older' }));
    saveResult(ws, gpuResult({ createdAt: '2026-11-23T10:00:00.000Z', kernel: 'newer', static: true, gpu: null, best: null }));
    const dir = resultsDir(ws);
    fs.writeFileSync(path.join(dir, 'garbage.json'), '{"schema": 1, "kernel": "trunc');
    fs.writeFileSync(path.join(dir, 'foreign.json'), JSON.stringify({ name: 'package', version: '1.0.0' }));
    fs.writeFileSync(path.join(dir, 'future.json'), JSON.stringify({ ...gpuResult(), schema: 2 }));
    fs.writeFileSync(path.join(dir, 'array.json'), '[1,2]');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a result');
    fs.writeFileSync(path.join(dir, '.k-20261123-100000.123-abcd.tmp'), '{"sch');
    fs.mkdirSync(path.join(dir, 'sub.json'));
    const { results, skipped } = listResults(ws);
    assert.deepEqual(
      results.map(x => [x.kernel, x.static, x.best]),
      [
        ['newer', true, null],
        ['older', false, 'L40 ×4 · L52 full · BLOCK=8'],
      ],
    );
    assert.equal(results[1].createdAt, '2026-11-20T10:00:00.000Z');
    assert.equal(results[1].source, '/w/k.cu');
    assert.deepEqual(skipped.map(s => s.file).sort(), ['array.json', 'foreign.json', 'future.json', 'garbage.json']);
    const reason = (f: string) => skipped.find(s => s.file === f)!.reason;
    assert.match(reason('garbage.json'), /not valid JSON/);
    assert.match(reason('foreign.json'), /no schema field/);
    assert.match(reason('future.json'), /schema 2 is not supported/);
    assert.match(reason('array.json'), /not a JSON object/);
    assert.throws(() => loadResult(path.join(dir, 'future.json')), /schema 2 is not supported/);
    assert.deepEqual(listResults(path.join(ws, 'nowhere')), { results: [], skipped: [] });
  });
});

describe('exports', () => {
  test('CSV: a column per loop factor, parameter and measurement; RFC 4180 quoting; formulas neutralised', () => {
    const csv = sweepCsv(gpuResult());
    assert.ok(csv.endsWith('\r\n'));
    const rows = csv.slice(0, -2).split('\r\n');
    const header = rows[0].split(',');
    assert.deepEqual(header.slice(0, 6), ['id', 'label', 'status', 'L40', 'L52', 'BLOCK']);
    for (const h of [
      'kernelInstructions',
      'loopInstructions L40',
      'effectiveUnroll L52',
      'medianMs',
      'speedup',
      'stall long_scoreboard',
      'stall wait',
      'best',
      'message',
    ]) {
      assert.ok(header.includes(h), h);
    }
    assert.ok(rows[2].startsWith('"40=4,52=full|BLOCK=8",L40 ×4 · L52 full · BLOCK=8,ok,4,full,8,260,'), rows[2]);
    assert.ok(rows[1].startsWith('as-written,as written,ok,as-written,as-written,,'));
    // the compile message: starts with '=', holds quotes, a comma and a line break
    assert.ok(csv.includes('"\'=HYPERLINK(""http://x"") error: ""BLOCK"", bad\nsecond line"'), csv);
    assert.equal(rows.length, 1 + 5, "a header and one record per variant: the message's line break stays inside its quoted field");
    assert.equal(csvField('-2'), '-2', 'a number stays a number');
    assert.equal(csvField('-2+3+cmd|x'), "'-2+3+cmd|x");
    assert.equal(csvField('+1'), '+1');
    assert.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvField('\t=1'), "'\t=1");
    assert.equal(csvField(-3), '-3');
    assert.equal(csvField(null), '');
    assert.equal(csvField(true), 'true');
  });

  // Required by results-schema.json of T4 1.0.0: per result configuration (object), times
  // (object: compilation_time number, runtimes array), invalidity (enum), correctness (number);
  // schema_version matching major.minor.patch.
  function checkT4(doc: unknown): void {
    const d = doc as Record<string, unknown>;
    assert.match(String(d.schema_version), /^[0-9]{1,}.[0-9]{1,}.[0-9]{1,}$/);
    assert.ok(Array.isArray(d.results));
    for (const r of d.results as Record<string, unknown>[]) {
      for (const k of ['configuration', 'times', 'invalidity', 'correctness']) assert.ok(k in r, `missing ${k}`);
      assert.equal(typeof r.configuration, 'object');
      const times = r.times as Record<string, unknown>;
      assert.equal(typeof times, 'object');
      assert.equal(typeof times.compilation_time, 'number');
      assert.ok(Array.isArray(times.runtimes));
      for (const k of ['framework', 'search_algorithm', 'validation']) assert.ok(!(k in times) || typeof times[k] === 'number');
      assert.ok(['timeout', 'compile', 'runtime', 'correctness', 'constraints', 'correct'].includes(r.invalidity as string));
      assert.equal(typeof r.correctness, 'number');
      if ('timestamp' in r) assert.equal(typeof r.timestamp, 'string');
      if ('objectives' in r) assert.ok(Array.isArray(r.objectives));
      for (const m of (r.measurements ?? []) as Record<string, unknown>[]) {
        assert.equal(typeof m.name, 'string');
        assert.ok(['number', 'string'].includes(typeof m.value) || Array.isArray(m.value), `${m.name}`);
        assert.equal(typeof m.unit, 'string');
      }
    }
  }

  test('T4: required fields, configuration per loop and parameter, invalidity mapping, objectives', () => {
    const t4 = sweepT4(gpuResult());
    checkT4(JSON.parse(JSON.stringify(t4)));
    assert.equal(t4.schema_version, '1.0.0');
    assert.equal(t4.results.length, 4, 'the cancelled variant is not a result');
    assert.deepEqual(t4.results[0].configuration, { unroll_L40: 'default', unroll_L52: 'full', BLOCK: null });
    assert.deepEqual(t4.results[1].configuration, { unroll_L40: 4, unroll_L52: 'full', BLOCK: 8 });
    assert.deepEqual(t4.results[1].times, { compilation_time: 1100, runtimes: [0.8] });
    assert.deepEqual([t4.results[1].invalidity, t4.results[1].correctness], ['correct', 1]);
    assert.deepEqual([t4.results[3].invalidity, t4.results[3].correctness], ['compile', 0]);
    assert.deepEqual(t4.results[1].objectives, ['time']);
    const m = Object.fromEntries(t4.results[1].measurements.map(x => [x.name, x]));
    assert.deepEqual(m.time, { name: 'time', value: 0.8, unit: 'ms' });
    assert.equal(m.stall_long_scoreboard.value, 0.5);
    assert.equal(m.effective_unroll_L40.value, 4);
    assert.equal(m.variant.value, '40=4,52=full|BLOCK=8');
    assert.equal(Object.fromEntries(t4.results[2].measurements.map(x => [x.name, x.value])).identical_to, '40=4,52=full|BLOCK=8');
    // static: no runtimes, the static rank is the objective
    const s = sweepT4(
      gpuResult({
        static: true,
        gpu: null,
        variants: gpuResult().variants.map(v => ({
          ...v,
          samples: 0,
          medianMs: null,
          q1Ms: null,
          q3Ms: null,
          iqrMs: null,
          cv: null,
          speedup: null,
        })),
      }),
    );
    checkT4(s);
    assert.deepEqual(s.results[0].times.runtimes, []);
    assert.deepEqual(s.results[0].objectives, ['static_rank']);
    // ranked: every valid variant with a SASS measurement (1 = best by the static rule)
    const ranks = s.results
      .filter(x => x.measurements.some(mm => mm.name === 'kernel_instructions'))
      .map(x => x.measurements.find(mm => mm.name === 'static_rank')?.value);
    assert.deepEqual(ranks.sort(), [1, 2]);
  });

  test('sweep --json of a one-loop sweep: identicalTo is the factor value', () => {
    const r = gpuResult({
      loops: [{ line: 40, written: 'default', tripCount: 'runtime', pragma: null }],
      params: {},
      variants: [
        variant({}, {}),
        variant({ 40: 4 }, {}),
        variant({ 40: 'full' }, {}, { identicalTo: '40=4' }),
        variant({ 40: 'default' }, {}, { identicalTo: 'as-written' }),
      ],
      best: '40=4',
    });
    const j = sweepJson(r);
    assert.deepEqual(
      j.variants.map(v => v.identicalTo),
      [null, null, 4, 'as-written'],
    );
    assert.deepEqual(j.best!.factors, { 40: 4 });
    // with parameters: the factors and params of the other variant
    assert.deepEqual(sweepJson(gpuResult()).variants[2].identicalTo, { factors: { 40: 4, 52: 'full' }, params: { BLOCK: '8' } });
  });
});

describe('one-loop reports as SweepResults', () => {
  test('fromLoopReport: one-loop static sweep, ids by factor, identical variants, baseline at the written factor', async () => {
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const analysis = await analyze(text, file);
    const line = analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    const lv = (factor: LoopVariant['factor'], instr: number, eu: number, identicalTo: LoopVariant['identicalTo'] = null): LoopVariant => ({
      factor,
      key: `L${line}=${factor}`,
      status: 'ok',
      kernel: '_Z12matmul_basicPKfS0_Pfi',
      kernelInstructions: instr,
      kernelBytes: instr * 16,
      loopInstructions: instr - 40,
      effectiveUnroll: eu,
      fullyUnrolled: false,
      registers: 32,
      spillStores: 0,
      spillLoads: 0,
      identicalTo,
      cached: false,
      compileMs: 500,
      failure: null,
    });
    const report: LoopReport = {
      line,
      kernel: 'matmul_basic',
      written: 'default',
      arch: 'sm_90',
      notes: ['full unroll requested but the trip count is not a compile-time constant'],
      limitation: null,
      variants: [
        lv('default', 216, 16),
        lv(1, 90, 1),
        lv(4, 130, 4),
        lv('full', 130, 4, 4),
        {
          ...lv(8, 0, 0),
          status: 'failed',
          kernelInstructions: null,
          effectiveUnroll: null,
          failure: {
            kind: 'source',
            messages: [{ file, line: 3, column: 1, severity: 'error', code: null, message: 'boom', kind: 'source' }],
          },
        },
      ],
    };
    const r = fromLoopReport(report, { file, analysis, arch: 'sm_90', nvcc: '13.0', createdAt: '2026-11-23T10:00:00.000Z' });
    assert.equal(r.origin, 'variants');
    assert.equal(r.kernel, 'matmul_basic');
    assert.equal(r.kernelLine, analysis.kernels.find(k => k.name === 'matmul_basic')!.line);
    assert.deepEqual(
      r.variants.map(v => v.id),
      ['default', '1', '4', 'full', '8'].map(f => `${line}=${f}`),
    );
    assert.deepEqual(
      r.variants.map(v => v.label),
      ['default', '×1', '×4', 'full', '×8'],
    );
    assert.equal(r.variants[3].identicalTo, `${line}=4`);
    assert.equal(r.variants[4].status, 'compile');
    assert.match(r.variants[4].message!, /:3 boom/);
    assert.equal(r.baseline, `${line}=default`);
    assert.equal(r.best, `${line}=default`, 'most unrolled (×16) wins statically');
    assert.equal(r.static, true);
    assert.equal(r.evaluations, 5);
    assert.deepEqual(r.factors, ['default', 1, 4, 'full', 8]);
    assert.ok(r.notes[0].startsWith('full unroll requested'));
  });
});
