// Issue 13, the user-visible side of the instruction-cache model: the icache-budget diagnostic,
// the loop hover and `sass --loop --json`'s icache objects. The model's numbers may be refitted,
// so these tests check structure, relations and the shape of the text, not the ranges.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { Connection } from 'vscode-languageserver/node';
import { gridShapes, readGridSass } from '../../src/engine/icache/fit';
import { IcacheContext, loopIcache, loopIcacheMarkdown, writtenLoopIcache } from '../../src/engine/icache/report';
import type { IcacheLoopFacts } from '../../src/engine/sass/issueRate';
import type { FileSassReport, LoopReport, LoopVariant } from '../../src/engine/variants/reports';
import type { FileAnalysis } from '../../src/engine/parse/model';
import { DocumentFactsStore } from '../../src/server/facts';
import { VariantService, icacheWarning } from '../../src/server/variants';
import type { ServerToolchain } from '../../src/server/toolchain';
import { hover } from '../../src/server/features';
import { DEFAULT_SETTINGS, Settings } from '../../src/settings';
import { main } from '../../src/cli/main';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { analyze, lineOf, REPO_ROOT } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'cuda', 'launch_config.cu');
const text = fs.readFileSync(FIXTURE, 'utf8');
const LOOP = lineOf(text, 'for (int r = 0;');
const LAUNCH = lineOf(text, 'scale<<<');
const shapes = gridShapes(readGridSass(path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'icache-grid', 'sass-4k.txt.gz')));
const FFMA4 = shapes.get('fp32/4')!;
const H100 = 'NVIDIA H100 80GB HBM3';

/** The file as written, as the background build would record it, with the loop's hot code of `bytes`. */
function report(bytes: number): FileSassReport {
  return {
    arch: 'sm_90',
    nvcc: '13.0',
    status: 'ok',
    kernels: [
      {
        name: '_Z5scalePfi',
        demangled: 'scale(float*, int)',
        instructions: bytes / 16 + 16,
        bytes: bytes + 256,
        registers: 16,
        spillStores: 0,
        spillLoads: 0,
        sharedBytes: 0,
        stackBytes: 0,
        classes: {},
        occupancy: null,
      },
    ],
    failure: null,
    loops: [
      {
        line: LOOP,
        kernel: '_Z5scalePfi',
        loopInstructions: bytes / 16,
        effectiveUnroll: 1,
        fullyUnrolled: false,
        icache: { bytes, issue: FFMA4 },
      },
    ],
    cached: false,
    disassembler: 'nvdisasm',
  };
}

let analysis: FileAnalysis;
before(async () => {
  analysis = await analyze(text, FIXTURE);
});

const ctx = (o: Partial<IcacheContext> = {}): IcacheContext => ({
  text,
  analysis,
  warpsPerSm: 0,
  warpsOrigin: 'unrollLens.warpsPerSm',
  gpuName: H100,
  ...o,
});

