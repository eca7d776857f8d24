// The cache must never lie (issue 10): several processes on one cache, damaged entries, a cache
// that cannot be written (read-only, full, file size limit), an output over the size limit, the
// size cap with least-recently-used eviction, and `unroll-lens cache info|clear`. Real nvcc and
// the real CLI in child processes; failures of the disk are injected or made with `ulimit -f`.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { BuildRequest, BuilderOptions, VariantBuilder } from '../../src/engine/variants/build';
import { MeasurementCache } from '../../src/engine/gpu/measurementCache';
import { BuildCache, releaseScratch } from '../../src/engine/variants/cache';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { REPO_ROOT, SAMPLES } from './helpers';

const CLI = path.join(REPO_ROOT, 'bin', 'unroll-lens.js');
const SAMPLE = path.join(SAMPLES, 'matmul_unroll.cu');
/**
 * `sass` on one loop of a cuda-samples file: the file as written, all loops rolled, and two
 * factors. Before the fix, 6 of 36 such runs (6 at once, default --jobs) crashed with ENOENT.
 */
const SASS_ARGS = ['sass', SAMPLE, '--loop', '51', '--factors', '1,4', '--arch', 'sm_90', '--json'];

let toolchain: Toolchain | null = null;
let skip: string | false = false;

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

