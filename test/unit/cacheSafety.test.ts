// Issue 23, the caches: clearing and eviction delete only what we created (a marker file and our
// own entry layout), a clear while builds are in hand never pulls files from under them, and a
// cache entry edited by anyone else (result.json, a measurement, a listing with a recomputed
// unkeyed hash) is a miss, never an answer. A fake nvcc (fast, deterministic) drives the builder;
// every test works in temp folders with canary files outside and inside them.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessRunner } from '../../src/engine/toolchain/process';
import { VariantBuilder } from '../../src/engine/variants/build';
import { BuildCache } from '../../src/engine/variants/cache';
import { MeasurementCache } from '../../src/engine/gpu/measurementCache';
import { REPO_ROOT } from './helpers';
import { fakeNvcc, fakeProject as projectIn, fakeBuilder } from './cacheFakes';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachesafety-'));
/** The per-installation key lives in the user's config folder: here a temp one, never the workspace. */
const CONFIG = path.join(ROOT, 'config');
process.env.XDG_CONFIG_HOME = CONFIG;

function tmp(tag: string): string {
  return fs.mkdtempSync(path.join(ROOT, `${tag}-`));
}

const fakeProject = (regs = 8) => projectIn(ROOT, regs);

/** A canary folder outside every folder a test names: its files must never change. */
const CANARY = path.join(ROOT, 'canary');
function canaryState(): string {
  return fs
    .readdirSync(CANARY)
    .sort()
    .map(n => `${n}:${fs.readFileSync(path.join(CANARY, n), 'utf8')}`)
    .join('|');
}
let canaryBefore = '';
before(() => {
  fs.mkdirSync(CANARY);
  fs.writeFileSync(path.join(CANARY, 'keep.txt'), 'do not delete');
  fs.writeFileSync(path.join(CANARY, 'ab'), 'a file named like a cache shard');
  canaryBefore = canaryState();
});

/** Every file under a folder, relative, with its content hash: "nothing else changed". */
function snapshot(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter(p => fs.lstatSync(path.join(dir, p)).isFile())
    .map(
      p =>
        `${p}:${crypto
          .createHash('sha256')
          .update(fs.readFileSync(path.join(dir, p)))
          .digest('hex')
          .slice(0, 8)}`,
    )
    .sort();
}

/** The result.json files of a cache. */
function resultFiles(cacheDir: string): string[] {
  return (fs.readdirSync(cacheDir, { recursive: true }) as string[])
    .filter(p => path.basename(p) === 'result.json')
    .map(p => path.join(cacheDir, p));
}

