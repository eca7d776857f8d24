// Issue 23, forged or impossible numbers: every number from outside is checked against one
// definition of its range (src/schema/ranges.ts, src/schema/result.ts) at every boundary. Each
// reproduction below made Unroll Lens show or write an impossible number before the fix: an ncu
// CSV with durations of 0 or -1500 ns was averaged into a median, planted result files made Apply
// write `#pragma unroll -4`, `0`, `2.5` and (from 1e400, null on the JSON wire) `0`, the
// unrollFactors setting built `#pragma unroll 1e+23`, --samples 100000 and --jobs 1000 ran.
// Everything happens in temp folders next to a canary file that must stay unchanged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, REPO_ROOT } from './helpers';
import { MEASUREMENT_FORMAT, MeasurementCache } from '../../src/engine/gpu/measurementCache';
import { seal, unseal } from '../../src/engine/base/cacheEntry';
import { installationKey } from '../../src/engine/base/cacheKey';
import { parseRawPage } from '../../src/engine/profile/ncuCsv';
import { parseRawPageStrict, RawPageError } from '../../src/engine/profile/rawPageStream';
import { listResults, loadResult, resultsDir } from '../../src/engine/sweep/store';
import { unrollPragmaEdit } from '../../src/engine/variants/applyEdit';
import { pragmaText, UnrollFactorError } from '../../src/engine/variants/rewrite';
import { UnrollFactors, writtenFactor } from '../../src/engine/variants/factors';
import { factorsOption, lineListOption, numberOption } from '../../src/cli/args';
import { UsageError } from '../../src/cli/io';
import { ResultsService } from '../../src/server/results';
import { DEFAULT_SETTINGS, readSettings, SETTINGS } from '../../src/settings';
import { parseUnrollFactorText, RANGES, UNROLL_FACTOR_PATTERN, validFactorTexts } from '../../src/schema/ranges';
import { checkSweepResult, SchemaError } from '../../src/schema/result';
import type { FileAnalysis } from '../../src/engine/parse/model';
import type { FactorValue, PragmaEditsResult, SweepResult } from '../../src/protocol';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sweep');
const fixture = (name: string): SweepResult => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));

let root: string;
let workspace: string;
let canary: string;
const CANARY_TEXT = 'canary: nothing may change this file\n';

before(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-numbers-'));
  workspace = path.join(root, 'ws');
  fs.mkdirSync(workspace);
  canary = path.join(root, 'canary.cu');
  fs.writeFileSync(canary, CANARY_TEXT);
});
after(() => {
  assert.equal(fs.readFileSync(canary, 'utf8'), CANARY_TEXT, 'the canary outside the workspace changed');
  fs.rmSync(root, { recursive: true, force: true });
});

function cli(args: string[], cwd = workspace) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd, timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// ------------------------------------------------------------------------------ ncu CSV

const RAW_HEADER =
  '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum"\n' +
  '"","","","","","","","","","","","UNIT"\n';
const rawRow = (id: number, duration: string) =>
  `"${id}","1","app","h","k(float*)","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","${duration}"\n`;
const rawPage = (unit: string, ...durations: string[]) => RAW_HEADER.replace('UNIT', unit) + durations.map((d, i) => rawRow(i, d)).join('');

describe('ncu CSV: a duration of 0 or less is impossible', () => {
  for (const [unit, bad] of [
    ['ns', '-1500'],
    ['ns', '0'],
    ['us', '-0.5'],
    ['ms', '0.000'],
    ['ns', '-0'],
  ]) {
    test(`strict reader (bench, stalls): ${bad} ${unit} is refused, naming the line, the metric and the value`, () => {
      const text = rawPage(unit, '1,234', bad, '1,250');
      assert.throws(
        () => parseRawPageStrict(text),
        (e: Error) =>
          e instanceof RawPageError &&
          e.message.includes('line 4 (launch ID 1)') &&
          e.message.includes(`gpu__time_duration.sum is ${bad} ${unit}`) &&
          /impossible kernel duration/.test(e.message),
      );
    });
  }

  test('lenient reader (recorded pages, i-cache calibration): the row is left out and listed with why', () => {
    const page = parseRawPage(rawPage('ns', '1,234', '-1500', '0', '1,250'));
    assert.deepEqual(
      page.kernels.map(k => k.metrics['gpu__time_duration.sum'].value),
      [1234, 1250],
    );
    assert.equal(page.rejected?.length, 2);
    assert.match(page.rejected![0], /launch ID 1: gpu__time_duration\.sum is -1500 ns, an impossible kernel duration/);
    assert.equal(parseRawPage(rawPage('ns', '1,234')).rejected, undefined, 'a clean page rejects nothing');
  });

  test('`unroll-lens stalls` on a CSV with a negative duration: exit 65, nothing reported, the reason named', () => {
    const csv = path.join(workspace, 'forged.csv');
    fs.writeFileSync(csv, rawPage('ns', '1,234', '-1500'));
    const r = cli(['stalls', csv, '--json']);
    assert.equal(r.code, 65, r.err);
    assert.equal(r.out, '');
    assert.match(r.err, /gpu__time_duration\.sum is -1500 ns, an impossible kernel duration/);
    fs.writeFileSync(csv, rawPage('ns', '1,234', '1,250'));
    assert.equal(cli(['stalls', csv, '--json']).code, 0, 'the same page with possible durations is read');
  });
});

