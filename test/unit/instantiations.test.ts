// Issue 22: every row names its instantiation. A template kernel launched as chain<2> and
// chain<64> (test/fixtures/instantiations/two_trips.cu) holds the same source loop in two
// functions whose code differs; the sweep must measure one of them for every row and name it,
// and the hover must name the one its table measured and list both. Names are checked against
// literal strings and, where c++filt exists, against c++filt run directly on the mangled name.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, REPO_ROOT } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { runSweep } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import { sweepCsv } from '../../src/engine/sweep/export';
import { sweepText } from '../../src/engine/report/sweepText';
import { VariantBuilder } from '../../src/engine/variants/build';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { instantiationLabel } from '../../src/schema/kernelNames';
import { hover } from '../../src/server/features';
import type { SweepResult } from '../../src/protocol';
import { UnrollFactors } from '../../src/engine/variants/factors';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'instantiations', 'two_trips.cu');
const TEXT = fs.readFileSync(FIXTURE, 'utf8');
const LOOP = lineOf(TEXT, 'for (int i = 0; i < N; ++i)');
const CHAIN64 = '_Z5chainILi64EEvPKfPf';
const CHAIN2 = '_Z5chainILi2EEvPKfPf';

/** c++filt run directly (not through the product's demangle), or null where it is missing. */
function cxxfilt(mangled: string): string | null {
  for (const tool of ['cu++filt', 'c++filt']) {
    try {
      return execFileSync(tool, [mangled], { encoding: 'utf8' }).trim();
    } catch {
      // next
    }
  }
  return null;
}

describe('instantiationLabel: the demangled name as the source writes the instantiation', () => {
  test('return type and parameter list dropped, template arguments kept', () => {
    assert.equal(instantiationLabel('void chain<64>(float const*, float*)'), 'chain<64>');
    assert.equal(instantiationLabel('void gemm<float, 128>(float const*, float const*, float*, int)'), 'gemm<float, 128>');
    assert.equal(instantiationLabel('void ilp_chains<256>(float*)'), 'ilp_chains<256>');
    assert.equal(instantiationLabel('matvec(float const*, float*, int)'), 'matvec');
    assert.equal(instantiationLabel('void (anonymous namespace)::k<4>(float*)'), '(anonymous namespace)::k<4>');
    assert.equal(instantiationLabel('void ns::k<int (*)(float), 3>(int)'), 'ns::k<int (*)(float), 3>');
    assert.equal(instantiationLabel(CHAIN64), CHAIN64, 'a name c++filt did not demangle is kept whole');
  });

  test('c++filt, run directly, agrees with the literal names used below', t => {
    const d = cxxfilt(CHAIN64);
    if (d === null) return t.skip('no c++filt');
    assert.equal(d, 'void chain<64>(float const*, float*)');
    assert.equal(instantiationLabel(d), 'chain<64>');
    assert.equal(cxxfilt(CHAIN2), 'void chain<2>(float const*, float*)');
  });
});

let toolchain: Toolchain | null = null;
let skip: string | false = false;
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-inst-'));

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
  if (toolchain && !toolchain.nvdisasm) {
    if (process.env.CI) throw new Error('nvdisasm missing: scripts/setup-cuda-tools.sh should have installed it');
    skip = 'no nvdisasm (run npm run setup:cuda-tools)';
  }
});

