// Issue 24: `bench` writes the same result files as `sweep` (--csv, --t4, --report, --save), from
// the same result type, checked before anything is built. The GPU side is replayed at the process
// level: a launcher script runs a stand-in `ncu` that answers from the recordings of a real H100
// run (test/fixtures/gpu/h100: matmul_unroll's output, ncu's lines and raw page, the source page);
// nvcc really builds the programs.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { checkSweepResult } from '../../src/schema/result';
import { writtenByUs } from '../../src/engine/sweep/exportOwnership';
import { REPO_ROOT, SAMPLES } from './helpers';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');

async function run(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
  return { code, out, err };
}

let dir = '';
let bin = '';
let file = '';
let line = 0;
let skip: string | false = false;
const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };

/** A stand-in ncu: its version, a profile's output (the program's recorded lines and ncu's), an import's page. */
function fakeNcu(): string {
  const js = `#!${process.execPath}
const fs = require('fs');
const args = process.argv.slice(2);
const rec = f => fs.readFileSync(${JSON.stringify(REC)} + '/' + f, 'utf8');
if (args.includes('--version')) { console.log('NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880)'); process.exit(0); }
fs.appendFileSync(${JSON.stringify('CALLS')}, JSON.stringify(args) + '\\n');
if (args[0] === '--import') {
  process.stdout.write(args.includes('source') ? rec('source-stalls/reports/matmul_unroll-source.csv') : rec('matmul_basic.raw.csv'));
  process.exit(0);
}
const own = rec('matmul_basic.ncu-stdout.txt').split('\\n').filter(l => l.startsWith('==')).join('\\n');
process.stdout.write(rec('matmul_unroll.stdout') + own + '\\n');
const exp = args.indexOf('--export');
if (exp >= 0) fs.writeFileSync(args[exp + 1].endsWith('.ncu-rep') ? args[exp + 1] : args[exp + 1] + '.ncu-rep', 'replayed');
else if (args.includes('--csv')) process.stdout.write(rec('matmul_basic.raw.csv'));
`;
  return js;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cli-bench-'));
  bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'ncu'), fakeNcu().replace('"CALLS"', JSON.stringify(path.join(dir, 'calls.txt'))), { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'launch'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  file = path.join(dir, 'matmul_unroll.cu');
  fs.copyFileSync(path.join(SAMPLES, 'matmul_unroll.cu'), file);
  const text = fs.readFileSync(file, 'utf8');
  line = text.split('\n').findIndex(l => l.includes('for (int k = 0; k < n; ++k)')) + 1;
  process.env.PATH = `${bin}:${process.env.PATH}`;
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
  try {
    await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

after(() => {
  process.env.PATH = saved.PATH;
  if (saved.XDG_CACHE_HOME === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = saved.XDG_CACHE_HOME;
  fs.rmSync(dir, { recursive: true, force: true });
});

const bench = (...extra: string[]) =>
  run([
    'bench',
    file,
    '--loop',
    String(line),
    '--factors',
    '4',
    '--arch',
    'sm_90',
    '--args',
    '--only matmul_basic --reps 25',
    '--launcher',
    path.join(bin, 'launch'),
    // the recorded ncu run replays through the fake launcher (the CUPTI timer, the default, has its own tests)
    '--timer',
    'ncu',
    '--quiet',
    '--fresh',
    ...extra,
  ]);

describe('bench --csv/--t4/--report/--save (the sweep outputs, one result type)', () => {
  test('every output written from the bench result; the saved result validates and carries the per-line stalls', async t => {
    if (skip) return t.skip(skip);
    assert.ok(line > 0, 'the k loop of matmul_basic');
    const out = path.join(dir, 'out');
    const r = await bench(
      '--csv',
      path.join(out, 'b.csv'),
      '--t4',
      path.join(out, 'b.t4.json'),
      '--report',
      path.join(out, 'b.html'),
      '--save',
      path.join(dir, 'saved'),
      '--source-stalls',
    );
    assert.equal(r.code, 0, r.err + r.out);
    const csv = fs.readFileSync(path.join(out, 'b.csv'), 'utf8').trim().split('\n');
    assert.equal(csv.length, 3, 'header, the file as written, ×4');
    assert.ok(writtenByUs(path.join(out, 'b.csv'), 'csv'));
    const t4 = JSON.parse(fs.readFileSync(path.join(out, 'b.t4.json'), 'utf8'));
    assert.equal(t4.results.length, 2);
    assert.ok(writtenByUs(path.join(out, 'b.html'), 'report'));
    const savedDir = path.join(dir, 'saved', '.unroll-lens', 'results');
    const files = fs.readdirSync(savedDir).filter(f => f.endsWith('.json'));
    assert.equal(files.length, 1);
    const result = checkSweepResult(JSON.parse(fs.readFileSync(path.join(savedDir, files[0]), 'utf8')));
    assert.equal(result.origin, 'bench');
    assert.deepEqual(
      result.variants.map(v => [v.label, v.status, v.samples]),
      [
        ['as written', 'ok', 20],
        ['×4', 'ok', 20],
      ],
    );
    assert.ok(result.lineStalls && result.lineStalls.length > 0);
    assert.equal([...result.lineStalls].sort((a, b) => b.samples - a.samples)[0].line, 52);
    assert.match(r.err, /saved /);
  });

  test('an output that may not be written is refused before anything is built (exit 65), the file unchanged', async t => {
    if (skip) return t.skip(skip);
    const mine = path.join(dir, 'notes.txt');
    fs.writeFileSync(mine, 'my notes\n');
    fs.rmSync(path.join(dir, 'calls.txt'), { force: true });
    const r = await bench('--csv', mine);
    assert.equal(r.code, 65, r.err);
    assert.match(r.err, /--csv: .*--force replaces it/);
    assert.equal(fs.readFileSync(mine, 'utf8'), 'my notes\n');
    assert.ok(!fs.existsSync(path.join(dir, 'calls.txt')), 'ncu never ran');
  });
});