// ------------------------------------------------------------------------------ planted results and Apply

const LOOP_SOURCE = `__global__ void k(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
`;
const LOOP_LINE = 2;
let loopAnalysis: FileAnalysis;
before(async () => {
  loopAnalysis = await analyze(LOOP_SOURCE, path.join(root ?? os.tmpdir(), 'k.cu'));
});

/** Apply as the server answers PragmaEditsRequest (its only state is the module's functions). */
function pragmaEdits(factors: Record<string, unknown>): PragmaEditsResult {
  const service = Object.create(ResultsService.prototype) as ResultsService;
  return service.pragmaEdits(LOOP_SOURCE, loopAnalysis, factors as Record<string, FactorValue>);
}

/** A result as saved (a real H100 run), its variants[1] factor for loop 72 written as `factorJson` (raw JSON text). */
function plantedText(factorJson: string, over: (r: SweepResult) => void = () => undefined): string {
  const r = fixture('gpu-h100-icache_cliff');
  r.variants[1].factors = { 72: '__FACTOR__' as unknown as number };
  over(r);
  return JSON.stringify(r, null, 1).replace('"__FACTOR__"', factorJson);
}

describe('planted result files: rejected as a whole, naming the field and the value', () => {
  const cases: [string, string, RegExp][] = [
    ['factor -4', plantedText('-4'), /variants\[1\]\.factors\.72: expected default, full or an integer from 1 to 4096, got -4/],
    ['factor 0', plantedText('0'), /variants\[1\]\.factors\.72: .*got 0/],
    ['factor 2.5', plantedText('2.5'), /variants\[1\]\.factors\.72: .*got 2\.5/],
    ['factor 1e400', plantedText('1e400'), /variants\[1\]\.factors\.72: .*got Infinity/],
    ['factor "4"', plantedText('"4"'), /variants\[1\]\.factors\.72: .*got "4"/],
    ['median -7 ms', plantedText('2', r => (r.variants[2].medianMs = -7)), /variants\[2\]\.medianMs: expected a number > 0 .*got -7/],
    [
      'registers 999',
      plantedText('2', r => (r.variants[3].registers = 999)),
      /variants\[3\]\.registers: expected an integer from 0 to 255 .*got 999/,
    ],
    ['occupancy 1.5', plantedText('2', r => (r.variants[0].occupancy = 1.5)), /variants\[0\]\.occupancy: .*got 1\.5/],
    ['a stall share of 3', plantedText('2', r => (r.variants[0].stallShare = { wait: 3 })), /variants\[0\]\.stallShare\.wait: .*got 3/],
    ['loop line 0', plantedText('2', r => (r.loops[0].line = 0)), /loops\[0\]\.line: .*got 0/],
    [
      'a factors key that is not a line',
      plantedText('2', r => (r.variants[0].factors = { x: 4 })),
      /variants\[0\]\.factors\.x: expected a source line/,
    ],
  ];
  for (const [what, text, message] of cases) {
    test(`${what}: not listed, not loaded, the reason names the field`, () => {
      const dir = resultsDir(workspace);
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(dir, 'planted.json');
      fs.writeFileSync(file, text);
      try {
        const { results, skipped } = listResults(workspace);
        assert.deepEqual(results, []);
        assert.equal(skipped.length, 1);
        assert.match(skipped[0].reason, message);
        assert.throws(() => loadResult(file), message);
        assert.equal(fs.readFileSync(file, 'utf8'), text, 'the planted file is left as it is');
      } finally {
        fs.rmSync(file);
      }
    });
  }

  test('the same file with factor 2 (what was measured) loads', () => {
    const r = checkSweepResult(JSON.parse(plantedText('2')));
    assert.deepEqual(r.variants[1].factors, { 72: 2 });
  });
});