function tmpDir(tag: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ul-integrity-${tag}-`));
}

/** The builds folder of a cache home (defaultCacheDir under XDG_CACHE_HOME). */
function buildsOf(home: string): string {
  return path.join(home, 'unroll-lens', 'builds');
}

interface Run {
  code: number | null;
  signal: string | null;
  out: string;
  err: string;
}

/** The CLI in a child process, on the cache under `home`; `ulimitKiB`: through bash with `ulimit -f`. */
function cliAsync(args: string[], home: string, ulimitKiB?: number): Promise<Run> {
  const env = { ...process.env, XDG_CACHE_HOME: home };
  const child =
    ulimitKiB === undefined
      ? spawn(process.execPath, [CLI, ...args], { env, cwd: REPO_ROOT })
      : spawn('bash', ['-c', `ulimit -f ${ulimitKiB}; exec "$0" "$@"`, process.execPath, CLI, ...args], { env, cwd: REPO_ROOT });
  let out = '';
  let err = '';
  child.stdout.on('data', d => (out += d));
  child.stderr.on('data', d => (err += d));
  return new Promise(resolve => child.on('close', (code, signal) => resolve({ code, signal, out, err })));
}

function cliSync(args: string[], home: string): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: home },
    cwd: REPO_ROOT,
  });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

/** Every file under a folder, relative. */
function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter(p => fs.statSync(path.join(dir, p)).isFile()).sort();
}

/**
 * What a half-finished write leaves: temp names, scratch builds, trash, empty files. Not the
 * leases of this live process (links to the builds it was handed, removed at its exit).
 */
function leftovers(cache: string): string[] {
  return [
    ...files(cache).filter(p => !/\.lease-/.test(p) && (/\.tmp-|(^|\/)trash\//.test(p) || fs.statSync(path.join(cache, p)).size === 0)),
    ...(fs.existsSync(path.join(cache, 'tmp'))
      ? fs
          .readdirSync(path.join(cache, 'tmp'))
          .filter(n => !n.includes('.lease-'))
          .map(n => `tmp/${n}`)
      : []),
  ];
}

/** The entry a build came from: its output is a leased link named after the entry's id. */
function entryOfResult(cacheDir: string, r: { hash: string; outputPath: string | null }): string {
  return path.join(cacheDir, r.hash.slice(0, 2), r.hash, path.basename(path.dirname(r.outputPath!)).slice(0, 16));
}

let reference: string | null = null;
/** The single-process answer on a fresh cache, against which everything else is compared. */
async function referenceRun(): Promise<string> {
  if (reference === null) {
    const r = await cliAsync(SASS_ARGS, tmpDir('ref'));
    assert.equal(r.code, 0, r.err);
    reference = r.out;
  }
  return reference;
}

describe('several processes on one cache', () => {
  test('6 concurrent CLI processes on a fresh cache, then 6 on the warm one: every answer is the single-process one, no crash', async t => {
    if (skip) return t.skip(skip);
    const ref = await referenceRun();
    const home = tmpDir('race');
    for (const round of ['cold', 'warm']) {
      const runs = await Promise.all(Array.from({ length: 6 }, () => cliAsync(SASS_ARGS, home)));
      runs.forEach((r, i) => {
        assert.equal(r.code, 0, `${round} run ${i}: exit ${r.code} ${r.signal ?? ''}\n${r.err}`);
        assert.equal(r.out, ref, `${round} run ${i} differs from the single-process answer`);
        assert.doesNotMatch(r.err, /ENOENT|at .*\.js:\d+/, `${round} run ${i}: ${r.err}`);
      });
    }
    assert.deepEqual(leftovers(buildsOf(home)), [], 'no temp files, scratch builds or empty files left');
    // One entry per build: losers discarded their copies.
    const entries = new BuildCache(buildsOf(home)).entries();
    assert.equal(new Set(entries.map(e => path.dirname(e.dir))).size, entries.length, 'one entry per key');
  });
});

describe('two writers of one entry', () => {
  test('two builders compile the same key at once: the second discards its copy and reads the first', async t => {
    if (skip) return t.skip(skip);
    const { dir, req } = project('11.0f');
    const cacheDir = tmpDir('twowriters');
    const b1 = builder(dir, cacheDir);
    const b2 = builder(dir, cacheDir);
    // Both look the key up before either has stored it, so both compile.
    const [[r1], [r2]] = await Promise.all([b1.buildAll([req]), b2.buildAll([req])]);
    assert.equal(b1.compiles + b2.compiles, 2);
    assert.equal(r1.status, 'ok');
    assert.equal(r2.status, 'ok');
    assert.equal(b1.cache.entryOf(r1.outputPath!), b2.cache.entryOf(r2.outputPath!), 'both answers come from the one stored entry');
    assert.deepEqual(fs.readFileSync(r1.outputPath!), fs.readFileSync(r2.outputPath!));
    assert.equal(new BuildCache(cacheDir).entries().length, 1);
    assert.deepEqual(leftovers(cacheDir), [], "the loser's scratch copy is gone");
  });
});

describe('damaged entries', () => {
  test('truncated or garbage cubins, listings and result.json in the cache are detected, removed and rebuilt', async t => {
    if (skip) return t.skip(skip);
    const ref = await referenceRun();
    const home = tmpDir('damage');
    assert.equal((await cliAsync(SASS_ARGS, home)).out, ref);
    const cache = buildsOf(home);
    const all = files(cache);
    const cubins = all.filter(p => p.endsWith('.cubin'));
    const listings = all.filter(p => /nvdisasm-c-gi-.*\.txt$|cuobjdump-sass-.*\.txt$/.test(p));
    const results = all.filter(p => p.endsWith('result.json'));
    assert.ok(cubins.length >= 3 && listings.length >= 3, all.join('\n'));
    const damage: [string, (p: string) => void][] = [
      [cubins[0], p => fs.truncateSync(p, Math.floor(fs.statSync(p).size / 2))],
      [cubins[1], p => fs.writeFileSync(p, Buffer.alloc(fs.statSync(p).size, 0x5a))], // same size, garbage
      [listings[0], p => fs.truncateSync(p, 0)],
      [listings[1], p => fs.writeFileSync(p, 'garbage\n'.repeat(100))],
      [results[2], p => fs.writeFileSync(p, '{"status":"ok"')],
    ];
    for (const [p, f] of damage) f(path.join(cache, p));
    const r = await cliAsync(SASS_ARGS, home);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, ref, 'the damaged entries were not used');
    // Their replacements are intact: a third run reads only the cache and agrees.
    assert.equal((await cliAsync(SASS_ARGS, home)).out, ref);
    assert.deepEqual(leftovers(cache), []);
  });
});

function builder(dir: string, cacheDir: string, extra: Partial<BuilderOptions> = {}): VariantBuilder {
  const tc = toolchain!;
  return new VariantBuilder({ nvcc: tc.nvcc, arch: 'sm_90', flags: flagsFromSettings({}, dir), cacheDir, runner: tc.runner, ...extra });
}

function project(constant = '2.0f'): { dir: string; req: BuildRequest } {
  const dir = tmpDir('proj');
  const source = `__global__ void k(float *p) {\n#pragma unroll 4\n  for (int i = 0; i < 64; i++) p[i * threadIdx.x] *= ${constant};\n}\n`;
  fs.writeFileSync(path.join(dir, 'k.cu'), source);
  return { dir, req: { key: `k${constant}`, source, originalPath: path.join(dir, 'k.cu') } };
}

describe('a cache that cannot be written', () => {
  test('the cache folder cannot be created (read-only or under a file): the build is returned uncached, with one clear warning', async t => {
    if (skip) return t.skip(skip);
    const { dir, req } = project();
    const blocker = path.join(tmpDir('ro'), 'a-file');
    fs.writeFileSync(blocker, '');
    // chmod 0555 stops no one as root: a cache under a regular file fails the same way (ENOTDIR).
    let cacheDir = path.join(blocker, 'builds');
    if (process.getuid?.() !== 0) {
      const ro = tmpDir('ro555');
      fs.chmodSync(ro, 0o555);
      cacheDir = path.join(ro, 'builds');
    }
    const warnings: string[] = [];
    const b = builder(dir, cacheDir, { warn: m => warnings.push(m) });
    const [r] = await b.buildAll([req]);
    assert.equal(r.status, 'ok', JSON.stringify(r.messages));
    assert.equal(r.cached, false);
    assert.ok(fs.statSync(r.outputPath!).size > 0, 'the uncached build is readable');
    const dis = await new VariantInspector({ toolchain: toolchain!, builder: b, arch: 'sm_90' }).disassemble(r.outputPath!);
    assert.ok(dis.sizes.size > 0);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], /build cache .* cannot be written \((ENOTDIR|EACCES|EROFS)[^)]*\): builds are not cached/);
    const [again] = await b.buildAll([req]);
    assert.equal(again.status, 'ok');
    assert.equal(b.compiles, 2, 'nothing was cached');
    releaseScratch(); // what process exit does
    assert.equal(fs.existsSync(r.outputPath!), false, 'the scratch build is gone at exit');
  });

  for (const code of ['ENOSPC', 'EROFS', 'EACCES']) {
    test(`${code} while writing an entry: nothing half-written is left, the build comes back uncached, one clear warning`, async t => {
      if (skip) return t.skip(skip);
      const { dir, req } = project();
      const cacheDir = tmpDir('full');
      const warnings: string[] = [];
      let failing = true;
      const writeFile = (f: string, data: string | Buffer) => {
        if (!failing) return fs.writeFileSync(f, data);
        fs.writeFileSync(f, data.slice(0, Math.floor(data.length / 2))); // half of it made it to disk
        throw Object.assign(new Error(`${code}: simulated, write '${f}'`), { code });
      };
      const b = builder(dir, cacheDir, { warn: m => warnings.push(m), cacheWriteFile: writeFile });
      const [r] = await b.buildAll([req]);
      assert.equal(r.status, 'ok', JSON.stringify(r.messages));
      assert.equal(r.cached, false);
      assert.ok(fs.existsSync(r.outputPath!));
      assert.equal(fs.existsSync(path.join(path.dirname(r.outputPath!), 'result.json')), false, 'no half-written result.json');
      assert.deepEqual(new BuildCache(cacheDir).entries(), [], 'no entry');
      // A listing write that fails leaves no file either, and the listing is still returned.
      const dis = await new VariantInspector({ toolchain: toolchain!, builder: b, arch: 'sm_90' }).disassemble(r.outputPath!);
      if (toolchain!.nvdisasm || toolchain!.cuobjdump) assert.ok(dis.listing && dis.listing.functions.length > 0);
      assert.deepEqual(
        fs.readdirSync(path.dirname(r.outputPath!)).filter(n => /\.txt|\.tmp-/.test(n)),
        [],
        'no listing or temp file left beside the build',
      );
      assert.ok(warnings.length >= 1 && warnings.every(w => w.includes(code) && !/\n\s+at /.test(w)), warnings.join('\n'));
      releaseScratch();
      assert.deepEqual(leftovers(cacheDir), [], 'no scratch folder left');
      // The disk has room again: the next build is stored and then read back.
      failing = false;
      const [stored] = await b.buildAll([req]);
      assert.equal(stored.cached, false);
      const [hit] = await b.buildAll([req]);
      assert.equal(hit.cached, true);
    });
  }

  test('a full disk through `ulimit -f` (SIGXFSZ becomes EFBIG): no half files, a one-line warning, the right answer; later runs are right', async t => {
    if (skip) return t.skip(skip);
    if (process.platform === 'win32') return t.skip('no ulimit');
    const ref = await referenceRun();
    const home = tmpDir('ulimit');
    const cache = buildsOf(home);
    // Cold, with 50 KiB per file: nvcc's own output does not fit; reported, nothing stored.
    const cold = await cliAsync(SASS_ARGS, home, 50);
    assert.notEqual(cold.code, 0);
    assert.equal(cold.signal, null, 'not killed by SIGXFSZ');
    assert.doesNotMatch(cold.err, /\n\s+at |internal error \(please report/, cold.err);
    assert.deepEqual(leftovers(cache), []);
    assert.deepEqual(new BuildCache(cache).entries(), [], 'a failure of the disk is not cached');
    // Warm cache, listings deleted, 100 KiB per file: the bigger listings cannot be written.
    assert.equal((await cliAsync(SASS_ARGS, home)).out, ref, 'the tool works again: right answer');
    for (const f of files(cache).filter(p => /\.txt(\.sha256)?$/.test(p))) fs.rmSync(path.join(cache, f));
    const full = await cliAsync(SASS_ARGS, home, 100);
    assert.equal(full.code, 0, full.err);
    assert.equal(full.out, ref, 'right answer from the uncached listings');
    assert.match(full.err, /warning: cannot write to the build cache .*EFBIG/);
    assert.doesNotMatch(full.err, /\n\s+at /);
    assert.deepEqual(leftovers(cache), [], 'no 0-byte or partial listing, no temp file');
    const later = await cliAsync(SASS_ARGS, home);
    assert.equal(later.out, ref, 'later runs are right');
  });
});