describe('a loop in two instantiations (chain<2>, chain<64>), built with nvcc', () => {
  let sweep: SweepResult | null = null;

  test('the sweep measures one instantiation for every row, and names it', async t => {
    if (skip) return t.skip(skip);
    const analysis = await analyze(TEXT, FIXTURE);
    sweep = await runSweep({
      file: FIXTURE,
      text: TEXT,
      analysis,
      toolchain: toolchain!,
      arch: 'sm_90',
      flags: flagsFromSettings({}, path.dirname(FIXTURE)),
      cacheDir: CACHE,
      loops: [LOOP],
      factors: UnrollFactors.parse('1,2,8,full'),
    });
    assert.equal(sweep.variants.length, 5);
    for (const v of sweep.variants) {
      assert.equal(v.status, 'ok', v.id);
      // Before issue 22 the ×1 row measured chain<2> (its rolled loop ties chain<64>'s and sorts first).
      assert.equal(v.kernel, CHAIN64, `${v.id} measured ${v.kernel}`);
      assert.equal(v.instantiation, 'void chain<64>(float const*, float*)', v.id);
    }
    const direct = cxxfilt(CHAIN64);
    if (direct) for (const v of sweep.variants) assert.equal(v.instantiation, direct);
    // The rows really measured chain<64>: its ×1, ×8 and full loops, not chain<2>'s (trip 2 caps any unroll at ×2).
    const unroll = (id: string) => sweep!.variants.find(v => v.id === id)!.effectiveUnroll[String(LOOP)];
    assert.equal(unroll(`${LOOP}=8`), 8);
    assert.equal(unroll(`${LOOP}=full`), 64);
    assert.ok(
      sweep.notes.some(n => /^2 instantiations hold the swept loops' code: every row measures chain<64>, the one with most of it/.test(n)),
      sweep.notes.join('\n'),
    );
  });

  test('the table, --json and --csv name the instantiation of every row', t => {
    if (!sweep) return t.skip(skip || 'needs the sweep above');
    const text = sweepText(sweep).split('\n');
    const header = text[1];
    assert.match(header, /variant\s+instantiation\s+status/);
    const rows = text.slice(2, 2 + sweep.variants.length);
    for (const row of rows) assert.match(row, /\schain<64>\s+ok\s/, row);
    const j = sweepJson(sweep);
    assert.deepEqual(
      j.variants.map(v => v.instantiation),
      sweep.variants.map(() => 'void chain<64>(float const*, float*)'),
    );
    const csv = sweepCsv(sweep).trimEnd().split('\r\n');
    const col = csv[0].split(',').indexOf('instantiation');
    // after every column that was there before it (message), so spreadsheets reading those by position keep working
    assert.equal(col, csv[0].split(',').indexOf('message') + 1, 'the instantiation column follows message');
    for (const row of csv.slice(1)) assert.ok(row.includes(',"void chain<64>(float const*, float*)",'), row);
  });

  test('the hover names the instantiation its numbers come from and lists both', async t => {
    if (skip) return t.skip(skip);
    const analysis = await analyze(TEXT, FIXTURE);
    const builder = new VariantBuilder({
      nvcc: toolchain!.nvcc,
      arch: 'sm_90',
      flags: flagsFromSettings({}, path.dirname(FIXTURE)),
      cacheDir: CACHE,
      runner: toolchain!.runner,
    });
    const inspector = new VariantInspector({ toolchain: toolchain!, builder, arch: 'sm_90' });
    const file = await inspector.inspectFile(FIXTURE, TEXT, analysis);
    const loop = await inspector.inspectLoop(FIXTURE, TEXT, analysis, LOOP, UnrollFactors.of([1, 2, 8, 'full']));
    assert.deepEqual(loop.instantiation, { name: CHAIN64, demangled: 'void chain<64>(float const*, float*)', of: 2, trips: 64 });
    const m = file.loops.find(l => l.line === LOOP)!;
    assert.deepEqual(
      m.instantiations?.map(x => [x.name, x.demangled]),
      [
        [CHAIN64, 'void chain<64>(float const*, float*)'],
        [CHAIN2, 'void chain<2>(float const*, float*)'],
      ],
    );
    const facts = { file, loops: new Map([[LOOP, loop]]) };
    const h = hover(analysis, { line: LOOP - 1, character: 5 }, facts);
    const md = (h?.contents as { value: string }).value;
    assert.match(md, /This loop lives in 2 instantiations/);
    const chain64 = md.split('\n').find(l => l.startsWith('- `chain<64>`:'));
    const chain2 = md.split('\n').find(l => l.startsWith('- `chain<2>`:'));
    assert.ok(chain64 && chain2, md);
    assert.match(chain64, /unrolled completely \(×64\) ← above$/);
    assert.match(chain2, /unrolled completely \(×2\)$/);
    assert.match(
      md,
      /\*\*Unroll variants\*\* of this loop \(every row in `chain<64>`: of the 2 functions holding this loop, the one with most of its code over the variants/,
    );
    assert.doesNotMatch(md, /_Z5chain/, 'no mangled name in the hover');
  });
});