describe('Apply: only `#pragma unroll N` with an integer N nvcc honours', () => {
  // 1e400 arrives as null: JSON (the LSP wire) writes Infinity as null, which Number() made 0.
  for (const bad of [-4, 0, 2.5, null, Infinity, Number.NaN, '4', 1e23, 2 ** 31, 'abc', true, {}]) {
    test(`factor ${JSON.stringify(bad) ?? String(bad)}: no edit, a problem naming the loop and the value`, () => {
      const r = pragmaEdits({ [LOOP_LINE]: bad });
      assert.deepEqual(r.edits, []);
      assert.equal(r.problems.length, 1);
      assert.match(r.problems[0], /^factors\.2: expected default, full or an integer from 1 to 2147483647, got .*: nothing applied$/);
    });
  }

  test('a line key that is not a line number: refused', () => {
    for (const key of ['0', '-2', '2.0', 'x', '1e1']) {
      const r = pragmaEdits({ [key]: 4 });
      assert.deepEqual(r.edits, []);
      assert.match(r.problems[0], /expected a source line/);
    }
  });

  test('valid factors write the pragma; the file as written (a count past 4096 nvcc honours) is written back', () => {
    assert.equal(pragmaEdits({ [LOOP_LINE]: 4 }).edits[0].newText, '  #pragma unroll 4\n');
    assert.equal(pragmaEdits({ [LOOP_LINE]: 'full' }).edits[0].newText, '  #pragma unroll\n');
    assert.equal(pragmaEdits({ [LOOP_LINE]: 8192 }).edits[0].newText, '  #pragma unroll 8192\n');
    assert.deepEqual(pragmaEdits({ [LOOP_LINE]: 'default' }), { edits: [], problems: [] });
  });

  test('the engine refuses to print an impossible factor at all', () => {
    const loop = loopAnalysis.kernels[0].loops[0];
    for (const bad of [-4, 0, 2.5, Infinity, 1e23]) {
      assert.throws(() => unrollPragmaEdit(LOOP_SOURCE, loop, bad), UnrollFactorError);
      assert.throws(() => pragmaText(bad), UnrollFactorError);
    }
  });

  test('a loop written `#pragma unroll 0` or past 2^31-1 reads as default (nvcc ignores the pragma), so results stay valid', async () => {
    for (const n of ['0', '2147483648']) {
      const a = await analyze(LOOP_SOURCE.replace('  for', `  #pragma unroll ${n}\n  for`));
      assert.equal(writtenFactor(a.kernels[0].loops[0]), 'default', n);
    }
    const a = await analyze(LOOP_SOURCE.replace('  for', '  #pragma unroll 8192\n  for'));
    assert.equal(writtenFactor(a.kernels[0].loops[0]), 8192);
  });
});

// ------------------------------------------------------------------------------ measurement cache

describe('measurement cache: an entry with an impossible number is a miss, measured again', () => {
  const good = () => ({
    groups: [
      {
        key: 'k',
        kernel: '_Z1kPfi',
        blockSize: null,
        durations: [0.0581, 0.0582, 0.0583],
        last: {
          name: 'k',
          id: 0,
          durationNs: 58200,
          stalls: { wait: 10 },
          stallShare: { wait: 1 },
          stallSource: 'warp-state' as const,
          executedInstructions: 1234.5,
          achievedOccupancy: 87.5,
          registers: 32,
          blockSize: null,
          gridSize: null,
        },
      },
    ],
    stdout: 'ok\n',
  });
  const edits: [string, (m: ReturnType<typeof good>) => void][] = [
    ['a median of -7 ms', m => (m.groups[0].durations = [-7, -7, -7])],
    ['a duration of 0 ms', m => (m.groups[0].durations[1] = 0)],
    ['a duration as text', m => ((m.groups[0].durations as unknown[])[1] = '0.05')],
    ['999 registers', m => (m.groups[0].last.registers = 999)],
    ['achieved occupancy 250 %', m => (m.groups[0].last.achievedOccupancy = 250)],
    ['a stall share of 7', m => (m.groups[0].last.stallShare = { wait: 7 })],
    ['a duration of -1 ns in the profile', m => (m.groups[0].last.durationNs = -1)],
  ];
  for (const [what, edit] of edits) {
    test(what, () => {
      const cache = new MeasurementCache(path.join(workspace, 'measurements'));
      const key = 'b'.repeat(64);
      cache.put(key, good());
      assert.ok(cache.get(key), 'the entry as written is a hit');
      const file = path.join(cache.dir, key.slice(0, 2), `${key}.json`);
      // Sealed with this installation's key (cacheEntry.ts): re-sealed after the edit, so the
      // range check is what makes it a miss, not the signature (cacheFuzz covers edits unsigned).
      const body = unseal(installationKey(), MEASUREMENT_FORMAT, 'measurement', [key], fs.readFileSync(file, 'utf8'));
      assert.ok(body && typeof body === 'object', 'the entry unseals');
      const m = body as ReturnType<typeof good>;
      edit(m);
      fs.writeFileSync(file, seal(installationKey(), MEASUREMENT_FORMAT, 'measurement', [key], m));
      assert.equal(cache.get(key), null);
    });
  }
});

