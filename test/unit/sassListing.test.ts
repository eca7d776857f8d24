// Annotated SASS listings over golden nvcc 13 / nvdisasm listings of cuda-samples/matmul_unroll.cu's
// runtime-trip loop (matmul_basic, line 51; test/fixtures/sass/listing/regenerate.sh), and the
// same through `unroll-lens sass --listing` on the real toolchain.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import type { SassFunction } from '../../src/engine/sass';
import { annotateListing, ListingContext, withStalls } from '../../src/engine/variants/listing';
import { readSassStallsFile } from '../../src/engine/profile/sassStalls';
import { hottestLoop, ownLineFilter, workCounts } from '../../src/engine/variants/loopAttribution';
import { WORK_CLASSES } from '../../src/engine/variants/appliedUnroll';
import { Normaliser, renderListing } from '../../src/engine/report/sassListing';
import type { SassListingData } from '../../src/protocol';
import { analyze, kernel, loopAt, REPO_ROOT, SAMPLES, useCudaTools } from './helpers';
import { main } from '../../src/cli/main';

async function runCli(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: x => (stdout += x), err: x => (stderr += x), isTTY: false });
  return { code, stdout, stderr };
}

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass', 'listing');
const SAMPLE = path.join(SAMPLES, 'matmul_unroll.cu');
const SAMPLE_TEXT = fs.readFileSync(SAMPLE, 'utf8');
/** The path the fixtures' line table names (regenerate.sh rewrites its temporary folder to this). */
const RECORDED_FILE = '/work/cuda-samples/matmul_unroll.cu';
const KERNEL = '_Z12matmul_basicPKfS0_Pfi';

function fn(variant: string): SassFunction {
  const listing = parseNvdisasm(fs.readFileSync(path.join(FIXTURES, `matmul_basic.${variant}.nvdisasm-c-gi.txt`), 'utf8'));
  const f = listing.functions.find(x => x.name === KERNEL);
  assert.ok(f, `${KERNEL} in ${variant}`);
  return f;
}

async function context(factor: string, arch = 'sm_90'): Promise<ListingContext> {
  const a = await analyze(SAMPLE_TEXT, RECORDED_FILE);
  const k = kernel(a, 'matmul_basic');
  return {
    file: RECORDED_FILE,
    kernel: k,
    loop: loopAt(k, 51),
    arch,
    nvcc: '13.0',
    factor,
    demangled: 'matmul_basic(float const*, float const*, float*, int)',
    registers: null,
  };
}

async function listingOf(variant: string, factor: string, arch = 'sm_90'): Promise<SassListingData> {
  return annotateListing(fn(`${variant}.${arch}`), fn(`unroll1.${arch}`), await context(factor, arch));
}

/** FFMA instructions of one rolled iteration (the baseline's hot loop, the loop's own lines). */
async function ffmaPerIteration(arch: string): Promise<number> {
  const c = await context('1', arch);
  const base = fn(`unroll1.${arch}`);
  const exclude = ownLineFilter(c.kernel, c.loop);
  const hot = hottestLoop(base, c.file, c.loop, exclude, WORK_CLASSES);
  assert.ok(hot, 'the rolled build has a machine-code loop');
  return workCounts(base, hot.sassLoop, c.file, c.loop, exclude).get('FFMA.') ?? 0;
}

function ffmaInLoop(l: SassListingData): number {
  return l.lines.filter(x => x.inLoop).reduce((n, x) => n + (x.opcodes.FFMA ?? 0), 0);
}

