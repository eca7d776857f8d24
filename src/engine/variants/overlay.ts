// A loop in a header has no SASS of its own: its variant is built by compiling a translation unit
// (a .cu file that includes the header) with the header replaced by the variant text. The
// replacement goes through an overlay directory O, never through the user's files, and it must be
// what every include of the header in the unit reads, exactly once: sibling headers that include
// it by `#include "x.cuh"` from their own folder (ggml's layout) would otherwise read the original
// too, and `#pragma once` cannot tell the two apart.
//
//  - The common root R of the unit's folder, the header's folder and every -I folder under which
//    the header lies is shadowed in O: the "spine" (those folders and the folders between them and
//    R) are real folders in O; in them the unit is a byte-exact copy, the header is the variant and
//    every other file is a link to the original (a copy where links cannot be made). Sub-folders
//    off the spine are mirrored the same way while a budget of entries lasts, then linked whole.
//    A quoted include searches the including file's folder as named, so every header reached
//    through O resolves its own `"…"` includes inside O, and reaches the variant, never the original.
//  - For each -I/-isystem folder D under R, `-I O/rel(R, D)` goes right before it; for a folder
//    holding the header through a link, before it the overlay's place of the header's folder.
//
// Whether it worked is checked after the build, from nvcc's -MD list: the overlay copy of the
// header must be there and the original must not (see verifyOverlay). Files read through O are
// mapped back to their originals for the cache's dependency list and for messages
// (originalOf). Nothing here runs a program, and nothing is written outside O.
import * as fs from 'fs';
import * as path from 'path';
import { realOrResolved } from '../toolchain/flags';

/** Source and header extensions: a header is compiled only through a translation unit. */
const HEADER_FILE = /\.(h|hh|hpp|hxx|cuh|inl|inc|ipp|tcc)$/i;

