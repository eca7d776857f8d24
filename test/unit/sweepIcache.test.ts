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
