// Issue 22: a measured slowdown is put on the instruction cache only when the hot loop is past
// the cache and no_instruction rises (icache/attribution.ts); otherwise it is shown as what it is.
// Recorded H100 sweeps (test/fixtures/gpu/h100/recommend: the static facts and the GPU run of the
// same points) and the recorded bench of icache_ilp.cu (icache-ilp-bench/bench.json).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { attachIcache } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import { sweepCsv } from '../../src/engine/sweep/export';
import { attributeSlowdown, NO_INSTRUCTION_MIN, NO_INSTRUCTION_RISE, topStall } from '../../src/engine/icache/attribution';
import { icacheShownText, icacheWhy } from '../../src/schema/icacheText';
import { REPO_ROOT } from './helpers';

const H100 = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const read = <T>(...f: string[]): T => JSON.parse(fs.readFileSync(path.join(H100, ...f), 'utf8')) as T;

/** A recorded sweep's static result with the GPU's medians and stall shares of the same points, i-cache entries rebuilt. */
function measured(name: string): SweepResult {
  const r = read<SweepResult>('recommend', `${name}.static.json`);
  const gpu = read<{ variants: { id: string; medianMs: number | null; stallShare: Record<string, number> | null }[] }>(
    'recommend',
    `${name}.json`,
  );
  for (const v of r.variants) {
    const m = gpu.variants.find(x => x.id === v.id)!;
    v.medianMs = m.medianMs;
    v.stallShare = m.stallShare;
    v.icache = undefined;
  }
  attachIcache(r);
  return r;
}

const base = {
  slowdown: 2,
  noInstruction: 0.3,
  referenceNoInstruction: 0.02,
  fits: false,
  bytes: 65536,
  stallShare: { no_instruction: 0.3 },
};

describe('attributeSlowdown: the thresholds', () => {
  test('past the cache with no_instruction up: the i-cache', () => {
    const a = attributeSlowdown(base);
    assert.equal(a.cause, 'icache');
    assert.equal(a.why, 'hot loop past the cache (64 KiB); no_instruction 30 % of stalls (reference 2 %)');
  });
  test('a hot loop that fits is never the i-cache, whatever its stalls', () => {
    const a = attributeSlowdown({ ...base, fits: true, bytes: 912 });
    assert.equal(a.cause, 'other');
    assert.match(a.why, /^slower, not i-cache: hot loop fits \(0\.9 KiB\); top stall no_instruction 30 %$/);
    assert.equal(attributeSlowdown({ ...base, fits: null }).cause, 'other');
  });
  test(`no_instruction under ${NO_INSTRUCTION_MIN * 100} % of stalls, or under ${NO_INSTRUCTION_RISE * 100} points above the reference: not the i-cache`, () => {
    assert.equal(attributeSlowdown({ ...base, noInstruction: 0.099, referenceNoInstruction: 0 }).cause, 'other');
    assert.equal(attributeSlowdown({ ...base, noInstruction: 0.1, referenceNoInstruction: 0 }).cause, 'icache');
    assert.equal(attributeSlowdown({ ...base, noInstruction: 0.34, referenceNoInstruction: 0.3 }).cause, 'other');
    assert.equal(attributeSlowdown({ ...base, noInstruction: 0.36, referenceNoInstruction: 0.3 }).cause, 'icache');
    assert.equal(attributeSlowdown({ ...base, noInstruction: null }).cause, 'other');
  });
  test('not slower: nothing to attribute', () => {
    assert.equal(attributeSlowdown({ ...base, slowdown: 1 }).cause, 'none');
    assert.equal(attributeSlowdown({ ...base, slowdown: 0.8, fits: true }).cause, 'none');
  });
  test('the top stall leaves out "selected" (issuing is no stall)', () => {
    assert.deepEqual(topStall({ selected: 0.6, wait: 0.3, no_instruction: 0.1 }), { reason: 'wait', share: 0.3 });
    assert.equal(topStall(null), null);
  });
});