describe('SASS listing: the runtime-trip matmul loop (golden nvdisasm listings)', () => {
  test('default build on sm_90: a ×16 main loop, a ×8 block that runs once, ×4 and ×1 remainder loops', async () => {
    const l = await listingOf('default', 'default');
    assert.deepEqual(
      l.loops.map(p => [p.name, p.kind, p.unroll, p.role]),
      [
        ['A', 'loop', 16, 'main'],
        ['B', 'once', 8, 'remainder'],
        ['C', 'loop', 4, 'remainder'],
        ['D', 'loop', 1, 'remainder'],
      ],
    );
    // Offsets read off the listing: the ×16 loop is .L_x_43 (0x0240) to its @P1 BRA (0x06c0).
    assert.deepEqual([l.loops[0].startOffset, l.loops[0].endOffset], [0x240, 0x6c0]);
    assert.deepEqual([l.loops[3].startOffset, l.loops[3].endOffset], [0xbb0, 0xc40]);
    for (const p of l.loops) assert.deepEqual(p.sourceLines, [51, 52]);
    assert.equal(l.instructions, 216);
    assert.equal(l.bytes, 216 * 16);
  });

  for (const arch of ['sm_90', 'sm_80']) {
    for (const variant of ['default', 'unroll4', 'unroll8', 'unroll1']) {
      if (arch === 'sm_80' && (variant === 'unroll4' || variant === 'unroll8')) continue;
      test(`${variant} on ${arch}: FFMA of the loop = Σ over its machine-code pieces of unroll × FFMA per iteration`, async () => {
        const l = await listingOf(variant, variant, arch);
        const perIteration = await ffmaPerIteration(arch);
        assert.equal(perIteration, 1, 'one multiply-add per source iteration');
        assert.ok(l.loops.length > 0);
        assert.ok(l.loops.every(p => p.unroll !== null));
        const sum = l.loops.reduce((n, p) => n + p.unroll! * perIteration, 0);
        assert.equal(ffmaInLoop(l), sum);
        if (variant === 'default') assert.equal(sum, 16 + 8 + 4 + 1);
      });
    }
  }

  test('unroll 4 and 8: the main loop has the factor asked for', async () => {
    assert.equal((await listingOf('unroll4', '4')).loops.find(p => p.role === 'main')!.unroll, 4);
    assert.equal((await listingOf('unroll8', '8')).loops.find(p => p.role === 'main')!.unroll, 8);
  });

  test('instructions are grouped by source line, in address order, with opcode counts per group', async () => {
    const l = await listingOf('default', 'default');
    const all = l.lines.flatMap(x => x.instructions);
    assert.equal(all.length, 216);
    assert.deepEqual(
      all.map(i => i.offset),
      all.map((_, k) => k * 16),
    );
    for (const g of l.lines) {
      assert.equal(
        Object.values(g.opcodes).reduce((a, b) => a + b, 0),
        g.instructions.length,
      );
      assert.equal(g.inLoop, g.sourceLine === 51 || g.sourceLine === 52);
    }
    const body = l.lines.filter(g => g.sourceLine === 52);
    assert.equal(
      body.reduce((n, g) => n + (g.opcodes.FFMA ?? 0), 0),
      29,
    );
    assert.equal(all[0].text, 'LDC R1, c[0x0][0x28]');
    assert.ok(all.some(i => i.text === '@P1 BRA `(.L_x_43)'));
  });
});