function cli(args: string[], cwd: string, home: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    cwd,
    env: { ...process.env, XDG_CACHE_HOME: home, XDG_CONFIG_HOME: CONFIG },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A folder of the user's: sources, notes, and a sibling `measurements/` of their own. */
function userFolder(): { parent: string; folder: string } {
  const parent = tmp('user');
  const folder = path.join(parent, 'project');
  fs.mkdirSync(path.join(folder, 'src'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'main.cu'), '__global__ void k() {}\n');
  fs.writeFileSync(path.join(folder, 'src', 'notes.txt'), 'mine');
  fs.mkdirSync(path.join(folder, 'ab', 'cd'), { recursive: true });
  fs.writeFileSync(path.join(folder, 'ab', 'cd', 'data.bin'), 'mine too');
  fs.mkdirSync(path.join(parent, 'measurements'));
  fs.writeFileSync(path.join(parent, 'measurements', 'lab-book.json'), '{"mine": true}');
  return { parent, folder };
}

describe('clear deletes only a cache of ours', () => {
  test('cache clear --dir <a folder of the user> is refused, deletes nothing there nor in its sibling measurements/', () => {
    const { parent, folder } = userFolder();
    const before = snapshot(parent);
    const r = cli(['cache', 'clear', '--dir', folder], parent, tmp('home'));
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err, /not an Unroll Lens (build )?cache/);
    assert.deepEqual(snapshot(parent), before);
    assert.equal(canaryState(), canaryBefore);
  });

  test('cache clear --dir "" is a usage error and deletes nothing in the current folder', () => {
    const { parent, folder } = userFolder();
    const before = snapshot(parent);
    const r = cli(['cache', 'clear', '--dir', ''], folder, tmp('home'));
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err, /--dir/);
    assert.deepEqual(snapshot(parent), before);
  });

  test('BuildCache.clear and MeasurementCache.clear on a folder without our marker refuse; an empty or missing one is fine', () => {
    const { parent, folder } = userFolder();
    const before = snapshot(parent);
    assert.throws(() => new BuildCache(folder).clear(), /not an Unroll Lens build cache/);
    assert.throws(() => new MeasurementCache(path.join(parent, 'measurements')).clear(), /not an Unroll Lens measurement cache/);
    assert.deepEqual(snapshot(parent), before);
    assert.equal(new BuildCache(path.join(parent, 'absent')).clear().entries, 0);
  });

  test('clear of a real cache removes its entries and keeps a stray file of the user inside it', async () => {
    const home = tmp('home');
    const cacheDir = path.join(home, 'unroll-lens', 'builds');
    const p = fakeProject();
    await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    const stray = path.join(
      cacheDir,
      fs.readdirSync(cacheDir).find(n => /^[0-9a-f]{2}$/.test(n))!,
      'my-notes.txt',
    );
    fs.writeFileSync(stray, 'I put this here');
    const m = new MeasurementCache(path.join(home, 'unroll-lens', 'measurements'));
    m.put('ab'.repeat(32), { groups: [], stdout: 'x' });
    fs.writeFileSync(path.join(m.dir, 'README'), 'mine');
    const r = cli(['cache', 'clear'], home, home);
    assert.equal(r.code, 0, r.err);
    assert.equal(new BuildCache(cacheDir).info().entries, 0);
    assert.equal(fs.readFileSync(stray, 'utf8'), 'I put this here');
    assert.equal(m.info().entries, 0);
    assert.equal(fs.readFileSync(path.join(m.dir, 'README'), 'utf8'), 'mine');
    assert.equal(canaryState(), canaryBefore);
  });
});

describe('eviction removes only our entries', () => {
  test('--shared-dir DIR whose builds/ holds the user files: the size cap never evicts them (the folder is not used as a cache)', async () => {
    const shared = tmp('shared');
    const builds = path.join(shared, 'builds');
    fs.mkdirSync(path.join(builds, 'ab', 'ab'.repeat(32)), { recursive: true });
    fs.writeFileSync(path.join(builds, 'ab', 'ab'.repeat(32), 'results.csv'), 'a,b\n1,2\n');
    fs.writeFileSync(path.join(builds, 'thesis.tex'), '\\documentclass{article}');
    const warnings: string[] = [];
    const p = fakeProject();
    const b = new VariantBuilder({
      nvcc: { name: 'nvcc', path: '/opt/fake-cuda/bin/nvcc', version: '13.0', source: 'setting' },
      arch: 'sm_90',
      flags: flagsFromSettings({}, p.dir),
      cacheDir: builds,
      cacheMaxBytes: 1,
      runner: fakeNvcc,
      warn: w => warnings.push(w),
    });
    // A folder of the user's laid out exactly like an entry of this very build: not read, not removed as damaged.
    const h = b.hashOf(p.req);
    fs.mkdirSync(path.join(builds, h.slice(0, 2), h, '0123456789abcdef'), { recursive: true });
    fs.writeFileSync(path.join(builds, h.slice(0, 2), h, '0123456789abcdef', 'result.json'), 'my own result');
    const before = snapshot(builds);
    const [r] = await b.buildAll([p.req]);
    assert.equal(r.status, 'ok');
    assert.ok(fs.existsSync(r.outputPath!));
    assert.deepEqual(snapshot(builds), before);
    assert.match(warnings.join('\n'), /not an Unroll Lens build cache/);
  });

  test('in a cache of ours, the cap evicts entries but never a file of the user inside it', async () => {
    const cacheDir = path.join(tmp('evict'), 'builds');
    const p1 = fakeProject(8);
    const p2 = fakeProject(9);
    await fakeBuilder(p1.dir, cacheDir).buildAll([p1.req]);
    const shard = fs.readdirSync(cacheDir).find(n => /^[0-9a-f]{2}$/.test(n))!;
    const mine = [path.join(cacheDir, 'my.txt'), path.join(cacheDir, shard, 'mine.txt'), path.join(cacheDir, 'tmp', 'mine.txt')];
    fs.mkdirSync(path.join(cacheDir, 'tmp'), { recursive: true });
    for (const f of mine) fs.writeFileSync(f, 'user');
    await fakeBuilder(p2.dir, cacheDir, 1).buildAll([p2.req]);
    for (const f of mine) assert.equal(fs.readFileSync(f, 'utf8'), 'user', f);
    assert.ok(new BuildCache(cacheDir).info().entries <= 1);
  });
});

