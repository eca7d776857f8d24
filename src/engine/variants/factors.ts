// The unroll factors a loop's variants are built with, as one value: parsed once where they come
// in (the unrollLens.unrollFactors setting and a request's factors in src/server/, --factors in
// src/cli/) and handed unchanged to the sweep space's loop axes, whose points the rewrite turns
// into pragma text. What one factor may be (default, full, 1..4096) is src/schema/ranges.ts's,
// shared with the client; this module owns the list: its default, its refusals and its labels.
import type { Loop } from '../parse/model';
import {
  DEFAULT_UNROLL_FACTORS,
  parseUnrollFactorText,
  RANGES,
  rangeProblem,
  unrollFactorProblem,
  UnrollFactorValue,
} from '../../schema/ranges';

/** "default" removes any pragma (nvcc decides); "full" is a bare `#pragma unroll`. */
export type UnrollFactor = UnrollFactorValue;

/** Why a factor list was refused; the message is the whole explanation (`--factors: …` on the command line). */
export class UnrollFactorsError extends Error {}

/** `default`, `full` or an integer from 1 to 4096 written as text; anything else throws, saying what is allowed. */
function parseFactor(text: string): UnrollFactor {
  const parsed = parseUnrollFactorText(text);
  if ('factor' in parsed) return parsed.factor;
  throw new UnrollFactorsError(parsed.message);
}

/** The first of each factor, in order: `4,4` builds one variant. */
function distinct(list: readonly UnrollFactor[]): UnrollFactor[] {
  return [...new Map(list.map(f => [String(f), f])).values()];
}

/**
 * A checked list of unroll factors: each default, full or an integer from 1 to 4096, none twice,
 * in the order given. Only `parse`, `of`, DEFAULT and NONE make one, so a value of this type needs
 * no further check on its way to the variants.
 */
export class UnrollFactors implements Iterable<UnrollFactor> {
  /** What is built when nobody chose: the setting's default (src/schema/ranges.ts DEFAULT_UNROLL_FACTORS). */
  static readonly DEFAULT = new UnrollFactors(distinct(DEFAULT_UNROLL_FACTORS));
  /**
   * No loop axis: a sweep of parameters only (`--factors none`, a request's empty list for a
   * kernel without loops). A sweep that has loops to set refuses it ('empty factor list').
   */
  static readonly NONE = new UnrollFactors([]);

  private constructor(readonly values: readonly UnrollFactor[]) {}

  /**
   * Factors written as text: `default,1,4,full` (--factors), or the pieces of such a list (the
   * setting's and a request's array of strings, each piece a factor or a comma-separated run).
   * Words in any case, spaces around a factor ignored, repeats dropped. Throws UnrollFactorsError
   * for an empty list, an empty factor between commas (`8,,4`: a factor left out) or a text that
   * is not a factor, each message saying what to write instead.
   */
  static parse(text: string | readonly string[]): UnrollFactors {
    const joined = typeof text === 'string' ? text : text.join(',');
    const items = joined.split(',').map(s => s.trim());
    if (items.every(s => s === '')) throw new UnrollFactorsError('empty factor list');
    // `8,,4` or `8,4,` is a slip (a factor left out), not a list of two: say so rather than guess.
    if (items.includes(''))
      throw new UnrollFactorsError(`an empty factor between commas in '${joined}': write factors as 8,4 or default,1,full`);
    return new UnrollFactors(distinct(items.map(parseFactor)));
  }

  /**
   * Factors already typed (a test, a sealed Slurm manifest): each checked against the same range
   * as text is, repeats dropped; an empty list is NONE.
   */
  static of(list: readonly UnrollFactor[]): UnrollFactors {
    for (const f of list) {
      const problem = unrollFactorProblem(f);
      if (problem) throw new UnrollFactorsError(`bad unroll factor: ${problem}`);
    }
    return list.length ? new UnrollFactors(distinct(list)) : UnrollFactors.NONE;
  }

  get size(): number {
    return this.values.length;
  }

  [Symbol.iterator](): Iterator<UnrollFactor> {
    return this.values[Symbol.iterator]();
  }

  map<T>(f: (factor: UnrollFactor, index: number) => T): T[] {
    return this.values.map(f);
  }

  /** The list as --factors takes it: `default,1,4,full` (parse(x.text()) equals x). */
  text(): string {
    return this.values.join(',');
  }

  /** Each factor in words, for tables and notes: `compiler default`, `unroll 4`, `full unroll`. */
  labels(): string[] {
    return this.values.map(factorLabel);
  }

  /** The plain list, as results (SweepResult.factors) and Slurm specs hold it. */
  toJSON(): UnrollFactor[] {
    return [...this.values];
  }
}

/** One factor in words: `compiler default`, `unroll 4`, `full unroll`. */
export function factorLabel(f: UnrollFactor): string {
  return typeof f === 'number' ? `unroll ${f}` : f === 'full' ? 'full unroll' : 'compiler default';
}

/** A variant to list or compare (sass --factor, the SASS listing request): `as-written` (the file itself) or an unroll factor. */
export function parseVariantFactor(text: string): UnrollFactor | 'as-written' {
  const t = text.trim().toLowerCase();
  return t === 'as-written' ? t : parseFactor(t);
}

/** The factor a loop has in the file as written. */
export function writtenFactor(loop: Loop): UnrollFactor {
  const p = loop.pragma;
  if (!p) return 'default';
  if (p.kind === 'full') return 'full';
  if (p.kind === 'disable') return 1;
  // nvcc ignores `unroll 0` and a count past 2^31-1 (warnings 20167/20168): the loop reads as default.
  return p.factor !== null && !rangeProblem(RANGES.writtenUnrollFactor, p.factor) ? p.factor : 'default';
}