describe('output size limit', () => {
  test('a cubin over the limit (a 3 GiB one, simulated with a lower limit) is a clear failure, not a crash, and is not stored', async t => {
    if (skip) return t.skip(skip);
    const { dir, req } = project();
    const cacheDir = tmpDir('big');
    const b = builder(dir, cacheDir, { maxOutputBytes: 1000 });
    const [r] = await b.buildAll([req]);
    assert.equal(r.status, 'failed');
    assert.equal(r.outputPath, null);
    const msg = r.messages.find(m => m.severity === 'error')!.message;
    assert.match(msg, /the built cubin is \d+(\.\d)? KiB, over the 1000 bytes Unroll Lens reads back/);
    assert.deepEqual(new BuildCache(cacheDir).entries(), []);
    assert.deepEqual(leftovers(cacheDir), []);
    const [again] = await builder(dir, cacheDir).buildAll([req]);
    assert.equal(again.status, 'ok', 'with the default limit the same build is fine');
  });
});

describe('size cap and eviction', () => {
  /** Sets an entry's last use (its result.json mtime) to `ageS` seconds ago: no waiting in tests. */
  function age(entryDir: string, ageS: number): void {
    const t = new Date(Date.now() - ageS * 1000);
    fs.utimesSync(path.join(entryDir, 'result.json'), t, t);
  }

  test('past the cap the least recently used entries are evicted; a use refreshes an entry; the builds in hand stay', async t => {
    if (skip) return t.skip(skip);
    const projects = ['2.0f', '3.0f', '5.0f', '7.0f'].map(project);
    const cacheDir = tmpDir('lru');
    const entryOf = (r: { hash: string; outputPath: string | null }) => entryOfResult(cacheDir, r);
    const [a, bb, c] = await Promise.all(projects.slice(0, 3).map(p => builder(p.dir, cacheDir, { cacheMaxBytes: 0 }).buildAll([p.req])));
    age(entryOf(a[0]), 300);
    age(entryOf(bb[0]), 200);
    age(entryOf(c[0]), 100);
    // A is used again: now the most recent.
    const [aHit] = await builder(projects[0].dir, cacheDir, { cacheMaxBytes: 0 }).buildAll([projects[0].req]);
    assert.equal(aHit.cached, true);
    const sizes = new BuildCache(cacheDir).entries().map(e => e.bytes);
    const total3 = sizes.reduce((x, y) => x + y, 0);
    const biggest = Math.max(...sizes);
    // Room for three entries but not four: the fourth write evicts exactly one, the oldest (B).
    const cap = total3 + biggest / 2;
    const [d] = await builder(projects[3].dir, cacheDir, { cacheMaxBytes: cap }).buildAll([projects[3].req]);
    assert.equal(d.status, 'ok');
    const left = new Set(new BuildCache(cacheDir).entries().map(e => e.dir));
    assert.equal(left.has(entryOf(bb[0])), false, 'the least recently used entry went');
    for (const kept of [a[0], c[0], d]) assert.ok(left.has(entryOf(kept)), `${entryOf(kept)} kept`);
    assert.ok(new BuildCache(cacheDir).info().bytes <= cap);
    assert.deepEqual(leftovers(cacheDir), [], 'evicted through trash/, nothing left there');
    // A cap smaller than one build: the cache empties, but never under the caller of this build.
    const tiny = builder(projects[1].dir, cacheDir, { cacheMaxBytes: 1 });
    const [b2] = await tiny.buildAll([projects[1].req]);
    assert.ok(fs.existsSync(b2.outputPath!), 'the build just handed out is not evicted');
    assert.deepEqual(
      new BuildCache(cacheDir).entries().map(e => e.dir),
      [entryOf(b2)],
    );
    // 0 = unlimited: nothing is evicted.
    const [dAgain] = await builder(projects[3].dir, cacheDir, { cacheMaxBytes: 0 }).buildAll([projects[3].req]);
    await builder(projects[0].dir, cacheDir, { cacheMaxBytes: 0 }).buildAll([projects[0].req]);
    assert.equal(new BuildCache(cacheDir).entries().length, 3, String(dAgain.outputPath));
  });
});

