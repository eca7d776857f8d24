// Issue 23, data lost and late failures: `sweep --report/--csv/--t4 PATH` overwrote a .cu, a
// header or any file, and an unwritable --report failed only after the whole run. Outputs are now
// checked before anything is built and replace only files Unroll Lens wrote (or with --force).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { writtenByUs } from '../../src/engine/sweep/exportOwnership';

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

const SRC = `__global__ void k(float* a) {
  for (int j = 0; j < 4; ++j) a[j] *= 2.0f;
}
`;
const HEADER = "#pragma once\n// the user's header: must survive\n";

let dir = '';
let file = '';
let skip: string | false = false;
before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cli-outputs-'));
  file = path.join(dir, 'k.cu');
  fs.writeFileSync(file, SRC);
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
  try {
    await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

after(() => fs.rmSync(dir, { recursive: true, force: true }));

const sweep = (...extra: string[]) => run(['sweep', file, '--static', '--factors', '1,4', ...extra]);

describe('sweep outputs are checked before anything runs', () => {
  test('--report onto an existing .cu or header: refused (exit 65), the file unchanged, nothing built', async () => {
    const other = path.join(dir, 'other.cu');
    const header = path.join(dir, 'k.cuh');
    fs.writeFileSync(other, SRC);
    fs.writeFileSync(header, HEADER);
    for (const [option, target] of [
      ['--report', other],
      ['--csv', header],
      ['--t4', header],
      ['--report', file],
    ]) {
      const cache = path.join(dir, 'cache');
      fs.rmSync(cache, { recursive: true, force: true });
      const r = await sweep(option, target);
      assert.equal(r.code, 65, `${option} ${target}: ${r.err}`);
      assert.match(
        r.err,
        target === file
          ? /is the input file: refusing to overwrite it/
          : /refusing to overwrite .*not .* Unroll Lens wrote; --force replaces it/,
      );
      assert.equal(r.out, '', 'no result: nothing ran');
      assert.ok(!fs.existsSync(cache), 'nothing was built');
    }
    assert.equal(fs.readFileSync(other, 'utf8'), SRC);
    assert.equal(fs.readFileSync(header, 'utf8'), HEADER);
    assert.equal(fs.readFileSync(file, 'utf8'), SRC);
  });

  test('an output that cannot be written (its folder is a file), a link, a folder, the same file twice: refused before the run', async () => {
    const canary = path.join(dir, 'canary.txt');
    fs.writeFileSync(canary, 'canary');
    const link = path.join(dir, 'link.html');
    fs.symlinkSync(canary, link);
    fs.mkdirSync(path.join(dir, 'folder.csv'));
    const cases: [string[], number, RegExp][] = [
      [['--report', path.join(canary, 'r.html')], 65, /--report: .*canary\.txt is not a folder/],
      [['--report', link], 65, /is a link/],
      [['--csv', path.join(dir, 'folder.csv')], 65, /exists and is not a regular file/],
      [['--csv', path.join(dir, 'same'), '--t4', path.join(dir, 'same')], 2, /--csv and --t4 name the same file/],
    ];
    for (const [args, code, message] of cases) {
      const r = await sweep(...args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, message);
      assert.equal(r.out, '');
    }
    assert.equal(fs.readFileSync(canary, 'utf8'), 'canary');
    assert.equal(fs.readlinkSync(link), canary);
  });

  test('--save into a folder whose .unroll-lens links outside: refused before the run, the outside unchanged', async () => {
    const ws = path.join(dir, 'ws');
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(ws);
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(ws, '.unroll-lens'));
    const r = await sweep('--save', ws);
    assert.equal(r.code, 65, r.err);
    assert.match(r.err, /--save .*\.unroll-lens is a link to .*outside/);
    assert.deepEqual(fs.readdirSync(outside), []);
  });
});

describe('sweep outputs replace only what Unroll Lens wrote', () => {
  test('a second run replaces its own CSV, T4 and report; a foreign file needs --force; no temp file is left', async t => {
    if (skip) return t.skip(skip);
    const outDir = path.join(dir, 'out');
    const files = { csv: path.join(outDir, 'k.csv'), t4: path.join(outDir, 'k.t4.json'), report: path.join(outDir, 'k.html') };
    const args = ['--csv', files.csv, '--t4', files.t4, '--report', files.report];
    assert.equal((await sweep(...args)).code, 0);
    for (const [format, f] of Object.entries(files)) assert.ok(writtenByUs(f, format as 'csv'), `${format}: ours`);
    const first = fs.statSync(files.csv).mtimeMs;
    const again = await sweep(...args);
    assert.equal(again.code, 0, again.err);
    assert.ok(fs.statSync(files.csv).mtimeMs >= first);
    // A user's CSV (another header) and a Kernel Tuner T4 file (no `variant` measurement) are not ours.
    fs.writeFileSync(files.csv, 'name,value\r\nx,1\r\n');
    fs.writeFileSync(
      files.t4,
      JSON.stringify({ schema_version: '1.0.0', results: [{ measurements: [{ name: 'time', value: 1, unit: 'ms' }] }] }),
    );
    const refused = await sweep('--csv', files.csv);
    assert.equal(refused.code, 65);
    assert.equal(fs.readFileSync(files.csv, 'utf8'), 'name,value\r\nx,1\r\n');
    assert.equal((await sweep('--t4', files.t4)).code, 65);
    const forced = await sweep('--csv', files.csv, '--t4', files.t4, '--force');
    assert.equal(forced.code, 0, forced.err);
    assert.ok(writtenByUs(files.csv, 'csv') && writtenByUs(files.t4, 't4'));
    assert.deepEqual(
      fs.readdirSync(outDir).filter(f => f.endsWith('.tmp')),
      [],
    );
  });
});
