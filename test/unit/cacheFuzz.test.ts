// Property tests of the caches (issue 23): any change to a stored result file by anyone else
// (bytes flipped, numbers edited, whitespace added, cut short, files swapped between entries) is
// a miss whose rebuild equals the fresh answer, never an answer and never an unclassified throw;
// and eviction and clear never remove a file that is not one of our entries.
//
// fast-check is not installed in this checkout (and no dependency may be added here), so a small
// seeded generator stands in: each case is drawn from its own seed; a failure names the seed and
// the case (UL_FUZZ_SEED=<seed> repeats the run).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BuildCache, releaseScratch } from '../../src/engine/variants/cache';
import { MeasurementCache, type StoredMeasurement } from '../../src/engine/profile/measurementCache';
import { fakeBuilder, fakeProject } from './cacheFakes';

const ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachefuzz-'));
process.env.XDG_CONFIG_HOME = path.join(ROOT, 'config');

const LISTING = 'nvdisasm-c-gi-0123456789abcdef.txt';
const KEYS = { a: 'a1'.repeat(32), b: 'b2'.repeat(32) };

/** Two projects whose builds, listings and measurements differ, stored once in a pristine cache. */
const projects = { a: fakeProject(ROOT, 8), b: fakeProject(ROOT, 9) };
const PRISTINE = path.join(ROOT, 'pristine');
let fresh: { ptxasLog: string; cubin: Buffer } | null = null;
/** Per project: its files in the pristine cache, relative to PRISTINE. */
const files: Record<'a' | 'b', Record<'result' | 'cubin' | 'listing' | 'check' | 'measurement', string>> = {
  a: {} as never,
  b: {} as never,
};

function measurement(base: number): StoredMeasurement {
  return {
    groups: [{ key: 'k', kernel: '_Z1kPf', blockSize: '256', durations: [base, base + 0.25, base + 0.5], last: null }],
    stdout: `sum=${base}`,
  };
}

before(async () => {
  const builds = path.join(PRISTINE, 'builds');
  for (const w of ['a', 'b'] as const) {
    const b = fakeBuilder(projects[w].dir, builds);
    const [r] = await b.buildAll([projects[w].req]);
    assert.equal(r.status, 'ok');
    if (w === 'a') fresh = { ptxasLog: r.ptxasLog, cubin: fs.readFileSync(r.outputPath!) };
    const entry = b.cache.entryOf(r.outputPath!);
    b.cache.writeSidecar(path.join(entry, LISTING), `/*0010*/ IMAD R${w === 'a' ? 1 : 2}, R2, R3 ;\n`);
    new MeasurementCache(path.join(PRISTINE, 'measurements')).put(KEYS[w], measurement(w === 'a' ? 1.5 : 2.5));
    const rel = (p: string) => path.relative(PRISTINE, p);
    files[w] = {
      result: rel(path.join(entry, 'result.json')),
      cubin: rel(path.join(entry, 'variant.cubin')),
      listing: rel(path.join(entry, LISTING)),
      check: rel(path.join(entry, `${LISTING}.sha256`)),
      measurement: path.join('measurements', KEYS[w].slice(0, 2), `${KEYS[w]}.json`),
    };
  }
  for (const k of Object.keys(files.a) as (keyof typeof files.a)[]) {
    assert.notDeepEqual(fs.readFileSync(path.join(PRISTINE, files.a[k])), fs.readFileSync(path.join(PRISTINE, files.b[k])), k);
  }
});

type Rng = () => number;

/** mulberry32: a small, good-enough PRNG for drawing cases. */
function rngOf(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const int = (r: Rng, min: number, max: number) => min + Math.floor(r() * (max - min + 1));
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[int(r, 0, xs.length - 1)];
const hex = (r: Rng, n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(r, 0, 15)]).join('');