describe('unroll-lens cache', () => {
  test('info shows location, entries and size; clear empties the cache; a bad action is exit 2', async t => {
    if (skip) return t.skip(skip);
    const home = tmpDir('clicache');
    assert.equal((await cliAsync(SASS_ARGS, home)).code, 0);
    // one GPU measurement beside the builds, as bench leaves it
    new MeasurementCache(path.join(path.dirname(buildsOf(home)), 'measurements')).put('ab'.repeat(32), {
      groups: [],
      stdout: 'checksum=1',
    });
    const info = cliSync(['cache', 'info', '--json'], home);
    assert.equal(info.code, 0, info.err);
    const parsed = JSON.parse(info.out) as { location: string; entries: number; bytes: number };
    assert.equal(parsed.location, buildsOf(home));
    assert.ok(parsed.entries >= 4 && parsed.bytes > 10_000, info.out);
    const text = cliSync(['cache', 'info'], home);
    assert.match(
      text.out,
      new RegExp(
        `location: ${buildsOf(home).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nentries: +${parsed.entries}\nsize: +[\\d.]+ [KM]iB\nmeasurements: 1 in `,
      ),
    );
    const clear = cliSync(['cache', 'clear'], home);
    assert.equal(clear.code, 0, clear.err);
    assert.match(
      clear.out,
      new RegExp(
        `^cleared .*: ${parsed.entries} entries, [\\d.]+ [KM]iB\ncleared .*measurements: 1 measurements\ncleared .*scans: 0 analyses\n$`,
      ),
    );
    assert.equal(
      (JSON.parse(cliSync(['cache', 'info', '--json'], home).out) as { measurements: { entries: number } }).measurements.entries,
      0,
    );
    assert.equal((JSON.parse(cliSync(['cache', 'info', '--json'], home).out) as { entries: number }).entries, 0);
    assert.deepEqual(leftovers(buildsOf(home)), []);
    assert.equal(cliSync(['cache'], home).code, 2);
    assert.equal(cliSync(['cache', 'purge'], home).code, 2);
    // --cache-max-gb is checked like the setting.
    const bad = cliSync(['sass', SAMPLE, '--cache-max-gb', '-1'], home);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--cache-max-gb takes a number ≥ 0/);
  });
});

describe('leftovers of killed processes', () => {
  test("a process killed mid-build leaves its scratch folder: clear and eviction remove it; a live process's is kept", () => {
    const cacheDir = tmpDir('killed');
    const cacheJs = path.join(REPO_ROOT, 'out', 'src', 'engine', 'variants', 'cache.js');
    // A child makes a scratch folder and dies by SIGKILL: its exit handler never runs.
    const script = `const { BuildCache } = require(${JSON.stringify(cacheJs)}); new BuildCache(${JSON.stringify(cacheDir)}).scratch('ab'.repeat(32)); process.kill(process.pid, 'SIGKILL');`;
    const r = spawnSync(process.execPath, ['-e', script]);
    assert.equal(r.signal, 'SIGKILL');
    const mine = new BuildCache(cacheDir).scratch('cd'.repeat(32)).dir; // this process: alive
    assert.equal(fs.readdirSync(path.join(cacheDir, 'tmp')).length, 2);
    new BuildCache(cacheDir).clear();
    assert.deepEqual(fs.readdirSync(path.join(cacheDir, 'tmp')), [path.basename(mine)]);
    releaseScratch();
    assert.deepEqual(fs.readdirSync(path.join(cacheDir, 'tmp')), []);
  });
});