describe('forged entries are misses', () => {
  test('result.json edited from 8 to 200 registers: rebuilt, the answer says 8', async () => {
    const cacheDir = path.join(tmp('forge'), 'builds');
    const p = fakeProject(8);
    const [first] = await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    assert.match(first.ptxasLog, /Used 8 registers/);
    for (const f of resultFiles(cacheDir))
      fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/Used 8 registers/g, 'Used 200 registers'));
    const b = fakeBuilder(p.dir, cacheDir);
    const [again] = await b.buildAll([p.req]);
    assert.match(again.ptxasLog, /Used 8 registers/);
    assert.equal(again.cached, false);
    assert.equal(b.compiles, 1);
  });

  test('a result.json written by a plain JSON edit from scratch (no key) is a miss', async () => {
    const cacheDir = path.join(tmp('forge2'), 'builds');
    const p = fakeProject(8);
    await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    for (const f of resultFiles(cacheDir)) {
      const o = JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
      const body = typeof o.body === 'string' ? (JSON.parse(o.body) as Record<string, unknown>) : o;
      body.ptxasLog = 'ptxas info    : Used 200 registers';
      fs.writeFileSync(f, JSON.stringify(body)); // an old-format entry, or one without a MAC
    }
    const [again] = await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    assert.match(again.ptxasLog, /Used 8 registers/);
    assert.equal(again.cached, false);
  });

  test('a measurement edited to a median of -7 ms is a miss', () => {
    const m = new MeasurementCache(path.join(tmp('meas'), 'measurements'));
    const key = 'cd'.repeat(32);
    m.put(key, { groups: [{ key: 'k', kernel: 'k', blockSize: null, durations: [1.5, 1.6, 1.7], last: null }], stdout: 'ok' });
    assert.deepEqual(m.get(key)?.groups[0].durations, [1.5, 1.6, 1.7]);
    const file = (fs.readdirSync(m.dir, { recursive: true }) as string[]).find(f => f.endsWith(`${key}.json`))!;
    const full = path.join(m.dir, file);
    fs.writeFileSync(full, fs.readFileSync(full, 'utf8').replace(/1\.5,1\.6,1\.7/, '-7,-7,-7'));
    assert.equal(m.get(key), null);
  });

  test('a listing replaced together with a recomputed plain sha256 is a miss', async () => {
    const cacheDir = path.join(tmp('listing'), 'builds');
    const p = fakeProject(8);
    const b = fakeBuilder(p.dir, cacheDir);
    const [r] = await b.buildAll([p.req]);
    const entry = path.dirname(resultFiles(cacheDir)[0]);
    const file = path.join(entry, 'nvdisasm-c-gi-0123456789abcdef.txt');
    b.cache.writeSidecar(file, 'IMAD R1, R2, R3 ;\n');
    assert.equal(b.cache.readSidecar(file), 'IMAD R1, R2, R3 ;\n');
    const forged = Buffer.from('FFMA R1, R2, R3, R4 ;\n');
    fs.writeFileSync(file, forged);
    fs.writeFileSync(`${file}.sha256`, `${forged.length} ${crypto.createHash('sha256').update(forged).digest('hex')}\n`);
    assert.equal(b.cache.readSidecar(file), null);
    assert.ok(r.outputPath);
  });

  test('the key is created once with mode 0600 in the config folder, not in the workspace', () => {
    const keyFile = path.join(CONFIG, 'unroll-lens', 'cache-key');
    assert.ok(fs.existsSync(keyFile), 'created by the tests above');
    assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    assert.equal(fs.statSync(keyFile).size, 32);
  });
});