const SEED = Number(process.env.UL_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** Runs `check` on `numRuns` cases drawn by `gen`; the first failure names its seed and case. */
async function forAll<T>(numRuns: number, gen: (r: Rng) => T, check: (v: T) => Promise<void> | void): Promise<void> {
  for (let i = 0; i < numRuns; i++) {
    const v = gen(rngOf(SEED + i));
    try {
      await check(v);
    } catch (e) {
      throw new Error(`case ${i} of seed ${SEED} (UL_FUZZ_SEED=${SEED}): ${JSON.stringify(v)}: ${(e as Error).message}`);
    }
  }
}

type Target = keyof (typeof files)['a'];
type Mutation =
  | { kind: 'flip'; at: number; xor: number }
  | { kind: 'digit'; nth: number; add: number }
  | { kind: 'truncate'; keep: number }
  | { kind: 'append'; text: string }
  | { kind: 'swap' };

function mutation(r: Rng): Mutation {
  switch (pick(r, ['flip', 'digit', 'truncate', 'append', 'swap'] as const)) {
    case 'flip':
      return { kind: 'flip', at: int(r, 0, 1e6), xor: int(r, 1, 255) };
    case 'digit':
      return { kind: 'digit', nth: int(r, 0, 1e6), add: int(r, 1, 9) };
    case 'truncate':
      return { kind: 'truncate', keep: int(r, 0, 1e6) };
    case 'append':
      return { kind: 'append', text: pick(r, ['\n', ' ', '\t', '0', '}', '{"x":1}', '   ']) };
    case 'swap':
      return { kind: 'swap' };
  }
}

/** Applies a mutation to project a's file in a copy of the cache; returns false when it cannot change the bytes. */
function mutate(work: string, target: Target, m: Mutation): void {
  const file = path.join(work, files.a[target]);
  const bytes = fs.readFileSync(file);
  let out: Buffer;
  switch (m.kind) {
    case 'flip':
      out = Buffer.from(bytes);
      out[m.at % out.length] ^= m.xor;
      break;
    case 'digit': {
      const digits = [...bytes.keys()].filter(i => bytes[i] >= 0x30 && bytes[i] <= 0x39);
      out = Buffer.from(bytes);
      if (digits.length) {
        const i = digits[m.nth % digits.length];
        out[i] = 0x30 + ((out[i] - 0x30 + m.add) % 10);
      } else out[m.nth % out.length] ^= m.add;
      break;
    }
    case 'truncate':
      out = bytes.subarray(0, m.keep % bytes.length);
      break;
    case 'append':
      out = Buffer.concat([bytes, Buffer.from(m.text)]);
      break;
    case 'swap': {
      // The same file of the other entry (and its check file with a listing): both moved over.
      const other = path.join(work, files.b[target]);
      out = fs.readFileSync(other);
      if (target === 'listing' || target === 'check') {
        const pair = target === 'listing' ? 'check' : 'listing';
        fs.copyFileSync(path.join(work, files.b[pair]), path.join(work, files.a[pair]));
      }
      break;
    }
  }
  assert.notDeepEqual(out, bytes, 'a mutation changes the file');
  fs.writeFileSync(file, out);
}

let runs = 0;
/** One working copy, restored from the pristine one after each case (copying the whole cache per case costs more than the case). */
const WORK = path.join(ROOT, 'work');

function restore(target: Target): void {
  const rel = target === 'measurement' ? files.a.measurement : path.dirname(files.a.result);
  fs.rmSync(path.join(WORK, rel), { recursive: true, force: true });
  fs.cpSync(path.join(PRISTINE, rel), path.join(WORK, rel), { recursive: true });
  releaseScratch(); // this process's leases and scratch folders, as at its exit
}

test('every mutated cache file is a miss whose rebuild is the fresh answer (2,000 cases)', async () => {
  fs.cpSync(PRISTINE, WORK, { recursive: true });
  const targets: Target[] = ['result', 'cubin', 'listing', 'check', 'measurement'];
  await forAll(
    2000,
    r => ({ target: pick(r, targets), m: mutation(r) }),
    async ({ target, m }) => {
      runs++;
      try {
        mutate(WORK, target, m);
        if (target === 'listing' || target === 'check') {
          const listing = path.join(WORK, files.a.listing);
          assert.equal(new BuildCache(path.join(WORK, 'builds')).readSidecar(listing), null);
        } else if (target === 'measurement') {
          assert.equal(new MeasurementCache(path.join(WORK, 'measurements')).get(KEYS.a), null);
        } else {
          const b = fakeBuilder(projects.a.dir, path.join(WORK, 'builds'));
          const [r] = await b.buildAll([projects.a.req]);
          assert.equal(r.cached, false, 'a miss');
          assert.equal(b.compiles, 1);
          assert.equal(r.status, 'ok');
          assert.equal(r.ptxasLog, fresh!.ptxasLog);
          assert.deepEqual(fs.readFileSync(r.outputPath!), fresh!.cubin);
          // and the rebuilt entry is an answer again
          const [again] = await fakeBuilder(projects.a.dir, path.join(WORK, 'builds')).buildAll([projects.a.req]);
          assert.equal(again.cached, true, 'the rebuilt entry is stored');
        }
      } finally {
        restore(target);
      }
    },
  );
  assert.equal(runs, 2000);
});

test('the untouched copies are answers (the property above is not vacuous)', async () => {
  const work = path.join(ROOT, 'untouched');
  fs.cpSync(PRISTINE, work, { recursive: true });
  const b = fakeBuilder(projects.a.dir, path.join(work, 'builds'));
  const [r] = await b.buildAll([projects.a.req]);
  assert.equal(r.cached, true);
  assert.equal(b.compiles, 0);
  assert.equal(new BuildCache(path.join(work, 'builds')).readSidecar(path.join(work, files.a.listing)), '/*0010*/ IMAD R1, R2, R3 ;\n');
  assert.deepEqual(new MeasurementCache(path.join(work, 'measurements')).get(KEYS.a), measurement(1.5));
});

/** A file of the user's: a name anywhere outside our entries, in any folder of the cache. */
function userFile(r: Rng): { where: string; name: string } {
  const where = pick(r, ['', 'shard', 'key', 'tmp', 'trash', 'measurements', 'measurements/shard']);
  const plain = () =>
    Array.from({ length: int(r, 1, 20) }, () => 'ABCXYZabcxyz0189._-'[int(r, 0, 18)])
      .join('')
      .replace(/^\.+$/, 'dots');
  const name = pick(r, [
    () => hex(r, 2),
    () => hex(r, 16),
    () => hex(r, 64),
    () => `${hex(r, 64)}.json`,
    () => `${hex(r, 16)}.${pick(r, ['tmp', 'lease'])}-${int(r, 1, 9_999_999)}-${hex(r, 8)}-${hex(r, 8)}`,
    plain,
  ])();
  return { where, name };
}

test('eviction and clear never remove a file that is not one of our entries (200 cases)', async () => {
  await forAll(
    200,
    r => ({ placed: Array.from({ length: int(r, 1, 6) }, () => userFile(r)), evict: r() < 0.5 }),
    async ({ placed, evict }) => {
      const work = path.join(ROOT, `e${runs++}`);
      releaseScratch();
      fs.cpSync(PRISTINE, work, { recursive: true });
      try {
        const builds = path.join(work, 'builds');
        const shard = path.join(builds, path.dirname(path.dirname(files.a.result)).split(path.sep)[1]);
        const keyDir = path.dirname(path.join(work, files.a.result)).replace(/\/[0-9a-f]{16}$/, '');
        const folders: Record<string, string> = {
          '': builds,
          shard,
          key: keyDir,
          tmp: path.join(builds, 'tmp'),
          trash: path.join(builds, 'trash'),
          measurements: path.join(work, 'measurements'),
          'measurements/shard': path.join(work, 'measurements', KEYS.a.slice(0, 2)),
        };
        const mine: string[] = [];
        for (const { where, name } of placed) {
          const f = path.join(folders[where], name);
          if (fs.existsSync(f) || name === '.unroll-lens-cache') continue;
          fs.mkdirSync(path.dirname(f), { recursive: true });
          fs.writeFileSync(f, `user ${name}`);
          mine.push(f);
        }
        if (evict)
          await fakeBuilder(projects.b.dir, builds, 1).buildAll([{ ...projects.b.req, source: `${projects.b.req.source}// v2\n` }]);
        else {
          new BuildCache(builds).clear();
          new MeasurementCache(path.join(work, 'measurements')).clear();
        }
        for (const f of mine) assert.equal(fs.readFileSync(f, 'utf8'), `user ${path.basename(f)}`, f);
      } finally {
        fs.rmSync(work, { recursive: true, force: true });
      }
    },
  );
});