describe('recorded H100 sweeps: slowdowns that are not the i-cache', () => {
  test('coarsening (potential_pts1): ×4 whose hot loop is 0.9 KiB, stalled on constant-cache misses, is "not i-cache"', () => {
    const r = measured('potential_pts1');
    const v = r.variants.find(x => x.id === '227=4')!;
    const c = v.icache!;
    assert.equal(c.bytes, 912);
    assert.equal(c.fits, true);
    assert.ok(c.measured!.slowdown > 4, JSON.stringify(c.measured));
    assert.equal(c.shown, 'not-icache');
    assert.equal(c.measured!.attribution!.cause, 'other');
    assert.match(c.measured!.attribution!.why, /^slower, not i-cache: hot loop fits \(0\.9 KiB\); top stall imc_miss \d+ %$/);
    // Every slower variant of this kernel fits: none is put on the i-cache.
    assert.ok(r.variants.every(x => x.icache?.measured?.attribution?.cause !== 'icache'));
    // The CLI text, --json and the CSV say the same.
    assert.match(icacheShownText(c), /^\d\.\d\d× not i-cache$/);
    assert.equal(icacheWhy(c), c.measured!.attribution!.why);
    assert.deepEqual(sweepJson(r).variants.find(x => x.id === '227=4')!.icache, c);
    const [header, ...rows] = sweepCsv(r).trim().split('\n');
    const cols = header.split(',');
    const row = rows.find(l => l.startsWith('227=4,'))!;
    assert.ok(row.includes(',not-icache,') && row.includes(',other,'), row);
    assert.ok(cols.includes('icache cause') && cols.includes('icache why'));
  });

  test('matvec-style row sums (library_rowsum, library_matvec): the file as written at 0.2–0.3 KiB, 1.96× and 4.7×, memory-bound', () => {
    for (const [name, min] of [
      ['library_rowsum', 1.9],
      ['library_matvec', 4.5],
    ] as const) {
      const c = measured(name).variants.find(x => x.id === 'as-written')!.icache!;
      assert.ok(c.bytes! <= 300 && c.fits === true, `${name}: ${c.bytes}`);
      assert.ok(c.measured!.slowdown > min, `${name}: ${c.measured!.slowdown}`);
      assert.equal(c.shown, 'not-icache', name);
      assert.match(
        c.measured!.attribution!.why,
        /hot loop fits \(0\.\d KiB\); no_instruction \d %.*top stall long_scoreboard \d+ %$/,
        name,
      );
    }
  });

  test('icache_ilp: the fully unrolled 64 KiB body, 2.7× with no_instruction 58 %, stays the i-cache', () => {
    const r = measured('icache_ilp');
    const c = r.variants.find(x => x.id === '64=full|BODY=1024')!.icache!;
    assert.equal(c.fits, false);
    assert.equal(c.shown, 'measured');
    assert.equal(c.measured!.attribution!.cause, 'icache');
    assert.match(icacheShownText(c), /^2\.\d\d× \(measured\)$/);
    // Every variant put on the i-cache is past the cache and waits on instructions.
    for (const v of r.variants) {
      if (v.icache?.measured?.attribution?.cause !== 'icache') continue;
      assert.equal(v.icache.fits, false, v.id);
      assert.ok(v.icache.measured.noInstruction! >= NO_INSTRUCTION_MIN, v.id);
    }
  });
});

describe('recorded bench of icache_ilp.cu (icache-ilp-bench/bench.json)', () => {
  type Row = {
    label: string;
    stallShare: Record<string, number>;
    icache: { bytes: number; fits: boolean; reference: string; measured: { slowdown: number; noInstruction: number } };
  };
  const rows = read<{ variants: Row[] }>('icache-ilp-bench', 'bench.json').variants;
  const attribute = (label: string) => {
    const v = rows.find(x => x.label === label)!;
    const ref = rows.find(x => x.label === v.icache.reference)!;
    return attributeSlowdown({
      slowdown: v.icache.measured.slowdown,
      noInstruction: v.icache.measured.noInstruction,
      referenceNoInstruction: ref.stallShare.no_instruction,
      fits: v.icache.fits,
      bytes: v.icache.bytes,
      stallShare: v.stallShare,
    });
  };
  test('full: 2.63× ×64, no_instruction 57 %, past the cache: the i-cache', () => {
    const a = attribute('full');
    assert.equal(a.cause, 'icache');
    assert.equal(a.why, 'hot loop past the cache (64 KiB); no_instruction 57 % of stalls (reference 1 %)');
  });
  test('×16: 2.47× but its 2.3 KiB loop fits and no_instruction is 1 %: not the i-cache', () => {
    const a = attribute('16');
    assert.equal(a.cause, 'other');
    assert.match(a.why, /^slower, not i-cache: hot loop fits \(2\.3 KiB\); no_instruction 1 % \(reference 1 %\); top stall \w+ \d+ %$/);
  });
});
