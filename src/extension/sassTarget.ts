// What a SASS listing document shows, and the mapping between its lines and source lines.
// Pure (no `vscode` import) so unit tests check it: the `unroll-lens-sass:` URI carries the
// request in its query; its path is only what the tab and the diff editor's title show.
import type { SassListingResult } from '../protocol';

/** One variant's listing: the loop (its source file and keyword line), factor, arch, normalised or raw. */
export interface SassTarget {
  /** The source document's URI (file:…). */
  uri: string;
  /** 1-based line of the loop keyword. */
  line: number;
  /** as-written when absent. */
  factor?: string;
  /** The variant builds' arch when absent. */
  arch?: string;
  normalise?: boolean;
}

/** The file extension of listing paths (contributed to the unroll-lens-sass language only). */
export const SASS_EXTENSION = '.cusass';

const FACTOR_RE = /^(as-written|default|full|[1-9][0-9]*)$/;
const ARCH_RE = /^sm_[0-9]+[af]?$/;

/** The query string of a listing URI. Fields absent from the target stay absent. */
export function encodeSassQuery(t: SassTarget): string {
  const q = new URLSearchParams();
  q.set('uri', t.uri);
  q.set('line', String(t.line));
  if (t.factor !== undefined) q.set('factor', t.factor);
  if (t.arch !== undefined) q.set('arch', t.arch);
  if (t.normalise) q.set('normalise', '1');
  return q.toString();
}

/** The target a listing URI's query names; throws on a query that names none (a hand-typed URI). */
export function decodeSassQuery(query: string): SassTarget {
  const q = new URLSearchParams(query);
  const uri = q.get('uri');
  const line = Number(q.get('line'));
  if (!uri) throw new Error('not an Unroll Lens SASS listing: the URI names no source file');
  if (!Number.isInteger(line) || line < 1) throw new Error(`not an Unroll Lens SASS listing: bad line "${q.get('line')}"`);
  const t: SassTarget = { uri, line };
  const factor = q.get('factor');
  if (factor !== null) {
    if (!FACTOR_RE.test(factor)) throw new Error(`not an Unroll Lens SASS listing: bad factor "${factor}"`);
    t.factor = factor;
  }
  const arch = q.get('arch');
  if (arch !== null) {
    if (!ARCH_RE.test(arch)) throw new Error(`not an Unroll Lens SASS listing: bad arch "${arch}"`);
    t.arch = arch;
  }
  if (q.get('normalise') === '1') t.normalise = true;
  return t;
}

/** Label of a factor as the listing header and the quick picks write it. */
export function factorLabel(factor: string | undefined): string {
  const f = factor ?? 'as-written';
  return /^[0-9]+$/.test(f) ? `unroll ${f}` : f;
}

/**
 * The listing's path: `/<source file> line <N> · <factor>[ · <arch>][ · normalised].cusass`,
 * readable in the tab and the diff editor's title; the query carries the request.
 */
export function sassPath(t: SassTarget): string {
  const base = decodeURIComponent(
    t.uri
      .replace(/[?#].*$/, '')
      .replace(/\/+$/, '')
      .split('/')
      .pop() ?? 'kernel',
  );
  const parts = [`${base} line ${t.line}`, factorLabel(t.factor)];
  if (t.arch) parts.push(t.arch);
  if (t.normalise) parts.push('normalised');
  // A '/' in a part (none expected) would make a folder of the path.
  return `/${parts.join(' · ').replace(/\//g, '∕')}${SASS_EXTENSION}`;
}

/** The same listing with a different factor, arch or normalisation. */
export function withVariant(t: SassTarget, v: { factor?: string; arch?: string; normalise?: boolean }): SassTarget {
  const out: SassTarget = { uri: t.uri, line: t.line };
  const factor = 'factor' in v ? v.factor : t.factor;
  const arch = 'arch' in v ? v.arch : t.arch;
  const normalise = 'normalise' in v ? v.normalise : t.normalise;
  if (factor !== undefined && factor !== 'as-written') out.factor = factor;
  if (arch) out.arch = arch;
  if (normalise) out.normalise = true;
  return out;
}

/** The 1-based source line of a (0-based) listing line, or null (headers, labels, blank lines). */
export function sourceLineOf(result: Pick<SassListingResult, 'sourceLines'>, docLine: number): number | null {
  return result.sourceLines[docLine] ?? null;
}

/**
 * The runs of consecutive listing lines (0-based, inclusive) whose instructions come from the
 * 1-based source line `line`, in document order. A source line nvcc spread over the kernel
 * (a loop's index update in every unrolled copy) has several.
 */
export function docRangesOf(result: Pick<SassListingResult, 'sourceLines'>, line: number): { from: number; to: number }[] {
  const runs: { from: number; to: number }[] = [];
  result.sourceLines.forEach((s, i) => {
    if (s !== line) return;
    const last = runs[runs.length - 1];
    if (last && last.to === i - 1) last.to = i;
    else runs.push({ from: i, to: i });
  });
  return runs;
}

/** Factor choices for the quick picks: as written first, then the unrollLens.unrollFactors setting. */
export function factorChoices(setting: readonly string[]): string[] {
  return ['as-written', ...setting.filter((f, i) => f !== 'as-written' && setting.indexOf(f) === i)];
}
