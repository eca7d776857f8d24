// A device function's loop inlined at one call site inside a loop of its kernel that nvcc unrolls
// (ggml's vec_dot_fattn_vec_KQ_f16 in flash_attn_ext_vec: 32 copies): unrolled completely, the
// code holds every copy's iterations. The trip count is one copy's share (the rolled build has a
// machine loop per copy), not their sum: ×4, not ×32 (issue 39, part 3 takes trip counts from it).
// Rolled, its eight machine loops are eight copies, not a main loop and seven remainder loops.
// Real nvcc and nvdisasm on a minimal repro in ggml's style (test/fixtures/inlined-copies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { REPO_ROOT, useCudaTools } from './helpers';

const cuda = useCudaTools(['nvdisasm']);

test('unrolled completely, a loop inlined 8 times runs 4 times, as its template argument says', async t => {
  if (cuda.skip) return t.skip(cuda.skip);
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-copies-'));
  const saved = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = cache;
  try {
    let out = '';
    let err = '';
    const file = path.join(REPO_ROOT, 'test', 'fixtures', 'inlined-copies', 'copies.cu');
    const code = await main(['sass', file, '--loop', '6', '--factors', '1,full', '--json'], {
      out: s => (out += s),
      err: s => (err += s),
      isTTY: false,
    });
    assert.equal(code, 0, err);
    const j = JSON.parse(out) as {
      loop: {
        variants: {
          effectiveUnroll: number | null;
          fullyUnrolled: boolean;
          remainder: { loops: number[] } | null;
        }[];
        notes: string[];
      };
    };
    const v = j.loop.variants;
    // rolled: one machine loop per inlined copy (the kernel's j loop is unrolled ×8): eight copies, no remainder
    assert.equal(v[0].effectiveUnroll, 1);
    assert.deepEqual(v[0].remainder?.loops, []);
    assert.ok(
      j.loop.notes.some(n => /appears 8 times at one call site/.test(n)),
      j.loop.notes.join('\n'),
    );
    // unrolled: 32 iterations' work in the code, 4 per copy
    assert.equal(v[1].fullyUnrolled, true);
    assert.equal(v[1].effectiveUnroll, 4);
  } finally {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    fs.rmSync(cache, { recursive: true, force: true });
  }
});