describe('SASS listing: rendering', () => {
  test('golden text of the default build (regenerate with UPDATE_GOLDEN=1)', async () => {
    const l = await listingOf('default', 'default');
    const r = renderListing(l, { sourceText: SAMPLE_TEXT });
    const golden = path.join(FIXTURES, 'matmul_basic.default.sm_90.listing.txt');
    if (process.env.UPDATE_GOLDEN) fs.writeFileSync(golden, r.text);
    assert.equal(r.text, fs.readFileSync(golden, 'utf8'));
  });

  test('the maps: every instruction line points at its source line; the loop body and machine loops are marked', async () => {
    const l = await listingOf('default', 'default');
    const r = renderListing(l, { sourceText: SAMPLE_TEXT });
    const doc = r.text.split('\n');
    assert.equal(r.sourceLines.length, doc.length - 1);
    const ffma = doc.findIndex(x => x.includes('FFMA R29, R28, R16, R17'));
    assert.equal(r.sourceLines[ffma], 52);
    assert.ok(r.loopBodyLines.includes(ffma));
    const first = doc.findIndex(x => x.includes('/*0000*/'));
    assert.equal(r.sourceLines[first], 43);
    assert.ok(!r.loopBodyLines.includes(first));
    assert.deepEqual(
      r.machineLoops.map(m => m.name),
      ['A', 'B', 'C', 'D'],
    );
    for (const m of r.machineLoops) {
      assert.match(doc[m.firstLine], new RegExp(`^// ┌ ${m.name}: `));
      assert.match(doc[m.lastLine], new RegExp(`^// └ ${m.name}`));
    }
    const a = r.machineLoops[0];
    assert.ok(doc.slice(a.firstLine, a.lastLine + 1).some(x => x.includes('/*0240*/')));
    assert.ok(doc.slice(a.firstLine, a.lastLine + 1).some(x => x.includes('/*06c0*/')));
    // The group header names the line and shows its source text.
    assert.ok(doc.some(x => x.startsWith('// ── matmul_unroll.cu:52  sum += A[row * n + k] * B[k * n + col];')));
  });

  test('stall samples appear beside their instructions, not in the normalised form', async () => {
    const l = await listingOf('default', 'as-written');
    const ins = l.lines.flatMap(x => x.instructions).find(i => i.offset === 0x250)!;
    ins.stall = { samples: 120, share: 0.25, top: [{ reason: 'long_scoreboard', share: 0.75 }] };
    l.stalls = { samples: 480, source: 'the last GPU benchmark (as-written)' };
    const raw = renderListing(l).text;
    assert.match(raw, /\/\*0250\*\/ {2}LDG\.E\.CONSTANT R28, desc\[UR6\]\[R26\.64\] ;\s+\/\/ ⏱ 25\.0% · long_scoreboard 75%/);
    assert.match(raw, /⏱ 480 warp-stall samples from the last GPU benchmark/);
    assert.doesNotMatch(renderListing(l, { normalise: true }).text, /⏱/);
  });
});

/** The same machine code with other register numbers and labels: what a different allocation gives. */
function reallocated(f: SassFunction): SassFunction {
  // A bijection that keeps 64-bit pairs (R2k, R2k+1) together: pairs are rotated by 5.
  const r = (n: number) => (n >= 254 ? n : ((Math.floor(n / 2) + 5) % 127) * 2 + (n % 2));
  const rename = (s: string) =>
    s
      .replace(/\bR(\d+)\b/g, (_, n) => `R${r(Number(n))}`)
      .replace(/\bP([0-6])\b/g, (_, n) => `P${6 - Number(n)}`)
      .replace(/\bUR(\d+)\b/g, (_, n) => `UR${(Number(n) + 10) % 63}`)
      .replace(/\.L_x_(\d+)/g, (_, n) => `.L_x_${Number(n) + 100}`);
  return {
    ...f,
    instructions: f.instructions.map(i => ({
      ...i,
      predicate: i.predicate ? rename(i.predicate) : null,
      operands: rename(i.operands).replace(/\.reuse/g, ''),
    })),
    labels: Object.fromEntries(Object.entries(f.labels ?? {}).map(([k, v]) => [rename(k), v])),
  };
}

