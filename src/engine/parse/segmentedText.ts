// A document's text in segments of a few KiB, so that a keystroke costs the segment it lands in
// and not the file. A JavaScript string edited in place is a new string: the first read of it
// copies the whole file into one (V8 "flattens" it), 1.4 ms for a 5,000-line file on a 2-core
// machine, twice per keystroke (text and masked text) before this. The whole string is built
// only when something asks for all of it, and kept.
import type { Point } from './parser';

/**
 * The text a tree was parsed from, searched without being made one string: a document's
 * SegmentedText (whose root.text tree-sitter would assemble from the parse's chunks, and the
 * first search flatten: 1.6 ms on the 200 KB bench file), or a string.
 */
export interface TextSource {
  find?(needle: string, from: number): number;
  indexOf(needle: string, from?: number): number;
  charCodeAt(index: number): number;
  toString(): string;
}

/** Segments are cut at this length and split again when an edit grows one past twice it. */
const SEGMENT = 2048;

function newlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

export class SegmentedText {
  private flat: string | null;

  private constructor(
    private readonly segs: string[],
    /** Offset of each segment's first character. */
    private readonly starts: number[],
    /** Newlines in each segment. */
    private readonly lines: number[],
    readonly length: number,
    flat: string | null,
  ) {
    this.flat = flat;
  }

  static of(text: string): SegmentedText {
    const segs: string[] = [];
    for (let i = 0; i < text.length; i += SEGMENT) segs.push(text.slice(i, i + SEGMENT));
    return SegmentedText.from(segs, text.length, text);
  }

  private static from(segs: string[], length: number, flat: string | null): SegmentedText {
    const starts: number[] = new Array<number>(segs.length);
    const lines: number[] = new Array<number>(segs.length);
    let at = 0;
    for (let k = 0; k < segs.length; k++) {
      starts[k] = at;
      lines[k] = newlines(segs[k]);
      at += segs[k].length;
    }
    return new SegmentedText(segs, starts, lines, length, flat);
  }

