// An open document's text as the server keeps it: in segments (SegmentedText), so that a keystroke
// does not copy the whole file. vscode-languageserver-textdocument's TextDocument keeps one string,
// and each edit made a new one that V8 copies whole ("flattens") on its next read: 1.4–1.6 ms for
// the bench's 5,077-line file on every keystroke (issue 41). Lines and offsets follow TextDocument's
// rules exactly (`\r\n`, `\r` and `\n` end a line; a position past its line's end is clamped before
// the line break), and so does an incremental update.
import type { Position, Range } from 'vscode-languageserver';
import { SegmentedText } from '../engine';

export type ContentChange = { range: Range; text: string } | { text: string };

function isEOL(ch: number): boolean {
  return ch === 13 || ch === 10;
}

/** Offsets of the line starts after the line breaks in `text` (TextDocument's computeLineOffsets). */
function lineOffsetsIn(text: string, atLineStart: boolean, offset = 0): number[] {
  const out = atLineStart ? [offset] : [];
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (!isEOL(ch)) continue;
    if (ch === 13 && i + 1 < text.length && text.charCodeAt(i + 1) === 10) i++;
    out.push(offset + i + 1);
  }
  return out;
}

export class ServerText {
  private constructor(
    readonly uri: string,
    readonly languageId: string,
    public version: number,
    /** The text; a new one after each edit. */
    public text: SegmentedText,
    private lineOffsets: number[],
  ) {}

  static create(uri: string, languageId: string, version: number, content: string): ServerText {
    return new ServerText(uri, languageId, version, SegmentedText.of(content), lineOffsetsIn(content, true));
  }

  get length(): number {
    return this.text.length;
  }

  /** The whole text: made from the segments on the first call after an edit (a copy of the file). */
  getText(): string {
    return this.text.toString();
  }

  toString(): string {
    return this.getText();
  }

  offsetAt(position: Position): number {
    const lines = this.lineOffsets;
    if (position.line >= lines.length) return this.text.length;
    if (position.line < 0) return 0;
    const lineOffset = lines[position.line];
    if (position.character <= 0) return lineOffset;
    const next = position.line + 1 < lines.length ? lines[position.line + 1] : this.text.length;
    let offset = Math.min(lineOffset + position.character, next);
    while (offset > lineOffset && isEOL(this.text.slice(offset - 1, offset).charCodeAt(0))) offset--;
    return offset;
  }

  /** Applies the changes in order (each relative to the text after the previous one), in place. */
  update(changes: ContentChange[], version: number): this {
    for (const change of changes) {
      if (!('range' in change)) {
        this.text = SegmentedText.of(change.text);
        this.lineOffsets = lineOffsetsIn(change.text, true);
        continue;
      }
      let { start, end } = change.range;
      if (start.line > end.line || (start.line === end.line && start.character > end.character)) [start, end] = [end, start];
      const startOffset = this.offsetAt(start);
      const endOffset = this.offsetAt(end);
      this.text = this.text.replace(startOffset, endOffset, change.text);
      const startLine = Math.max(start.line, 0);
      const endLine = Math.max(end.line, 0);
      const added = lineOffsetsIn(change.text, false, startOffset);
      const lines = this.lineOffsets;
      if (endLine - startLine === added.length) for (let i = 0; i < added.length; i++) lines[i + startLine + 1] = added[i];
      else this.lineOffsets = [...lines.slice(0, startLine + 1), ...added, ...lines.slice(endLine + 1)];
      const diff = change.text.length - (endOffset - startOffset);
      if (diff !== 0) for (let i = startLine + 1 + added.length; i < this.lineOffsets.length; i++) this.lineOffsets[i] += diff;
    }
    this.version = version;
    return this;
  }
}
