// Issue 43: a saved report (--report) is shared with other people, so it names the source relative
// to the folder the command ran from (its base name when outside it) and carries no absolute path
// of this machine that starts in one of those folders; the live panel keeps the absolute path.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { detectToolchain } from '../../src/engine/toolchain/toolchain';
import { loadPanelAssets, reportHtml } from '../../src/panelHtml';
import type { SweepResult } from '../../src/schema/types';
import { REPO_ROOT } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'sweep', 'matmul_basic.json');
const assets = { script: 'document.title;', css: 'body{}' };

/** The embedded result of a report (the JSON the page renders). */
function embedded(html: string): SweepResult {
  const m = /<script type="application\/json" id="sweep-data">(.*?)<\/script>/s.exec(html);
  assert.ok(m, 'the report embeds its result');
  return JSON.parse(m[1]) as SweepResult;
}

/** matmul_basic's result as if run in /home/someone/proj, with the path in a failure message and a note. */
function resultIn(project: string): SweepResult {
  const r = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as SweepResult;
  r.file = path.join(project, 'src', 'matmul_unroll.cu');
  r.variants[2].message = `${r.file}(40): warning: loop not unrolled; see ${path.join(project, 'include', 'tile.h')}`;
  r.notes = [...r.notes, `compiled with -I ${path.join(project, 'include')}`];
  return r;
}

describe('report paths (pure)', () => {
  const project = path.join(path.sep, 'home', 'someone', 'proj');

  test('inside the folder it ran from: the source relative to it, no absolute path left', () => {
    const html = reportHtml(resultIn(project), assets, { baseDir: project });
    const r = embedded(html);
    assert.equal(r.file, 'src/matmul_unroll.cu');
    assert.equal(r.variants[2].message, 'src/matmul_unroll.cu(40): warning: loop not unrolled; see include/tile.h');
    assert.ok(!html.includes(project), 'no absolute path of the project in the report');
    assert.match(html, /<title>Unroll Lens: matmul_basic \(matmul_unroll\.cu\)<\/title>/);
  });

  test('outside it: the base name, and the source folder not shown', () => {
    const html = reportHtml(resultIn(project), assets, { baseDir: path.join(path.sep, 'tmp', 'elsewhere') });
    const r = embedded(html);
    assert.equal(r.file, 'matmul_unroll.cu');
    assert.ok(!html.includes(path.join(project, 'src')), 'no absolute path of the source folder');
  });

  test('the result passed in is left as it was (the live panel and --save keep absolute paths)', () => {
    const r = resultIn(project);
    const before = JSON.stringify(r);
    reportHtml(r, assets, { baseDir: project });
    assert.equal(JSON.stringify(r), before);
  });
});

describe('sweep --report', () => {
  let dir = '';
  let skip: string | false = false;
  const cwd = process.cwd();
  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-report-paths-')));
    fs.mkdirSync(path.join(dir, 'kernels'));
    fs.writeFileSync(path.join(dir, 'kernels', 'k.cu'), '__global__ void k(float* a) {\n  for (int j = 0; j < 4; ++j) a[j] *= 2.0f;\n}\n');
    process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
    try {
      await detectToolchain({ probeGpu: false });
      loadPanelAssets();
    } catch (e) {
      if (process.env.CI) throw e;
      skip = `no nvcc or no built panel: ${(e as Error).message}`;
    }
  });
  after(() => {
    process.chdir(cwd);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('run from the project folder: the report names kernels/k.cu and holds no path of the machine', async t => {
    if (skip) return t.skip(skip);
    process.chdir(dir);
    let err = '';
    const code = await main(['sweep', path.join(dir, 'kernels', 'k.cu'), '--static', '--factors', '1,4', '--report', 'k.html', '--json'], {
      out: () => undefined,
      err: s => (err += s),
      isTTY: false,
    });
    assert.equal(code, 0, err);
    const html = fs.readFileSync(path.join(dir, 'k.html'), 'utf8');
    assert.equal(embedded(html).file, 'kernels/k.cu');
    assert.ok(!html.includes(dir), `the report holds ${dir}`);
  });
});
