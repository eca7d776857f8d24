// Issue 23, property: random trees of folders, files and links (inside the root, outside it, to
// the root's parent, dangling, looping) and random targets (relative, absolute, `..`, through
// links). A safe write either lands inside the root's real path with exactly the bytes given, or
// is refused with a SafeWriteError; nothing outside the root changes and no temp file is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import fc from 'fast-check';
import { SafeWriteError, safeMkdir, safeWriteFile } from '../../src/engine/base/safeWrite';
import { propertyRuns } from './propertyRuns';

const NAMES = ['a', 'b', 'c', '.unroll-lens', 'results'];
type Where = 'root' | 'outside';
type Entry = { kind: 'dir' | 'file'; where: Where; path: string[] } | { kind: 'link'; where: Where; path: string[]; to: LinkTarget };
type LinkTarget =
  { abs: Where | 'top' | 'root-real'; path: string[] } | { rel: string[] } /* relative, may climb with '..' */ | { loop: true };

interface Case {
  entries: Entry[];
  target: { base: string; segs: string[] };
  mode: 'replace' | 'keep' | 'mkdir';
  rootViaLink: boolean;
}

const segs = (minLength: number, maxLength: number, from: readonly string[]) =>
  fc.array(fc.constantFrom(...from), { minLength, maxLength });
const where: fc.Arbitrary<Where> = fc.constantFrom('root', 'outside');
/** Weighted choice: `p` of the time `a`, else `b` (weights in tenths). */
const sometimes = <T>(tenths: number, a: fc.Arbitrary<T>, b: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ arbitrary: a, weight: tenths }, { arbitrary: b, weight: 10 - tenths });
const linkTarget: fc.Arbitrary<LinkTarget> = fc.oneof(
  { arbitrary: fc.record({ abs: fc.constantFrom('root', 'outside', 'top', 'root-real'), path: segs(0, 2, NAMES) }), weight: 9 },
  { arbitrary: fc.record({ rel: segs(1, 4, ['..', '..', ...NAMES, 'outside', 'root']) }), weight: 9 },
  { arbitrary: fc.constant({ loop: true as const }), weight: 2 },
);
const entry: fc.Arbitrary<Entry> = sometimes<Entry>(
  6,
  fc.record({ kind: fc.constantFrom('dir', 'file'), where, path: segs(1, 3, NAMES) }),
  fc.record({ kind: fc.constant('link'), where, path: segs(1, 3, NAMES), to: linkTarget }),
);
const randomCase: fc.Arbitrary<Case> = fc.record({
  entries: fc.array(entry, { maxLength: 8 }),
  target: fc.record({
    base: fc.constantFrom('relative', 'relative', 'root', 'root-real', 'outside', 'top', 'slash'),
    segs: segs(1, 5, ['..', '.', ...NAMES, 'new.json']),
  }),
  mode: fc.constantFrom('replace', 'keep', 'mkdir'),
  rootViaLink: sometimes(3, fc.constant(true), fc.constant(false)),
});

/** Every path under `dir` (not following links) with what it is and holds. */
function snapshot(dir: string, skip: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (p === skip) continue;
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) out.push(`${p} -> ${fs.readlinkSync(p)}`);
      else if (st.isDirectory()) {
        out.push(`${p}/`);
        walk(p);
      } else out.push(`${p}: ${fs.readFileSync(p, 'utf8')}`);
    }
  };
  walk(dir);
  return out;
}

function build(top: string, entries: Entry[]): void {
  const base = { root: path.join(top, 'root'), outside: path.join(top, 'outside') };
  for (const e of entries) {
    const p = path.join(base[e.where], ...e.path);
    try {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      if (e.kind === 'dir') fs.mkdirSync(p);
      else if (e.kind === 'file') fs.writeFileSync(p, `original ${e.path.join('/')}`);
      else if (e.kind === 'link') {
        const to = e.to;
        const dest =
          'loop' in to
            ? p
            : 'rel' in to
              ? path.join(...to.rel)
              : path.join(to.abs === 'top' ? top : to.abs === 'root-real' ? base.root : base[to.abs as Where], ...to.path);
        fs.symlinkSync(dest, p);
      }
    } catch {
      // A tree the generator cannot build (a file where a folder goes): the rest still is.
    }
  }
}

