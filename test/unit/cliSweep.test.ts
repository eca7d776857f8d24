// `unroll-lens sweep` end to end with real nvcc (a small file, --static): output, files, exit
// codes; and the usage errors, the shell-injection guard on --param included.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { listResults } from '../../src/engine/sweep/store';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

const SRC = `__global__ void two(float* a, int n) {
  for (int i = threadIdx.x; i < n; i += 32) a[i] *= 2.0f;
  float s = 0.0f;
  #pragma unroll
  for (int k = 0; k < 8; ++k) s += a[k];
  a[0] = s;
}
__global__ void other(float* a) { for (int j = 0; j < 4; ++j) a[j] = 0; }
`;

let skip: string | false = false;
let dir = '';
let file = '';
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cli-sweep-'));
  file = path.join(dir, 'two.cu');
  fs.writeFileSync(file, SRC);
  // Builds go to a cache of this test's own (defaultCacheDir reads XDG_CACHE_HOME).
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
  try {
    await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

describe('unroll-lens sweep', () => {
  test('usage errors exit 2 before anything runs: --param values that a shell would run, repeats, strategy, lines', async () => {
    const marker = path.join(dir, 'pwned');
    const bad = await run(['sweep', file, '--static', '--param', `BLOCK=$(touch ${marker})`]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--param: bad value '\$\(touch .*pwned\)' for BLOCK/);
    assert.ok(!fs.existsSync(marker));
    for (const [args, message] of [
      [['--param', 'BLOCK=8', '--param', 'BLOCK=16'], /--param BLOCK is given twice/],
      [['--param', '2X=1'], /bad parameter name '2X'/],
      [['--strategy', 'random'], /--strategy takes exhaustive or coordinate, not 'random'/],
      [['--loops', '0'], /--loops takes 1-based line numbers/],
      [['--factors', '0'], /--factors: bad unroll factor '0'/],
    ] as [string[], RegExp][]) {
      const r = await run(['sweep', file, '--static', ...args]);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.err, message);
      assert.match(r.err, /Run 'unroll-lens sweep --help'/);
    }
    assert.equal((await run(['sweep'])).code, 2);
    assert.equal((await run(['sweep', file, file])).code, 2);
  });

  test('a loop of another kernel, an unknown kernel: exit 2 naming them', async t => {
    if (skip) return t.skip(skip);
    const r = await run(['sweep', file, '--static', '--kernel', 'two', '--loops', '8']);
    assert.equal(r.code, 2);
    assert.match(r.err, /the loop at line 8 belongs to other \(line 8\), not to two \(line 1\)/);
    const k = await run(['sweep', file, '--static', '--kernel', 'three']);
    assert.equal(k.code, 2);
    assert.match(k.err, /no kernel or device function named three .*have two, other/);
    assert.match((await run(['sweep', file, '--static'])).err, /which kernel\? .* has loops in two \(line 1\), other \(line 8\)/);
  });

  test('--static --json with --csv, --t4, --report and --save: the result, four files, progress on stderr', async t => {
    if (skip) return t.skip(skip);
    const out = (f: string) => path.join(dir, 'out', f);
    const r = await run([
      'sweep',
      file,
      '--kernel',
      'two',
      '--factors',
      '1,4',
      '--static',
      '--json',
      '--csv',
      out('two.csv'),
      '--t4',
      out('two.t4.json'),
      '--report',
      out('two.html'),
      '--save',
      dir,
    ]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.deepEqual(Object.keys(j).slice(0, 5), ['kernel', 'static', 'variants', 'best', 'evaluations']);
    assert.equal(j.kernel, 'two');
    assert.equal(j.static, true);
    assert.equal(j.evaluations, 5);
    assert.deepEqual(
      j.variants.map((v: { factors: object }) => v.factors),
      [{}, { 2: 1, 5: 1 }, { 2: 1, 5: 4 }, { 2: 4, 5: 1 }, { 2: 4, 5: 4 }],
    );
    assert.ok(j.variants.every((v: { status: string; kernelInstructions: number }) => v.status === 'ok' && v.kernelInstructions > 0));
    assert.ok(j.best);
    // progress: one line per step on a non-terminal stderr, even with --json
    assert.match(r.err, /^sweep \[0\/5\] starting \(4 points, exhaustive\)$/m);
    assert.match(r.err, /^sweep \[5\/5\] L2 ×4 · L5 ×4: done$/m);
    assert.match(r.err, /^saved .*\.unroll-lens\/results\/two-\d{8}-\d{6}\.json$/m);
    const csv = fs.readFileSync(out('two.csv'), 'utf8');
    assert.ok(csv.startsWith('id,label,status,L2,L5,kernelInstructions,'));
    assert.equal(csv.trimEnd().split('\r\n').length, 6);
    const t4 = JSON.parse(fs.readFileSync(out('two.t4.json'), 'utf8'));
    assert.equal(t4.schema_version, '1.0.0');
    assert.equal(t4.results.length, 5);
    const html = fs.readFileSync(out('two.html'), 'utf8');
    assert.match(html, /^<!DOCTYPE html>/i);
    assert.ok(html.includes('two'));
    const saved = listResults(dir).results;
    assert.equal(saved.length, 1);
    assert.equal(saved[0].kernel, 'two');
  });

  test('table output: variants, the unroll nvcc applied, the best and why; coordinate strategy', async t => {
    if (skip) return t.skip(skip);
    const r = await run(['sweep', file, '--kernel', 'two', '--factors', 'default,1,4', '--static', '--strategy', 'coordinate']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^two · L2, L5 · static \(SASS only\) · coordinate: \d+ of 9 points \+ the file as written$/m);
    assert.match(r.out, /L2 unroll/);
    assert.match(r.out, /^\* best: .* — no GPU run: /m);
    // one count (issue 43): the header's; no note repeating it differently
    assert.doesNotMatch(r.out, /points evaluated|variants of/);
    // the k loop (8 trips) is unrolled completely as written
    assert.match(r.out, /as written\s+ok\s+\d+\s+\d+\s+×\d+\s+\d+\s+×8 full/);
  });
});