// ------------------------------------------------------------------------------ settings and options

describe('unroll factors from the setting and requests: one definition', () => {
  test('the setting with 1e23 and a 24-digit integer: dropped with a warning, never `#pragma unroll 1e+23`', () => {
    const warnings: string[] = [];
    const s = readSettings({ unrollFactors: ['4', '1e23', '100000000000000000000000'] }, m => warnings.push(m));
    assert.deepEqual(s.unrollFactors, ['4']);
    assert.equal(warnings.length, 2);
    assert.deepEqual(UnrollFactors.parse(s.unrollFactors).map(pragmaText), ['unroll 4']);
    // The client's copy of the same rule (it reads the setting itself for its pickers).
    const client: string[] = [];
    assert.deepEqual(
      validFactorTexts(['4', '1e23', 1e23, '100000000000000000000000', 'full'], m => client.push(m)),
      ['4', 'full'],
    );
    assert.equal(client.length, 3);
  });

  test('property: the client keeps exactly the entries the server keeps, for 1,000 random lists', () => {
    const rng = new Rng(1023);
    const items: unknown[] = ['1', '4', '08', '4096', '4097', '0', '-4', '2.5', '1e23', 'full', 'FULL', 'default', ' 4', '', 4, null, 1e23];
    for (let i = 0; i < 1000; i++) {
      const list = Array.from({ length: 1 + rng.int(5) }, () => rng.pick(items));
      const client = validFactorTexts(list, () => undefined);
      const server = readSettings({ unrollFactors: list }).unrollFactors;
      assert.deepEqual(client.length ? client : DEFAULT_SETTINGS.unrollFactors, server, JSON.stringify(list));
      for (const f of UnrollFactors.parse(server)) assert.ok(isFactor(f, 4096));
    }
  });

  test('a request naming 1e+23 or a 24-digit factor (the server, the CLI): refused with the range', () => {
    assert.throws(
      () => UnrollFactors.parse('100000000000000000000000'),
      /unroll factor '100000000000000000000000' is out of range: use default, full or an integer from 1 to 4096/,
    );
    assert.throws(() => UnrollFactors.parse('1e+23'), /bad unroll factor '1e\+23'/);
    assert.throws(
      () => factorsOption('4,4097'),
      (e: Error) => e instanceof UsageError && /--factors: unroll factor '4097' is out of range/.test(e.message),
    );
  });

  test("the settings pattern (VS Code's editor) accepts exactly the factors parseFactor accepts", () => {
    const pattern = new RegExp(UNROLL_FACTOR_PATTERN);
    for (let n = 0; n <= 100_000; n++) {
      const text = String(n);
      assert.equal(pattern.test(text), 'factor' in parseUnrollFactorText(text), text);
    }
    for (const t of ['default', 'full', '', '04', '+4', '4.0', '1e3', ' 4', 'FULL', '-1']) {
      const parsed = parseUnrollFactorText(t);
      if (pattern.test(t)) assert.ok('factor' in parsed, t);
    }
  });
});