export function isHeaderFile(file: string): boolean {
  return HEADER_FILE.test(file.replace(/[?#].*$/, ''));
}

export interface OverlayLayout {
  /** Shadowed root: the common ancestor of the unit's folder, the header's folder and the -I folders holding it. */
  root: string;
  /** Where the unit's copy goes, relative to the overlay. */
  unitRel: string;
  /** Where the variant goes, relative to the overlay. */
  headerRel: string;
  /** Include-path folders (absolute, as the flags name them) shadowed in the overlay, with their place there. */
  includeDirs: { dir: string; rel: string }[];
  /** Folders (relative to the root, '' for the root itself) made real folders in the overlay, parents first. */
  spine: string[];
}

function within(p: string, root: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function commonAncestor(dirs: string[]): string {
  let root = dirs[0];
  for (const d of dirs.slice(1)) while (!within(d, root)) root = path.dirname(root);
  return root;
}

/** The include-path folders in compile args: `-I<dir>`, `-I <dir>`, `-isystem <dir>` (absolute only: flags.ts makes them so). */
function includeDirsOf(args: string[]): { index: number; dir: string; kind: '-I' | '-isystem'; glued: boolean }[] {
  const out: { index: number; dir: string; kind: '-I' | '-isystem'; glued: boolean }[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === '-I' || a === '-isystem') && i + 1 < args.length) {
      out.push({ index: i, dir: args[i + 1], kind: a, glued: false });
      i++;
    } else if (a.startsWith('-I') && a.length > 2) out.push({ index: i, dir: a.slice(2), kind: '-I', glued: true });
  }
  return out.filter(d => path.isAbsolute(d.dir));
}

/** Plans the overlay for compiling `unit` with `header` replaced (both absolute paths). */
export function planOverlay(unit: string, header: string, args: string[]): OverlayLayout {
  const t = path.resolve(unit);
  const h = path.resolve(header);
  const realH = realOrResolved(h);
  const dirs = includeDirsOf(args)
    .map(d => d.dir)
    .filter((d, i, all) => all.indexOf(d) === i);
  const holding = dirs
    .filter(d => within(h, d) || within(realH, realOrResolved(d)))
    // A folder holding the header through a symlink is mirrored by where the header lies under it.
    .map(d => ({ dir: d, rel: within(h, d) ? path.relative(d, h) : path.relative(realOrResolved(d), realH) }));
  const root = commonAncestor([path.dirname(t), path.dirname(h), ...holding.filter(d => within(h, d.dir)).map(d => d.dir)]);
  const headerRel = path.relative(root, h);
  const includeDirs: OverlayLayout['includeDirs'] = [];
  for (const d of holding) {
    if (within(d.dir, root)) continue; // added below with every folder under the root
    // The variant must sit under O/rel as the header sits under D: rel is the header's place in
    // the overlay without its path below D.
    const below = d.rel.split(path.sep);
    const parts = headerRel.split(path.sep);
    if (parts.length < below.length || parts.slice(parts.length - below.length).join(path.sep) !== d.rel) continue;
    includeDirs.push({ dir: d.dir, rel: parts.slice(0, parts.length - below.length).join(path.sep) });
  }
  // Every include folder under the root reads its files through the overlay: a `<x.cuh>` found
  // there includes its siblings as `"…"` from the overlay too.
  for (const d of dirs) if (within(path.resolve(d), root)) includeDirs.push({ dir: d, rel: path.relative(root, path.resolve(d)) });
  const spine = new Set<string>(['']);
  for (const d of [path.dirname(t), path.dirname(h), ...includeDirs.map(x => path.join(root, x.rel))]) {
    let rel = path.relative(root, d);
    while (rel && !spine.has(rel)) {
      spine.add(rel);
      rel = path.dirname(rel) === '.' ? '' : path.dirname(rel);
    }
  }
  const ordered = [...spine].sort((a, b) => a.split(path.sep).length - b.split(path.sep).length || a.localeCompare(b));
  return { root, unitRel: path.relative(root, t), headerRel, includeDirs, spine: ordered.map(x => (x === '' ? '' : x)) };
}

/**
 * The compile args with the overlay's include folders: `-I O/rel` (or `-isystem O/rel`) right
 * before each folder the overlay shadows.
 */
export function overlayArgs(layout: OverlayLayout, overlayDir: string, args: string[]): string[] {
  const before = new Map<number, string[]>();
  for (const d of includeDirsOf(args)) {
    const hit = layout.includeDirs.find(x => x.dir === d.dir);
    if (!hit) continue;
    const o = path.join(overlayDir, hit.rel);
    before.set(d.index, d.kind === '-isystem' ? ['-isystem', o] : [`-I${o}`]);
  }
  const out: string[] = [];
  args.forEach((a, i) => out.push(...(before.get(i) ?? []), a));
  return out;
}

/** Entries of sub-folders off the spine mirrored one by one before the rest are linked whole. */
const MIRROR_BUDGET = 5000;

/** Folders never walked into (linked whole): version control and package folders. */
const LINK_WHOLE = /^(\.git|\.hg|\.svn|node_modules)$/;

/** A link at `at` to `target` (a copy of a file where links cannot be made); false when neither could be made. */
function linkTo(target: string, at: string, isDir: boolean): boolean {
  try {
    fs.symlinkSync(target, at, isDir && process.platform === 'win32' ? 'junction' : isDir ? 'dir' : 'file');
    return true;
  } catch {
    if (isDir) return false;
    try {
      fs.copyFileSync(target, at);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Writes the overlay: the spine's folders, the unit's byte-exact copy, the variant, and every
 * other entry of the shadowed folders as a link to the original. Returns the unit copy's path.
 * Only creates inside `overlayDir`, which must be new: a link is never written through.
 */
export function writeOverlay(layout: OverlayLayout, overlayDir: string, unitBytes: Buffer, variantText: string | Buffer): string {
  for (const rel of layout.spine) fs.mkdirSync(path.join(overlayDir, rel), { recursive: true });
  const unitCopy = path.join(overlayDir, layout.unitRel);
  const headerCopy = path.join(overlayDir, layout.headerRel);
  fs.writeFileSync(unitCopy, unitBytes);
  fs.writeFileSync(headerCopy, variantText);
  const spine = new Set(layout.spine);
  // Shadowing the filesystem's root itself (a unit and a header with nothing else in common):
  // only the spine is mirrored, /proc and the like are linked whole.
  let budget = path.dirname(layout.root) === layout.root ? 0 : MIRROR_BUDGET;
  const queue = [...layout.spine];
  while (queue.length) {
    const rel = queue.shift()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(layout.root, rel), { withFileTypes: true });
    } catch {
      continue; // unreadable: its files cannot be included from the original either
    }
    for (const e of entries) {
      const childRel = path.join(rel, e.name);
      const at = path.join(overlayDir, childRel);
      const original = path.join(layout.root, childRel);
      if (spine.has(childRel) || childRel === layout.unitRel || childRel === layout.headerRel) continue;
      // A folder holding the overlay itself (our cache inside the project): mirrored, it would be
      // copied into itself without end; linked whole instead.
      const holdsOverlay = within(overlayDir, original);
      if (e.isDirectory() && !LINK_WHOLE.test(e.name) && budget > 0 && !holdsOverlay) {
        // Mirrored as a real folder, so that `"../x.cuh"` from inside it stays in the overlay.
        budget--;
        fs.mkdirSync(at);
        queue.push(childRel);
        continue;
      }
      budget--;
      linkTo(original, at, e.isDirectory() || (e.isSymbolicLink() && isDirectory(original)));
    }
  }
  return unitCopy;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The file a path read through the overlay stands for: the unit for its copy, the header for the
 * variant, the original for a linked file; a path outside the overlay as it is.
 */
export function originalOf(p: string, layout: OverlayLayout, overlayDir: string, unit: string, header: string): string {
  const rel = path.relative(overlayDir, p);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return p;
  if (rel === layout.unitRel) return path.resolve(unit);
  if (rel === layout.headerRel) return path.resolve(header);
  return path.join(layout.root, rel);
}

/**
 * Did the variant replace the header? From the files nvcc read (-MD): null when it did, else why
 * not, in words for the user. The original must be absent (else its code, or both, went into the
 * cubin) and the overlay copy present (else the unit does not include the header at all).
 */
export function verifyOverlay(deps: string[], layout: OverlayLayout, overlayDir: string, unit: string, header: string): string | null {
  const real = new Set(deps.map(realOrResolved));
  const original = realOrResolved(header);
  const copy = realOrResolved(path.join(overlayDir, layout.headerRel));
  if (real.has(original)) {
    const how = real.has(copy)
      ? 'both the variant and the original were read (a second include path, or a `<…>` include through a folder the overlay does not mirror)'
      : 'nvcc read the original, not the variant';
    return `${unit} includes ${header} through a path the overlay cannot shadow: ${how}. Its SASS would not be the variant's, so none is reported.`;
  }
  if (!real.has(copy))
    return `the translation unit ${unit} does not include ${header} (nvcc's dependency list does not name it): choose a translation unit that includes it`;
  return null;
}