describe('SASS listing: normalised for comparing', () => {
  test('two builds that differ only in register allocation compare equal; raw they differ', async () => {
    const c = await context('default');
    const a = annotateListing(fn('default.sm_90'), fn('unroll1.sm_90'), c);
    const b = annotateListing(reallocated(fn('default.sm_90')), fn('unroll1.sm_90'), c);
    assert.notEqual(renderListing(a).text, renderListing(b).text);
    assert.equal(renderListing(a, { normalise: true }).text, renderListing(b, { normalise: true }).text);
  });

  test('real differences survive: unroll 4 and unroll 8 differ, and no address is left', async () => {
    const four = renderListing(await listingOf('unroll4', '4'), { normalise: true }).text;
    const eight = renderListing(await listingOf('unroll8', '8'), { normalise: true }).text;
    assert.notEqual(four, eight);
    assert.doesNotMatch(four, /\/\*[0-9a-f]{4}\*\//);
    assert.doesNotMatch(four, /0x0[0-9a-f]{3}–/);
    assert.match(four, /FFMA r\d+, r\d+, r\d+, r\d+ ;/);
  });

  test('the normaliser renumbers per register file in order of first use and drops reuse flags', () => {
    const n = new Normaliser();
    assert.equal(n.instruction('IMAD.WIDE R26, R0.reuse, 0x4, R26'), 'IMAD.WIDE r0, r1, 0x4, r0');
    assert.equal(n.instruction('@!P1 BRA `(.L_x_44)'), '@!p0 BRA `(.L0)');
    assert.equal(n.instruction('LDG.E.CONSTANT R16, desc[UR6][R12.64+0x4]'), 'LDG.E.CONSTANT r2, desc[ur0][r3.64+0x4]');
    assert.equal(n.instruction('ISETP.NE.AND P0, PT, R4, RZ, PT'), 'ISETP.NE.AND p1, PT, r4, RZ, PT');
    assert.equal(n.instruction('S2R R0, SR_TID.X'), 'S2R r1, SR_TID.X');
  });
});

describe('unroll-lens sass --listing (real nvcc and nvdisasm)', () => {
  const tools = useCudaTools(['nvdisasm']);
  test('--json has the documented shape; the text has the pieces', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const j = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--factor', 'default', '--arch', 'sm_90', '--json']);
    assert.equal(j.code, 0, j.stderr);
    const out = JSON.parse(j.stdout);
    assert.equal(out.kernel, KERNEL);
    assert.equal(out.factor, 'default');
    assert.ok(Array.isArray(out.lines) && out.lines.length > 10);
    for (const line of out.lines) for (const i of line.instructions) assert.deepEqual(Object.keys(i), ['offset', 'opcode', 'text']);
    assert.deepEqual(
      out.loops.map((p: { unroll: number }) => p.unroll),
      [16, 8, 4, 1],
    );
    for (const p of out.loops) for (const k of ['startOffset', 'endOffset', 'sourceLines', 'unroll']) assert.ok(k in p);
    const txt = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--factor', '4', '--arch', 'sm_90', '--normalise']);
    assert.equal(txt.code, 0, txt.stderr);
    assert.match(txt.stdout, /A {2}loop ×4 main/);
    assert.doesNotMatch(txt.stdout, /\/\*[0-9a-f]{4}\*\//);
  });

  test('--stalls: a saved ncu source page of the same code puts samples beside the instructions', async t => {
    if (tools.skip) return t.skip(tools.skip);
    const page = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'sass-stalls', 'matmul_basic.source-sass.csv');
    const r = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--arch', 'sm_90', '--stalls', page]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /⏱ \d[\d,]* warp-stall samples from matmul_basic\.source-sass\.csv/);
    assert.match(r.stdout, /\/\/ ⏱ \d+\.\d% · /);
    const other = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--factor', '4', '--arch', 'sm_90', '--stalls', page]);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stderr, /different machine code/);
    const bad = await runCli(['sass', SAMPLE, '--loop', '51', '--listing', '--stalls', SAMPLE]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--stalls: /);
  });

  test('bad usage: --listing without --loop, --factor without --listing, a bad factor', async () => {
    for (const args of [['--listing'], ['--loop', '51', '--factor', '4'], ['--loop', '51', '--listing', '--factor', 'lots']]) {
      const r = await runCli(['sass', SAMPLE, ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /--listing|--factor/);
    }
  });
});

describe('SASS listing: stall samples of a real GPU run (H100, test/fixtures/gpu/h100/sass-stalls)', () => {
  const GPU = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'sass-stalls');
  const page = path.join(GPU, 'matmul_basic.source-sass.csv');
  async function deviceListing(): Promise<SassListingData> {
    const f = parseNvdisasm(fs.readFileSync(path.join(GPU, 'matmul_basic.cubin.nvdisasm-c-gi.txt'), 'utf8')).functions.find(
      x => x.name === KERNEL,
    )!;
    // The device's cubin names its own temporary folder: group by that file.
    const file = f.instructions.find(i => i.source)!.source!.file;
    const c = await context('as-written');
    return annotateListing(f, fn('unroll1.sm_90'), { ...c, file });
  }

  test('the samples land beside the instructions of the same machine code, and sum to the run total', async () => {
    const stalls = readSassStallsFile(page, KERNEL);
    const l = withStalls(await deviceListing(), stalls, 'matmul_basic.source-sass.csv');
    assert.equal(l.stallsNote, null);
    assert.deepEqual(l.stalls, { samples: stalls.totalSamples, source: 'matmul_basic.source-sass.csv' });
    const all = l.lines.flatMap(x => x.instructions);
    const summed = all.reduce((n, i) => n + (i.stall?.samples ?? 0), 0);
    assert.equal(summed, stalls.totalSamples);
    // The ×16 main loop (0x0240–0x06c0) is where the kernel spends its time.
    const main = l.loops.find(p => p.role === 'main')!;
    const inMain = all
      .filter(i => i.offset >= main.startOffset && i.offset <= main.endOffset)
      .reduce((n, i) => n + (i.stall?.samples ?? 0), 0);
    assert.ok(inMain / stalls.totalSamples > 0.5, `main loop share ${inMain / stalls.totalSamples}`);
    const text = renderListing(l).text;
    const hottest = all.reduce((a, b) => ((b.stall?.samples ?? 0) > (a.stall?.samples ?? 0) ? b : a));
    const line = text.split('\n').find(x => x.includes(`/*${hottest.offset.toString(16).padStart(4, '0')}*/`))!;
    assert.match(line, /\/\/ ⏱ \d+\.\d% · \w+ \d+%/);
  });

  test('another build (unroll 4) gets no samples, and the listing says why', async () => {
    const l = withStalls(await listingOf('unroll4', '4'), readSassStallsFile(page, KERNEL), 'the GPU benchmark');
    assert.equal(l.stalls, null);
    assert.match(l.stallsNote ?? '', /different machine code \(216 vs 88 instructions\)/);
    assert.match(renderListing(l).text, /⏱ stall samples from the GPU benchmark not shown/);
    assert.ok(l.lines.every(x => x.instructions.every(i => !i.stall)));
  });
});

