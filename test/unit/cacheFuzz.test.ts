// Property tests of the caches (issue 23): any change to a stored result file by anyone else
// (bytes flipped, numbers edited, whitespace added, cut short, files swapped between entries) is
// a miss whose rebuild equals the fresh answer, never an answer and never an unclassified throw;
// and eviction and clear never remove a file that is not one of our entries.
//
// fast-check draws the cases; a failure prints the seed, the path and the shrunk case
// (UNROLL_LENS_SEED=<seed>, or the older UL_FUZZ_SEED, repeats the run).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BuildCache, releaseScratch } from '../../src/engine/variants/cache';
import { MeasurementCache, type StoredMeasurement } from '../../src/engine/gpu/measurementCache';
import fc from 'fast-check';
import { fakeBuilder, fakeProject } from './cacheFakes';
import { propertyRuns } from './propertyRuns';

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

/** Each property runs in seconds; the budget bounds a slow disk and shrinking. */
const params = (numRuns: number, seed: number) => propertyRuns(numRuns, seed, 120_000, 'UL_FUZZ_SEED');
const int = (min: number, max: number) => fc.integer({ min, max });
const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });

type Target = keyof (typeof files)['a'];
type Mutation =
  | { kind: 'flip'; at: number; xor: number }
  | { kind: 'digit'; nth: number; add: number }
  | { kind: 'truncate'; keep: number }
  | { kind: 'append'; text: string }
  | { kind: 'swap' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: int(0, 1e6), xor: int(1, 255) }),
  fc.record({ kind: fc.constant('digit' as const), nth: int(0, 1e6), add: int(1, 9) }),
  fc.record({ kind: fc.constant('truncate' as const), keep: int(0, 1e6) }),
  fc.record({ kind: fc.constant('append' as const), text: fc.constantFrom('\n', ' ', '\t', '0', '}', '{"x":1}', '   ') }),
  fc.constant({ kind: 'swap' as const }),
);

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
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...targets), mutation, async (target, m) => {
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
    }),
    params(2000, 0xcac4e),
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
const userFile: fc.Arbitrary<{ where: string; name: string }> = fc.record({
  where: fc.constantFrom('', 'shard', 'key', 'tmp', 'trash', 'measurements', 'measurements/shard'),
  name: fc.oneof(
    hex(2),
    hex(16),
    hex(64),
    hex(64).map(h => `${h}.json`),
    fc
      .tuple(hex(16), fc.constantFrom('tmp', 'lease'), int(1, 9_999_999), hex(8), hex(8))
      .map(([a, kind, pid, b, c]) => `${a}.${kind}-${pid}-${b}-${c}`),
    fc.string({ unit: fc.constantFrom(...'ABCXYZabcxyz0189._-'), minLength: 1, maxLength: 20 }).map(s => s.replace(/^\.+$/, 'dots')),
  ),
});

test('eviction and clear never remove a file that is not one of our entries (200 cases)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(userFile, { minLength: 1, maxLength: 6 }), fc.boolean(), async (placed, evict) => {
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
    }),
    params(200, 0xe71c7),
  );
});