describe('command-line numbers: out of range is an error, not a silent cap', () => {
  test('--samples 100000, --jobs 1000, --warmup 5000: refused with the range', () => {
    assert.throws(
      () => numberOption('samples', '100000', SETTINGS.profile.samples),
      /--samples takes an integer from 1 to 1000, not '100000'/,
    );
    assert.throws(() => numberOption('jobs', '1000', SETTINGS.jobs), /--jobs takes an integer from 0 to 64, not '1000'/);
    assert.throws(() => numberOption('warmup', '5000', SETTINGS.profile.warmup), /--warmup takes an integer from 0 to 1000/);
    assert.equal(numberOption('samples', '1000', SETTINGS.profile.samples), 1000);
    assert.equal(numberOption('jobs', '64', SETTINGS.jobs), 64);
  });

  test('the CLI stops before any nvcc starts: exit 2 and the message', () => {
    const cu = path.join(workspace, 'k.cu');
    fs.writeFileSync(cu, LOOP_SOURCE);
    for (const [args, message] of [
      [['sweep', cu, '--jobs', '1000'], /--jobs takes an integer from 0 to 64, not '1000'/],
      [['sass', cu, '--jobs', '65'], /--jobs takes an integer from 0 to 64, not '65'/],
      [['sweep', cu, '--samples', '100000'], /--samples takes an integer from 1 to 1000, not '100000'/],
      [['bench', cu, '--loop', '2', '--samples', '100000'], /--samples takes an integer from 1 to 1000/],
      [['bench', cu, '--loop', '1e1'], /--loop takes 1-based line numbers .* not '1e1'/],
    ] as [string[], RegExp][]) {
      const r = cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, message);
    }
  });

  test('--loop/--loops: decimal lines only', () => {
    assert.deepEqual(lineListOption('loops', '40, 52'), [40, 52]);
    for (const bad of ['0', '1e3', '0x28', '4.0', '', '40,', '-1', '99999999999'])
      assert.throws(() => lineListOption('loops', bad), /--loops takes 1-based line numbers/, bad);
  });
});

// ------------------------------------------------------------------------------ property: random result files

/** mulberry32 (as test/fuzz): a pure function of its seed, so a failing case replays. */
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

const WEIRD: unknown[] = [
  Number.NaN,
  Infinity,
  -Infinity,
  -0,
  0,
  -1,
  -7,
  0.5,
  2.5,
  1e23,
  2 ** 53,
  2 ** 31,
  4096,
  4097,
  256,
  255,
  1,
  '1e400',
  '4',
  '',
  null,
  true,
  [],
  {},
  { x: 1 },
  'default',
  'full',
];

function weird(rng: Rng): unknown {
  return rng.int(4) === 0 ? (rng.next() - 0.5) * 10 ** rng.int(12) : rng.pick(WEIRD);
}

/** Every (container, key) in a JSON value. */
function slots(v: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []): typeof out {
  if (Array.isArray(v))
    v.forEach((x, i) => {
      out.push([v, i]);
      slots(x, out);
    });
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, k]);
      slots(x, out);
    }
  return out;
}

/** One random result file's parsed value: a real result with 1 to 4 fields replaced, removed or added. */
function randomResult(rng: Rng): unknown {
  const base = structuredClone(rng.pick(BASES));
  for (let n = 1 + rng.int(4); n > 0; n--) {
    const all = slots(base);
    const numeric = all.filter(([c, k]) => typeof (c as Record<string, unknown>)[k as string] === 'number');
    const [container, key] = rng.int(3) ? rng.pick(numeric.length ? numeric : all) : rng.pick(all);
    const op = rng.int(10);
    if (op < 7) (container as Record<string, unknown>)[key as string] = weird(rng);
    else if (op < 9 && !Array.isArray(container)) delete container[key as string];
    else if (!Array.isArray(container)) container[`extra${rng.int(3)}`] = weird(rng);
  }
  // Through JSON text, as a file: a number written `1e400` parses as Infinity.
  const text = JSON.stringify(base).replace(/"1e400"/g, () => (rng.int(2) ? '1e400' : '"1e400"'));
  return JSON.parse(text);
}

let BASES: unknown[];
before(() => {
  BASES = ['gpu-h100-icache_cliff', 'gpu-h100-matvec_coordinate', 'matmul_basic', 'linear_small'].map(fixture);
});

const isFactor = (f: unknown, max: number) =>
  f === 'default' || f === 'full' || (Number.isInteger(f) && (f as number) >= 1 && (f as number) <= max);

