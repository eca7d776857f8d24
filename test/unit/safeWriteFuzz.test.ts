// Issue 23, property: random trees of folders, files and links (inside the root, outside it, to
// the root's parent, dangling, looping) and random targets (relative, absolute, `..`, through
// links). A safe write either lands inside the root's real path with exactly the bytes given, or
// is refused with a SafeWriteError; nothing outside the root changes and no temp file is left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SafeWriteError, safeMkdir, safeWriteFile } from '../../src/engine/safeWrite';

const NAMES = ['a', 'b', 'c', '.unroll-lens', 'results'];
type Where = 'root' | 'outside';
type Entry = { kind: 'dir' | 'file'; where: Where; path: string[] } | { kind: 'link'; where: Where; path: string[]; to: LinkTarget };
type LinkTarget =
  { abs: Where | 'top' | 'root-real'; path: string[] } | { rel: string[] } /* relative, may climb with '..' */ | { loop: true };

/** mulberry32: a small seeded generator, so a failing case is found again from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Case {
  entries: Entry[];
  target: { base: string; segs: string[] };
  mode: 'replace' | 'keep' | 'mkdir';
  rootViaLink: boolean;
}

function randomCase(r: () => number): Case {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const list = <T>(min: number, max: number, one: () => T): T[] => Array.from({ length: min + Math.floor(r() * (max - min + 1)) }, one);
  const segs = (min: number, max: number, from: readonly string[]) => list(min, max, () => pick(from));
  const where = (): Where => pick(['root', 'outside'] as const);
  const linkTarget = (): LinkTarget => {
    const k = r();
    if (k < 0.45) return { abs: pick(['root', 'outside', 'top', 'root-real'] as const), path: segs(0, 2, NAMES) };
    if (k < 0.9) return { rel: segs(1, 4, ['..', '..', ...NAMES, 'outside', 'root']) };
    return { loop: true };
  };
  const entry = (): Entry =>
    r() < 0.6
      ? { kind: pick(['dir', 'file'] as const), where: where(), path: segs(1, 3, NAMES) }
      : { kind: 'link', where: where(), path: segs(1, 3, NAMES), to: linkTarget() };
  return {
    entries: list(0, 8, entry),
    target: {
      base: pick(['relative', 'relative', 'root', 'root-real', 'outside', 'top', 'slash']),
      segs: segs(1, 5, ['..', '.', ...NAMES, 'new.json']),
    },
    mode: pick(['replace', 'keep', 'mkdir'] as const),
    rootViaLink: r() < 0.3,
  };
}

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

/** fast-check is not installed in this checkout (not in package.json): a seeded generator drives the cases. */
const RUNS = 3000;

test('safeWriteFile / safeMkdir: lands inside the root or is refused; nothing outside changes (property, 3,000 trees)', () => {
  const scratch = fs.mkdtempSync(path.join(memoryTmp(), 'ul-safewrite-fuzz-'));
  let run = 0;
  try {
    const seed = Number(process.env.PROPERTY_SEED ?? 23);
    const r = rng(seed);
    const outcomes = { written: 0, refused: 0 };
    for (let i = 0; i < RUNS; i++) {
      const c = randomCase(r);
      try {
        outcomes[checkOne(path.join(scratch, String(run++)), c)]++;
      } catch (e) {
        throw new Error(`case ${i} of seed ${seed} failed: ${JSON.stringify(c)}\n${(e as Error).message}`);
      }
    }
    // Both sides of the property are exercised: a generator that only ever produced refusals would prove nothing.
    if (process.env.PROPERTY_VERBOSE) console.log(outcomes);
    assert.ok(outcomes.written > RUNS / 10 && outcomes.refused > RUNS / 10, JSON.stringify(outcomes));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
