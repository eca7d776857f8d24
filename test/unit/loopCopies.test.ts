// A loop whose code appears twice in its kernel (issue 40, ggml fattn-tile.cuh:609's shape): a
// device function's loop inlined in the main loop and again in a bounds-checked tail call. On
// golden nvdisasm listings of test/fixtures/unroll-shapes/inlined_twice.cu
// (test/fixtures/sass/copies/regenerate.sh). Every copy is counted and named by its call site;
// the second copy's machine loop is no "remainder loop". The truth per copy is read from the
// listing's line table by a regex of this test, not by the product's parser.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import { measureLoop } from '../../src/engine/variants/measureLoop';
import { explainVariants } from '../../src/engine/variants/variantNotes';
import type { LoopVariant } from '../../src/engine/variants/reports';
import { analyze, kernel, loopAt, REPO_ROOT } from './helpers';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass', 'copies');
const SOURCE = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'unroll-shapes', 'inlined_twice.cu'), 'utf8');
const RECORDED_FILE = '/work/test/fixtures/unroll-shapes/inlined_twice.cu';

const text = (variant: string) => fs.readFileSync(path.join(FIXTURES, `tile_kernel.${variant}.nvdisasm-c-gi.txt`), 'utf8');
const listing = (variant: string) => parseNvdisasm(text(variant));

/** Instructions whose line (lines 4–8: the pragma and the loop) is inlined at each call-site line, from the raw text. */
function truthByCallSite(raw: string): Map<number, number> {
  const counts = new Map<number, number>();
  let at: number | null = null;
  let fresh = true;
  for (const line of raw.split('\n')) {
    const loc = /^\s*\/\/## File "[^"]*", line (\d+)(?: inlined at "[^"]*", line (\d+))?/.exec(line);
    if (loc) {
      // nvdisasm prints the location, then its call sites' own lines: the first line names the instruction's
      if (fresh) at = Number(loc[1]) >= 4 && Number(loc[1]) <= 8 && loc[2] ? Number(loc[2]) : null;
      fresh = false;
      continue;
    }
    if (/^\s*\/\*[0-9a-f]{4,}\*\/\s+\S/.test(line)) {
      fresh = true;
      if (at !== null) counts.set(at, (counts.get(at) ?? 0) + 1);
    }
  }
  return counts;
}

async function kLoop() {
  const a = await analyze(SOURCE, RECORDED_FILE);
  const k = kernel(a, 'accumulate');
  return { k, loop: loopAt(k, 5) };
}

describe('a loop inlined at two call sites', () => {
  test('fully unrolled: both copies are counted, each named by its call site (the old count held one)', async () => {
    const { k, loop } = await kLoop();
    const m = measureLoop(listing('full'), listing('unroll1'), RECORDED_FILE, k, loop)!;
    const truth = truthByCallSite(text('full'));
    assert.deepEqual([...truth.keys()].sort(), [14, 15]);
    assert.deepEqual(
      m.copies!.map(c => [c.place, c.instructions, c.effectiveUnroll, c.fullyUnrolled]),
      [
        ['inlined at line 14', truth.get(14), 64, true],
        ['inlined at line 15', truth.get(15), 64, true],
      ],
    );
    assert.equal(m.loopInstructions, truth.get(14)! + truth.get(15)!);
    assert.equal(m.effectiveUnroll, 64);
    assert.equal(m.fullyUnrolled, true);
  });

  test('rolled: each copy is its own machine loop ×1, and the second is no remainder loop', async () => {
    const { k, loop } = await kLoop();
    const m = measureLoop(listing('unroll1'), listing('unroll1'), RECORDED_FILE, k, loop)!;
    assert.deepEqual(
      m.copies!.map(c => [c.place, c.effectiveUnroll, c.fullyUnrolled]),
      [
        ['inlined at line 14', 1, false],
        ['inlined at line 15', 1, false],
      ],
    );
    assert.equal(m.effectiveUnroll, 1);
    assert.deepEqual(m.remainder, { loops: [], straight: 0 });
    // the machine loops' code, without the copies' setup outside them: at most what the line table gives the loop
    const truth = truthByCallSite(text('unroll1'));
    m.copies!.forEach((c, i) => assert.ok(c.instructions > 0 && c.instructions <= truth.get([14, 15][i])!));
  });

  test('unroll 4: both copies ×4; the note says the count adds the copies, with each one', async () => {
    const { k, loop } = await kLoop();
    const rolled = listing('unroll1');
    const measured = ['unroll1', 'unroll4', 'full'].map(v => measureLoop(listing(v), rolled, RECORDED_FILE, k, loop)!);
    assert.deepEqual(
      measured[1].copies!.map(c => c.effectiveUnroll),
      [4, 4],
    );
    const variants = measured.map(
      (m, i) =>
        ({
          factor: [1, 4, 'full'][i],
          status: 'ok',
          identicalTo: null,
          loopInstructions: m.loopInstructions,
          effectiveUnroll: m.effectiveUnroll,
          fullyUnrolled: m.fullyUnrolled,
          loopCopies: m.copies,
        }) as unknown as LoopVariant,
    );
    const note = explainVariants(variants, loop).find(n => n.includes('appears'));
    assert.match(
      note ?? '',
      /^the loop's code appears 2 times in the kernel \(inlined at line 14; inlined at line 15\): loop instr counts every copy/,
    );
    assert.match(note!, /full unroll: 192 \(×64\) \+ 320 \(×64\)/);
  });
});