/** Checks of an accepted result written apart from the schema: what the panel and Apply rely on. */
function assertPossible(r: SweepResult): void {
  slots(r).forEach(([c, k]) => {
    const v = (c as Record<string, unknown>)[k as string];
    if (typeof v === 'number') assert.ok(Number.isFinite(v) && v >= 0 && !Object.is(v, -0), `${String(k)} = ${v}`);
  });
  assert.ok(Number.isInteger(r.kernelLine) && r.kernelLine >= 1);
  for (const l of r.loops) assert.ok(Number.isInteger(l.line) && l.line >= 1 && isFactor(l.written, 2 ** 31 - 1));
  for (const f of r.factors) assert.ok(isFactor(f, 4096), String(f));
  for (const v of r.variants) {
    for (const [line, f] of Object.entries(v.factors)) assert.ok(/^[1-9]\d*$/.test(line) && isFactor(f, 4096), `${line}=${f}`);
    for (const ms of [v.medianMs, v.q1Ms, v.q3Ms]) assert.ok(ms === null || ms > 0);
    assert.ok(v.registers === null || (Number.isInteger(v.registers) && v.registers <= 255));
    assert.ok(v.occupancy === null || v.occupancy <= 1);
    assert.ok(v.speedup === null || v.speedup > 0);
    for (const s of Object.values(v.stallShare ?? {})) assert.ok(s <= 1);
  }
}

const PRAGMA = /^ {2}#pragma unroll( ([1-9]\d*))?\n$/;

describe('property: random result files (3,000 cases)', () => {
  test('rejected naming a field, or accepted with every number possible; Apply of an accepted one writes a valid pragma', () => {
    const rng = new Rng(Number(process.env.UNROLL_LENS_FUZZ_SEED ?? 23));
    let accepted = 0;
    let rejected = 0;
    for (let i = 0; i < 3000; i++) {
      const value = randomResult(rng);
      let r: SweepResult;
      try {
        r = checkSweepResult(value);
      } catch (e) {
        assert.ok(e instanceof SchemaError, `case ${i}: ${e}`);
        assert.ok(e.field.length > 0, `case ${i}: no field named: ${e.message}`);
        assert.ok(e.message.startsWith(`${e.field}: `), e.message);
        rejected++;
        continue;
      }
      accepted++;
      assertPossible(r);
      // Apply each variant's factor (and the loops as written) to a real loop.
      const factors = [...r.variants.flatMap(v => Object.values(v.factors)), ...r.loops.map(l => l.written)];
      for (const f of factors) {
        const { edits, problems } = pragmaEdits({ [LOOP_LINE]: f });
        assert.deepEqual(problems, [], `case ${i}: ${f}`);
        for (const e of edits) {
          const m = PRAGMA.exec(e.newText);
          assert.ok(m, `case ${i}: ${JSON.stringify(e.newText)}`);
          if (m[2]) assert.ok(Number(m[2]) <= 2 ** 31 - 1 && String(Number(m[2])) === m[2]);
        }
      }
    }
    // Both sides of the property were exercised.
    assert.ok(accepted > 150 && rejected > 1500, `accepted ${accepted}, rejected ${rejected}`);
  });

  test('random factors straight to Apply (a message, not a file): a valid pragma or a problem, never both', () => {
    const rng = new Rng(2323);
    for (let i = 0; i < 1500; i++) {
      const f = rng.int(3) ? weird(rng) : rng.int(5000);
      const { edits, problems } = pragmaEdits({ [LOOP_LINE]: f });
      if (problems.length) assert.deepEqual(edits, []);
      else if (edits.length) assert.match(edits[0].newText, PRAGMA);
      assert.equal(problems.length === 0, isFactor(f, 2 ** 31 - 1), `${String(f)}`);
    }
  });

  test('random option text: --samples, --jobs and --factors accept only in-range integers', () => {
    const rng = new Rng(4242);
    const pieces = ['1', '0', '9', '-', '+', '.', 'e', 'x', ' ', ',', '5', '00', 'full', '4096', '1000', '65'];
    for (let i = 0; i < 1500; i++) {
      const text = Array.from({ length: 1 + rng.int(5) }, () => rng.pick(pieces)).join('');
      for (const [name, decl, range] of [
        ['samples', SETTINGS.profile.samples, RANGES.samples],
        ['jobs', SETTINGS.jobs, RANGES.jobs],
      ] as const) {
        let n: number;
        try {
          n = numberOption(name, text, decl);
        } catch (e) {
          assert.ok(e instanceof UsageError && e.message.startsWith(`--${name} takes an integer from`), String(e));
          continue;
        }
        assert.ok(Number.isInteger(n) && n >= range.min && n <= range.max, `--${name} ${JSON.stringify(text)} → ${n}`);
      }
      let factors: (string | number)[] = [];
      try {
        factors = factorsOption(text).toJSON();
      } catch (e) {
        assert.ok(e instanceof UsageError && /^--factors: /.test(e.message), String(e));
      }
      for (const f of factors) assert.ok(isFactor(f, 4096), `--factors ${JSON.stringify(text)} → ${f}`);
    }
  });
});