describe('clear while builds are in hand', () => {
  test('a clear between a cache hit and its use: the build handed out is still there and whole', async () => {
    const cacheDir = path.join(tmp('race'), 'builds');
    const p = fakeProject(8);
    const [fresh] = await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    const want = fs.readFileSync(fresh.outputPath!);
    const [hit] = await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
    assert.equal(hit.cached, true);
    new BuildCache(cacheDir).clear();
    assert.deepEqual(fs.readFileSync(hit.outputPath!), want);
  });

  test('a clear between compile and commit: the build still lands, with no ENOENT and no warning', async () => {
    const cacheDir = path.join(tmp('race2'), 'builds');
    const p = fakeProject(8);
    await fakeBuilder(p.dir, cacheDir).buildAll([fakeProject(7).req]); // the cache exists, with an entry
    const warnings: string[] = [];
    const clearing: ProcessRunner = async (c, a, o) => {
      const r = await fakeNvcc(c, a, o);
      new BuildCache(cacheDir).clear();
      return r;
    };
    const b = new VariantBuilder({
      nvcc: { name: 'nvcc', path: '/opt/fake-cuda/bin/nvcc', version: '13.0', source: 'setting' },
      arch: 'sm_90',
      flags: flagsFromSettings({}, p.dir),
      cacheDir,
      runner: clearing,
      warn: w => warnings.push(w),
    });
    const [r] = await b.buildAll([p.req]);
    assert.equal(r.status, 'ok');
    assert.ok(fs.readFileSync(r.outputPath!).length > 0);
    assert.deepEqual(warnings, []);
  });

  test('another process clears in a loop while this one builds and reads 40 times: every build is ok and readable', async () => {
    const cacheDir = path.join(tmp('race3'), 'builds');
    const projects = [8, 9, 10, 11].map(fakeProject);
    await fakeBuilder(projects[0].dir, cacheDir).buildAll([projects[0].req]);
    const cacheJs = path.join(REPO_ROOT, 'out', 'src', 'engine', 'variants', 'cache.js');
    const script = `const { BuildCache } = require(${JSON.stringify(cacheJs)}); const c = new BuildCache(${JSON.stringify(cacheDir)}); const end = Date.now() + 4000; while (Date.now() < end) c.clear();`;
    const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, XDG_CONFIG_HOME: CONFIG }, stdio: 'inherit' });
    const done = new Promise(resolve => child.on('close', resolve));
    const failures: string[] = [];
    for (let i = 0; i < 40; i++) {
      const p = projects[i % projects.length];
      const [r] = await fakeBuilder(p.dir, cacheDir).buildAll([p.req]);
      if (r.status !== 'ok') failures.push(`${i}: ${r.status} ${JSON.stringify(r.messages)}`);
      else if (!/FAKE-CUBIN/.test(fs.readFileSync(r.outputPath!, 'utf8'))) failures.push(`${i}: output lost`);
      await new Promise(res => setTimeout(res, 20));
    }
    await done;
    assert.deepEqual(failures, []);
  });
});
