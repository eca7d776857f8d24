// A loop in a header has no SASS of its own: its variant is built by compiling a translation unit
// (a .cu file that includes the header) with the header replaced by the variant text. The
// replacement goes through an overlay directory O, never through the user's files:
//
//  - `#include "…"` is looked up first in the includer's own directory, so a `-I O` alone cannot
//    shadow a header the translation unit includes relatively. The common root R of the unit's
//    folder, the header's folder and every -I folder holding the header is mirrored into O: a
//    byte-exact copy of the unit goes to O/rel(R, T) and the variant to O/rel(R, H), so `"x.cuh"`,
//    `"sub/x.cuh"` and `"../include/x.cuh"` from the copy reach the variant.
//  - For a header reached through an include path D (`-I D`, `-isystem D`) holding it,
//    `-I O/rel(R, D)` goes right before D.
//  - The unit's and the header's own folders are added as quote-only directories (gcc's -iquote,
//    through -Xcompiler: nvcc has no option of its own), so their other `#include "…"` still
//    resolve as they did from the originals, without changing where `<…>` includes are found.
//
// Whether it worked is checked after the build, from nvcc's -MD list: the overlay copy of the
// header must be there and the original must not (see verifyOverlay). Nothing here runs a program.
import * as fs from 'fs';
import * as path from 'path';
import { realOrResolved } from '../toolchain/flags';

/** Source and header extensions: a header is compiled only through a translation unit. */
const HEADER_FILE = /\.(h|hh|hpp|hxx|cuh|inl|inc|ipp|tcc)$/i;

export function isHeaderFile(file: string): boolean {
  return HEADER_FILE.test(file.replace(/[?#].*$/, ''));
}

export interface OverlayLayout {
  /** Mirrored root: the common ancestor of the unit's folder, the header's folder and the -I folders holding it. */
  root: string;
  /** Where the unit's copy goes, relative to the overlay. */
  unitRel: string;
  /** Where the variant goes, relative to the overlay. */
  headerRel: string;
  /** Include-path folders (absolute, as the flags name them) that hold the header, with their place in the overlay. */
  includeDirs: { dir: string; rel: string }[];
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
  const holding = includeDirsOf(args)
    .map(d => d.dir)
    .filter((d, i, all) => all.indexOf(d) === i && (within(h, d) || within(realH, realOrResolved(d))))
    // A folder holding the header through a symlink is mirrored by where the header lies under it.
    .map(d => ({ dir: d, rel: within(h, d) ? path.relative(d, h) : path.relative(realOrResolved(d), realH) }));
  const root = commonAncestor([path.dirname(t), path.dirname(h), ...holding.filter(d => within(h, d.dir)).map(d => d.dir)]);
  const headerRel = path.relative(root, h);
  const includeDirs: OverlayLayout['includeDirs'] = [];
  for (const d of holding) {
    // The variant must sit under O/rel as the header sits under D: rel is the header's place in
    // the overlay without its path below D (equal to rel(R, D) when D lies under R).
    const below = d.rel.split(path.sep);
    const parts = headerRel.split(path.sep);
    if (parts.length < below.length || parts.slice(parts.length - below.length).join(path.sep) !== d.rel) continue;
    includeDirs.push({ dir: d.dir, rel: parts.slice(0, parts.length - below.length).join(path.sep) });
  }
  return { root, unitRel: path.relative(root, t), headerRel, includeDirs };
}

/**
 * The compile args with the overlay's include folders: `-I O/rel` right before each folder that
 * holds the header, and quote-only folders for the unit's and the header's original places.
 */
export function overlayArgs(layout: OverlayLayout, overlayDir: string, args: string[], unit: string, header: string): string[] {
  const before = new Map<number, string[]>();
  for (const d of includeDirsOf(args)) {
    const hit = layout.includeDirs.find(x => x.dir === d.dir);
    if (!hit) continue;
    const o = path.join(overlayDir, hit.rel);
    before.set(d.index, d.kind === '-isystem' ? ['-isystem', o] : [`-I${o}`]);
  }
  const out: string[] = [];
  args.forEach((a, i) => out.push(...(before.get(i) ?? []), a));
  // Quote-only folders are searched before any -I: the variant's own overlay folder comes first,
  // or the header's original folder (there for the header's own relative includes) would win
  // over `-I O/…` for a `"x.cuh"` found through an include path.
  const quoteDirs = [
    path.join(overlayDir, path.dirname(layout.headerRel)),
    path.dirname(path.resolve(unit)),
    path.dirname(path.resolve(header)),
  ];
  for (const dir of [...new Set(quoteDirs)]) {
    // -Xcompiler splits its value at commas: a folder with one goes on the ordinary include path.
    if (dir.includes(',')) out.push('-I', dir);
    else out.push('-Xcompiler', `-iquote,${dir}`);
  }
  return out;
}

/** Writes the unit's byte-exact copy and the variant into the overlay; returns the copy's path. */
export function writeOverlay(layout: OverlayLayout, overlayDir: string, unitBytes: Buffer, variantText: string | Buffer): string {
  const unitCopy = path.join(overlayDir, layout.unitRel);
  const headerCopy = path.join(overlayDir, layout.headerRel);
  fs.mkdirSync(path.dirname(unitCopy), { recursive: true });
  fs.mkdirSync(path.dirname(headerCopy), { recursive: true });
  fs.writeFileSync(unitCopy, unitBytes);
  fs.writeFileSync(headerCopy, variantText);
  return unitCopy;
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