describe('SASS listing: the bench pipeline end to end (H100, test/fixtures/gpu/h100/sass-listing)', () => {
  const E2E = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'sass-listing');

  test("the bench's own per-line stall page attaches to the local nvcc 13 build, and the shares agree with the bench's line table", async () => {
    const stalls = readSassStallsFile(path.join(E2E, 'reports', 'matmul_unroll-source.csv'), KERNEL);
    const l = withStalls(await listingOf('default', 'as-written'), stalls, 'bench');
    assert.equal(l.stallsNote, null);
    const line52 = l.lines.filter(x => x.sourceLine === 52).flatMap(x => x.instructions);
    const share = line52.reduce((n, i) => n + (i.stall?.share ?? 0), 0);
    // bench.txt: "line   52   96.9%  long_scoreboard 69%".
    const bench = fs.readFileSync(path.join(E2E, 'bench.txt'), 'utf8');
    const m = /line\s+52\s+([\d.]+)%/.exec(bench);
    assert.ok(m, 'the bench printed line 52');
    assert.equal((share * 100).toFixed(1), m[1]);
  });

  test('what the device printed: samples beside as-written and default (same code), none for unroll 4', () => {
    const count = (f: string) => (fs.readFileSync(path.join(E2E, f), 'utf8').match(/\/\/ ⏱ \d/g) ?? []).length;
    assert.ok(count('listing.as-written.txt') > 50);
    assert.equal(count('listing.default.txt'), count('listing.as-written.txt'));
    assert.equal(count('listing.4.txt'), 0);
    assert.match(fs.readFileSync(path.join(E2E, 'listing.4.stderr'), 'utf8'), /different machine code \(216 vs 88 instructions\)/);
    const j = JSON.parse(fs.readFileSync(path.join(E2E, 'listing.as-written.json'), 'utf8'));
    assert.deepEqual(
      j.loops.map((p: { unroll: number }) => p.unroll),
      [16, 8, 4, 1],
    );
    assert.ok(j.stalls.samples > 0);
  });
});