describe('i-cache diagnostic (icache-budget)', () => {
  test('a 66 KiB loop launched 1 block of 4 warps per SM: the prediction and where the warps come from', () => {
    const message = icacheWarning(report(66 * 1024), LOOP, ctx());
    assert.ok(message);
    assert.match(
      message,
      new RegExp(
        `^Instruction cache: loop body 66 KiB: predicted \\d+\\.\\d+–\\d+\\.\\d+× slower than a version that fits \\(≤ 17 KiB\\) ` +
          `at 4 warps/SM \\(FFMA, 4 chains; measured on sm_90\\); warps/SM from the launch at line ${LAUNCH} \\(set unrollLens\\.warpsPerSm to override\\)\\.$`,
      ),
    );
  });

  test('no warning when the hot code fits or no facts exist', () => {
    assert.equal(icacheWarning(report(16 * 1024), LOOP, ctx()), null);
    const none = report(66 * 1024);
    none.loops[0].icache = null;
    assert.equal(icacheWarning(none, LOOP, ctx()), null);
  });

  test('more warps per SM predict less slowdown', () => {
    const at4 = writtenLoopIcache(report(66 * 1024), LOOP, ctx({ warpsPerSm: 4 }))!;
    const at32 = writtenLoopIcache(report(66 * 1024), LOOP, ctx({ warpsPerSm: 32 }))!;
    assert.equal(at4.warpsSource, 'set by unrollLens.warpsPerSm');
    assert.ok(at32.predictedSlowdown.high < at4.predictedSlowdown.high, `${JSON.stringify(at32)} vs ${JSON.stringify(at4)}`);
  });

  function service(settings: Settings, bytes: number) {
    const facts = new DocumentFactsStore(() => undefined);
    const s = new VariantService(
      {} as Connection,
      {} as ServerToolchain,
      facts,
      () => settings,
      () => '/tmp',
    );
    const uri = pathToFileURL(FIXTURE).toString();
    facts.record(uri, text, f => {
      f.file = report(bytes);
    });
    return s.diagnostics(uri, text, analysis).filter(d => d.code === 'icache-budget');
  }

  test('the server: one warning on the outermost loop, from the model at unrollLens.warpsPerSm', () => {
    const d = service({ ...DEFAULT_SETTINGS, warpsPerSm: 4 }, 66 * 1024);
    assert.equal(d.length, 1);
    assert.equal(d[0].range.start.line, LOOP - 1);
    assert.match(
      d[0].message,
      /^Instruction cache: loop body 66 KiB: predicted .* at 4 warps\/SM .*; warps\/SM set by unrollLens\.warpsPerSm\.$/,
    );
    assert.deepEqual(service({ ...DEFAULT_SETTINGS, warpsPerSm: 4 }, 16 * 1024), []);
  });

  test('unrollLens.icacheBudgetBytes set: the fixed budget, saying so', () => {
    const d = service({ ...DEFAULT_SETTINGS, icacheBudgetBytes: 32 * 1024 }, 40 * 1024);
    assert.equal(d.length, 1);
    assert.match(
      d[0].message,
      /^Loop body 40 KiB of SASS \(2560 instructions\) > 32 KiB instruction-cache budget \(unrollLens\.icacheBudgetBytes, a fixed budget instead of the model\)/,
    );
  });
});