/** A RAM-backed temp folder where there is one: thousands of tiny trees on a slow disk take minutes. */
function memoryTmp(): string {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    if (fs.statSync('/dev/shm').isDirectory()) return '/dev/shm';
  } catch {
    /* not Linux, or no tmpfs: the ordinary temp folder */
  }
  return os.tmpdir();
}

/** One tree, one write: the property's assertions. */
function checkOne(top: string, c: Case): 'written' | 'refused' {
  fs.mkdirSync(path.join(top, 'root'), { recursive: true });
  fs.mkdirSync(path.join(top, 'outside'));
  fs.writeFileSync(path.join(top, 'outside', 'canary'), 'canary');
  fs.writeFileSync(path.join(top, 'canary'), 'canary');
  build(top, c.entries);
  const realRootDir = fs.realpathSync(path.join(top, 'root'));
  // The root as the user names it: the folder, or a link to it (a workspace opened through a link).
  let root = path.join(top, 'root');
  if (c.rootViaLink) {
    root = path.join(top, 'rootlink');
    fs.symlinkSync(realRootDir, root);
  }
  const before = snapshot(top, realRootDir);
  const baseOf: Record<string, string> = {
    root,
    'root-real': realRootDir,
    outside: path.join(top, 'outside'),
    top,
    slash: path.parse(top).root,
  };
  const rel = c.target.segs.join('/');
  const targetPath = c.target.base === 'relative' ? rel : path.join(baseOf[c.target.base], rel);
  const data = `written ${top}`;
  let outcome: 'written' | 'refused' = 'refused';
  try {
    if (c.mode === 'mkdir') {
      const made = safeMkdir(root, targetPath);
      const real = fs.realpathSync(made);
      assert.ok(real === realRootDir || real.startsWith(realRootDir + path.sep), `${made} is outside ${realRootDir}`);
      assert.ok(fs.statSync(made).isDirectory());
    } else {
      // No fsync: durability is not what this property is about, and 3,000 fsyncs take minutes.
      const file = safeWriteFile(root, targetPath, data, { existing: c.mode, fsync: false });
      const real = fs.realpathSync(file);
      assert.ok(real.startsWith(realRootDir + path.sep), `${file} (${real}) is outside ${realRootDir}`);
      assert.equal(fs.readFileSync(file, 'utf8'), data);
    }
    outcome = 'written';
  } catch (e) {
    if (!(e instanceof SafeWriteError)) throw new Error(`unclassified error for ${JSON.stringify(targetPath)}: ${(e as Error).stack}`);
    assert.ok(e.message.length > 0);
  }
  assert.deepEqual(snapshot(top, realRootDir), before, `something outside ${realRootDir} changed writing ${JSON.stringify(targetPath)}`);
  assert.deepEqual(
    snapshot(realRootDir, '').filter(l => /\.tmp\b/.test(l)),
    [],
    'a temp file was left behind',
  );
  fs.rmSync(top, { recursive: true, force: true });
  return outcome;
}

const RUNS = 3000;

test('safeWriteFile / safeMkdir: lands inside the root or is refused; nothing outside changes (property, 3,000 trees)', () => {
  const scratch = fs.mkdtempSync(path.join(memoryTmp(), 'ul-safewrite-fuzz-'));
  let run = 0;
  try {
    const outcomes = { written: 0, refused: 0 };
    fc.assert(
      fc.property(randomCase, c => {
        outcomes[checkOne(path.join(scratch, String(run++)), c)]++;
      }),
      // 3,000 trees take a few seconds on tmpfs; the budget bounds a slow disk and shrinking.
      propertyRuns(RUNS, 23, 120_000, 'PROPERTY_SEED'),
    );
    // Both sides of the property are exercised: a generator that only ever produced refusals would prove nothing.
    if (process.env.PROPERTY_VERBOSE) console.log(outcomes);
    assert.ok(outcomes.written > RUNS / 10 && outcomes.refused > RUNS / 10, JSON.stringify(outcomes));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
