// A loop inlined at two call sites whose line table files most of the second copy under the first
// call site (issue 40, ggml fattn-tile.cuh:609 built for sm_90 with nvcc 13.0: at full unroll the
// bounds-checked tail call's copy, after the main loop, carries the main call's inline chain, and
// the tail call keeps a few instructions). Built from the golden full listing of
// test/fixtures/unroll-shapes/inlined_twice.cu by re-filing its tail copy under line 14, all but
// its first location. Counting only one pass of the main machine loop dropped that copy: loop
// instr went down at full unroll (ggml: 2748 at unroll 1, 2684 at full) while the code grew.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { parseNvdisasm } from '../../src/engine/sass/nvdisasm';
import { measureLoop } from '../../src/engine/variants/measureLoop';
import { analyze, kernel, loopAt, REPO_ROOT } from './helpers';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass', 'copies');
const SOURCE = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'unroll-shapes', 'inlined_twice.cu'), 'utf8');
const RECORDED_FILE = '/work/test/fixtures/unroll-shapes/inlined_twice.cu';
const text = (variant: string) => fs.readFileSync(path.join(FIXTURES, `tile_kernel.${variant}.nvdisasm-c-gi.txt`), 'utf8');

/**
 * The full listing with the tail copy (inlined at line 15) filed under line 14 after its first
 * location: the call-site frame too (the bare `line 15` comment right after), so the chain stays whole.
 */
function refiled(): string {
  let first = true;
  let callSiteNext = false;
  return text('full')
    .split('\n')
    .map(l => {
      if (callSiteNext && /^\s*\/\/## File "[^"]*", line 15$/.test(l)) {
        callSiteNext = false;
        return l.replace(/line 15$/, 'line 14');
      }
      if (!/^\s*\/\/## File .*inlined at "[^"]*", line 15$/.test(l)) return l;
      if (first) {
        first = false;
        return l;
      }
      callSiteNext = true;
      return l.replace(/line 15$/, 'line 14');
    })
    .join('\n');
}

/** Instructions with a frame on the loop's lines (4–8), from the raw text (not the product's parser). */
function loopInstructionsIn(raw: string): number {
  let n = 0;
  let inLoop = false;
  let fresh = true;
  for (const line of raw.split('\n')) {
    const loc = /^\s*\/\/## File "[^"]*", line (\d+)/.exec(line);
    if (loc) {
      if (fresh) inLoop = false;
      if (Number(loc[1]) >= 4 && Number(loc[1]) <= 8) inLoop = true;
      fresh = false;
      continue;
    }
    if (/^\s*\/\*[0-9a-f]{4,}\*\/\s+\S/.test(line)) {
      fresh = true;
      if (inLoop) n++;
    }
  }
  return n;
}

describe('a loop copy the line table files under another call site', () => {
  test('full unroll: the copy after the main machine loop is counted, so loop instr does not go down', async () => {
    const a = await analyze(SOURCE, RECORDED_FILE);
    const k = kernel(a, 'accumulate');
    const loop = loopAt(k, 5);
    const raw = refiled();
    const rolled = parseNvdisasm(text('unroll1'));
    const full = measureLoop(parseNvdisasm(raw), rolled, RECORDED_FILE, k, loop)!;
    const unroll1 = measureLoop(rolled, rolled, RECORDED_FILE, k, loop)!;
    const truth = loopInstructionsIn(raw);
    // as recorded (each copy under its own call site) the two copies hold the same instructions
    assert.equal(truth, loopInstructionsIn(text('full')));
    assert.ok(full.loopInstructions >= truth - 4 && full.loopInstructions <= truth, `${full.loopInstructions} of ${truth}`);
    assert.ok(full.loopInstructions > unroll1.loopInstructions);
    assert.equal(full.fullyUnrolled, true);
  });
});