describe('i-cache hover', () => {
  const at = { line: LOOP - 1, character: 6 };
  const markdown = (bytes: number, c: IcacheContext | null) => {
    const h = hover(analysis, at, { file: report(bytes), loops: new Map() }, null, pathToFileURL(FIXTURE).toString(), c);
    return (h!.contents as { value: string }).value;
  };

  test('a loop that does not fit: the prediction, then where its warps per SM come from', () => {
    const md = markdown(66 * 1024, ctx());
    assert.match(
      md,
      /\*\*i-cache\*\*: loop body 66 KiB: predicted \d+\.\d+–\d+\.\d+× slower than a version that fits \(≤ 17 KiB\) at 4 warps\/SM \(FFMA, 4 chains; measured on sm_90\)/,
    );
    assert.ok(
      md.includes(
        `_4 warps/SM: from the launch \`<<<GRID, BLOCK>>>\` at line ${LAUNCH}: 1 block of 4 warps per SM (grid 132 blocks on 132 SMs of the ${H100}; 16 would fit)` +
          ` — \`GRID\` = 132 (line ${lineOf(text, 'constexpr int GRID')}); \`BLOCK\` = 128 (#define, line ${lineOf(text, '#define BLOCK')}); 16 registers/thread, 0 B static shared memory._`,
      ),
      md,
    );
  });

  test('a loop that fits says so; no build, no line', () => {
    const md = markdown(8 * 1024, ctx({ gpuName: null }));
    assert.match(md, /\*\*i-cache\*\*: loop body 8\.0 KiB: fits the instruction cache \(no penalty measured up to 17 KiB on sm_90\)/);
    // Without the GPU's name (issue 22): 132 blocks on an sm_90 part of 114 or 132 SMs, a range, not every SM full.
    assert.match(
      md,
      /_4–8 warps\/SM: from the launch .*1–2 blocks of 4 warps per SM \(grid 132 blocks on 114 or 132 SMs \(sm_90 GPUs; the GPU is not named\).*the prediction covers 4–8 warps\/SM\._/,
    );
    assert.equal(loopIcacheMarkdown(null, LOOP, ctx()), '');
    assert.ok(!markdown(8 * 1024, null).includes('i-cache'));
  });
});

describe('loop variants: the reference is the most unrolled variant that fits', () => {
  const variant = (factor: number | 'full', unroll: number, bytes: number | null): LoopVariant =>
    ({
      factor,
      effectiveUnroll: unroll,
      fullyUnrolled: factor === 'full',
      registers: 16,
      icache: bytes === null ? null : ({ bytes, issue: FFMA4 } satisfies IcacheLoopFacts),
    }) as LoopVariant;
  const loop = (variants: LoopVariant[]): LoopReport => ({
    line: LOOP,
    kernel: 'scale',
    written: 'default',
    arch: 'sm_90',
    variants,
    notes: [],
    limitation: null,
  });
  const warps = () => ({ warpsPerSm: 4, source: 'set by test', short: 'set by test', kind: 'override' as const });

  test('×16 fits, ×64 does not: ×64 against ×16; a variant without facts has none', () => {
    const p = loopIcache(
      loop([variant(4, 4, 4096), variant(16, 16, 12 * 1024), variant(64, 64, 66 * 1024), variant('full', 64, null)]),
      warps,
    );
    assert.deepEqual(
      p.map(x => x?.reference ?? null),
      ['×16', '×16', '×16', null],
    );
    assert.deepEqual(
      p.map(x => x?.fits ?? null),
      [true, true, false, null],
    );
    assert.ok(p[2]!.predictedSlowdown.high > p[1]!.predictedSlowdown.high);
  });

  test('nothing fits: a size that fits', () => {
    const p = loopIcache(loop([variant(64, 64, 66 * 1024)]), warps);
    assert.equal(p[0]!.reference, 'a version that fits (≤ 17 KiB)');
  });
});

describe('sass --loop --json: icache per variant (nvcc)', () => {
  let skip: string | false = false;
  before(async () => {
    try {
      const t = await detectToolchain({ probeGpu: false });
      if (!t.nvdisasm) skip = 'no nvdisasm (run npm run setup:cuda-tools)';
    } catch (e) {
      if (process.env.CI) throw e;
      skip = `no nvcc: ${(e as Error).message}`;
    }
  });

  async function run(args: string[]) {
    let out = '';
    let err = '';
    const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
    return { code, out, err };
  }

  test('the documented fields, the launch as the warps source, --warps-per-sm overriding it', async t => {
    if (skip) return t.skip(skip);
    const base = ['sass', FIXTURE, '--loop', String(LOOP), '--factors', '1,4', '--arch', 'sm_90'];
    const r = await run([...base, '--json']);
    assert.equal(r.code, 0, r.err);
    const variants = JSON.parse(r.out).loop.variants as { icache: Record<string, unknown> | null }[];
    assert.equal(variants.length, 2);
    for (const v of variants) {
      assert.ok(v.icache);
      assert.deepEqual(
        Object.keys(v.icache).sort(),
        ['basis', 'bytes', 'demand', 'fits', 'predictedSlowdown', 'reference', 'shape', 'warpsPerSm', 'warpsRange', 'warpsSource'].sort(),
      );
      assert.equal(typeof v.icache.bytes, 'number');
      const s = v.icache.predictedSlowdown as { low: number; high: number };
      assert.ok(s.low <= s.high);
      // No GPU named here: 132 blocks on 114 or 132 SMs is a range, and the JSON says so.
      assert.deepEqual(v.icache.warpsRange, { low: 4, high: 8 });
      assert.match(
        String(v.icache.warpsSource),
        new RegExp(`^from the launch \`<<<GRID, BLOCK>>>\` at line ${LAUNCH}: \\d+(–\\d+)? blocks? of 4 warps per SM`),
      );
    }
    const o = await run([...base, '--json', '--warps-per-sm', '8']);
    const ov = JSON.parse(o.out).loop.variants as { icache: { warpsPerSm: number; warpsSource: string } }[];
    assert.deepEqual(
      ov.map(v => [v.icache.warpsPerSm, v.icache.warpsSource]),
      [
        [8, 'set by --warps-per-sm'],
        [8, 'set by --warps-per-sm'],
      ],
    );
    const table = await run([...base, '--warps-per-sm', '8']);
    assert.match(table.out, /^instruction cache: predicted slowdown at 8 warps\/SM, set by --warps-per-sm$/m);
    assert.match(table.out, /^1 +i-cache \d+(\.\d)? KiB: (fits|\d\.\d–\d\.\d× vs \S+)$/m);
  });
});