  /** The segment holding offset `index` (the last one for the end of the text). */
  private segmentAt(index: number): number {
    let lo = 0;
    let hi = this.segs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  toString(): string {
    return (this.flat ??= this.segs.join(''));
  }

  slice(start: number, end = this.length): string {
    start = Math.max(0, Math.min(start, this.length));
    end = Math.max(start, Math.min(end, this.length));
    if (this.flat !== null) return this.flat.slice(start, end);
    if (start === end) return '';
    const k = this.segmentAt(start);
    const s = this.segs[k];
    const from = start - this.starts[k];
    if (from + (end - start) <= s.length) return s.slice(from, from + (end - start));
    const parts = [s.slice(from)];
    let j = k + 1;
    for (; j < this.segs.length && this.starts[j] + this.segs[j].length <= end; j++) parts.push(this.segs[j]);
    if (j < this.segs.length && this.starts[j] < end) parts.push(this.segs[j].slice(0, end - this.starts[j]));
    return parts.join('');
  }

  /** At most `max` characters from `index`, never past a segment's end: a parser's read. */
  chunk(index: number, max: number): string {
    if (index >= this.length) return '';
    if (this.flat !== null) return this.flat.slice(index, index + max);
    const k = this.segmentAt(index);
    const from = index - this.starts[k];
    return this.segs[k].slice(from, from + max);
  }

  /** The first `ch` (one character) at or after `from`, or -1. */
  indexOf(ch: string, from = 0): number {
    if (this.flat !== null) return this.flat.indexOf(ch, from);
    if (from >= this.length) return -1;
    for (let k = this.segmentAt(Math.max(0, from)); k < this.segs.length; k++) {
      const i = this.segs[k].indexOf(ch, Math.max(0, from - this.starts[k]));
      if (i !== -1) return this.starts[k] + i;
    }
    return -1;
  }

  /**
   * The first `needle` (any length) at or after `from`, or -1: String.indexOf over the whole text
   * without joining it (on a 200 KB file with any non-ASCII character, a join costs 2 ms).
   */
  find(needle: string, from = 0): number {
    if (this.flat !== null) return this.flat.indexOf(needle, from);
    from = Math.max(0, from);
    if (needle.length === 0) return Math.min(from, this.length);
    for (let k = this.segmentAt(from); k < this.segs.length; k++) {
      const s = this.segs[k];
      const base = this.starts[k];
      const i = s.indexOf(needle, Math.max(0, from - base));
      if (i !== -1) return base + i;
      // One that starts in this segment's last characters and ends in the next ones.
      if (k + 1 < this.segs.length && needle.length > 1) {
        const tail = Math.max(from, base + s.length - (needle.length - 1));
        const j = this.slice(tail, base + s.length + needle.length - 1).indexOf(needle);
        if (j !== -1) return tail + j;
      }
    }
    return -1;
  }

  /** The UTF-16 code unit at `index` (NaN outside the text), as String.charCodeAt. */
  charCodeAt(index: number): number {
    if (this.flat !== null) return this.flat.charCodeAt(index);
    if (index < 0 || index >= this.length) return NaN;
    const k = this.segmentAt(index);
    return this.segs[k].charCodeAt(index - this.starts[k]);
  }

  /** The last `ch` (one character) at or before `from`, or -1. */
  lastIndexOf(ch: string, from = this.length): number {
    if (from < 0) return -1;
    if (this.flat !== null) return this.flat.lastIndexOf(ch, from);
    for (let k = this.segmentAt(Math.min(from, this.length)); k >= 0; k--) {
      const i = this.segs[k].lastIndexOf(ch, from - this.starts[k]);
      if (i !== -1) return this.starts[k] + i;
    }
    return -1;
  }

  /** Row and UTF-16 column of an offset. */
  pointAt(index: number): Point {
    index = Math.max(0, Math.min(index, this.length));
    if (index === 0) return { row: 0, column: 0 };
    const k = this.segmentAt(index);
    let row = 0;
    for (let j = 0; j < k; j++) row += this.lines[j];
    const head = this.segs[k]?.slice(0, index - this.starts[k]) ?? '';
    row += newlines(head);
    const nl = this.lastIndexOf('\n', index - 1);
    return { row, column: index - nl - 1 };
  }

  /** The text with [start, end) replaced by `text`; this one stays as it was. */
  replace(start: number, end: number, text: string): SegmentedText {
    if (this.segs.length === 0) return SegmentedText.of(text);
    const first = this.segmentAt(start);
    // An edit that ends at a segment's end stays in it; one that crosses segments merges them.
    const last = this.segmentAt(Math.max(start, end - 1));
    const merged =
      this.segs[first].slice(0, start - this.starts[first]) + text + this.segs[last].slice(Math.max(0, end - this.starts[last]));
    const pieces: string[] = [];
    if (merged.length > 2 * SEGMENT) for (let i = 0; i < merged.length; i += SEGMENT) pieces.push(merged.slice(i, i + SEGMENT));
    else if (merged.length) pieces.push(merged);
    const segs = [...this.segs.slice(0, first), ...pieces, ...this.segs.slice(last + 1)];
    const length = this.length - (end - start) + text.length;
    if (segs.length === 0) return SegmentedText.of('');
    // Offsets and newline counts of the untouched segments carry over.
    const delta = text.length - (end - start);
    const starts = [...this.starts.slice(0, first)];
    const lines = [...this.lines.slice(0, first)];
    let at = first === 0 ? 0 : this.starts[first];
    for (const p of pieces) {
      starts.push(at);
      lines.push(newlines(p));
      at += p.length;
    }
    for (let j = last + 1; j < this.segs.length; j++) {
      starts.push(this.starts[j] + delta);
      lines.push(this.lines[j]);
    }
    return new SegmentedText(segs, starts, lines, length, null);
  }
}
