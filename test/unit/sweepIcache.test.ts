// A sweep's i-cache entries (issue 13), as a bench's: predicted from each variant's hot code,
// replaced by the measurement once the GPU ran it. The recorded H100 sweep of icache_ilp.cu
// (test/fixtures/gpu/h100/recommend/icache_ilp.json) over its static facts (icache_ilp.static.json).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import type { SweepResult } from '../../src/protocol';
import { attachIcache } from '../../src/engine/sweep/sweep';
import { sweepJson } from '../../src/engine/sweep/json';
import { REPO_ROOT } from './helpers';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'recommend');
const read = <T>(f: string): T => JSON.parse(fs.readFileSync(path.join(REC, f), 'utf8')) as T;

/** The static result with the GPU's medians and stall shares of the same points. */
function measuredSweep(): SweepResult {
  const r = read<SweepResult>('icache_ilp.static.json');
  const gpu = read<{ variants: { id: string; medianMs: number | null; stallShare: Record<string, number> | null }[] }>('icache_ilp.json');
  for (const v of r.variants) {
    const m = gpu.variants.find(x => x.id === v.id)!;
    v.medianMs = m.medianMs;
    v.stallShare = m.stallShare;
    v.icache = undefined;
  }
  return r;
}

describe('sweep i-cache entries', () => {
  test('static: every variant predicted at the warps per SM the launch fixes (4), the full 64 KiB body 1.8× or more', () => {
    const r = read<SweepResult>('icache_ilp.static.json');
    for (const v of r.variants) v.icache = undefined;
    attachIcache(r);
    for (const v of r.variants) {
      assert.equal(v.icache!.shown, 'predicted', v.id);
      assert.equal(v.icache!.warpsPerSm, 4);
      assert.equal(v.icache!.measured, null);
    }
    const full = r.variants.find(v => v.id === '64=full|BODY=1024')!.icache!;
    assert.equal(full.fits, false);
    assert.ok(full.predicted!.low >= 1.5, JSON.stringify(full.predicted));
  });

  test('measured: median ÷ the largest fitting variant measured (full · BODY=256), inside the predicted range', () => {
    const r = measuredSweep();
    attachIcache(r);
    const byId = (id: string) => r.variants.find(v => v.id === id)!;
    const full = byId('64=full|BODY=1024').icache!;
    assert.equal(full.shown, 'measured');
    assert.equal(full.reference, 'full · BODY=256');
    const expected = byId('64=full|BODY=1024').medianMs! / byId('64=full|BODY=256').medianMs!;
    assert.ok(Math.abs(full.measured!.slowdown - expected) < 1e-3);
    assert.ok(full.measured!.noInstruction! > 0.5, 'no_instruction over half the stalls');
    assert.ok(full.measured!.slowdown >= full.predicted!.low && full.measured!.slowdown <= full.predicted!.high, JSON.stringify(full));
    // The CLI's --json carries the same entry.
    const json = sweepJson(r);
    assert.deepEqual(json.variants.find(v => v.id === '64=full|BODY=1024')!.icache, full);
  });

  test('results without hot-code facts (saved before the model) get no entries', () => {
    const r = measuredSweep();
    for (const v of r.variants) v.hotCode = undefined;
    attachIcache(r);
    assert.ok(r.variants.every(v => v.icache === undefined));
  });
});

describe('recorded on the H100 by the final CLI (icache-ilp-bench/: bench and sweep --json of icache_ilp.cu)', () => {
  const DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100', 'icache-ilp-bench');
  type Entry = {
    shown: string;
    reference: string | null;
    predicted: { low: number; high: number } | null;
    measured: { slowdown: number; noInstruction: number | null } | null;
    warpsPerSm: number | null;
    warpsSource?: string | null;
  };
  const json = (f: string) =>
    JSON.parse(fs.readFileSync(path.join(DIR, f), 'utf8')) as { variants: { label?: string; id?: string; icache?: Entry }[] };

  test('bench: the fully unrolled 64 KiB loop measured 2.63× ×64 at 4 warps/SM (ncu), inside its predicted range, no_instruction over half', () => {
    const rows = json('bench.json').variants;
    const full = rows.find(v => v.label === 'full')!.icache!;
    assert.equal(full.shown, 'measured');
    assert.equal(full.reference, '64');
    assert.equal(full.warpsPerSm, 4);
    assert.equal(full.warpsSource, 'achieved');
    assert.ok(full.measured!.slowdown >= full.predicted!.low && full.measured!.slowdown <= full.predicted!.high, JSON.stringify(full));
    assert.ok(full.measured!.noInstruction! > 0.5);
    // ×16 is slower too, but not for the instruction cache: its step constants are computed at run
    // time; its no_instruction share says so, and the model predicted no i-cache penalty.
    const x16 = rows.find(v => v.label === '16')!.icache!;
    assert.ok(x16.measured!.slowdown > 2 && x16.measured!.noInstruction! < 0.02 && x16.predicted!.high < 1.2);
    const text = fs.readFileSync(path.join(DIR, 'bench.txt'), 'utf8');
    assert.match(text, /^full\s+64 KiB\s+2\.63× \(measured\)\s+\d\.\d\d–\d\.\d\d×\s+4 \(ncu\)\s+57\.4%$/m);
  });

  test('sweep: every variant measured, against the largest fitting one (full · BODY=256)', () => {
    const rows = json('sweep.json').variants;
    assert.ok(rows.every(v => v.icache?.shown === 'measured' && v.icache.reference === 'full · BODY=256'));
    const big = rows.find(v => v.id === '64=full|BODY=1024')!.icache!;
    assert.ok(big.measured!.slowdown >= big.predicted!.low && big.measured!.slowdown <= big.predicted!.high, JSON.stringify(big));
  });
});
