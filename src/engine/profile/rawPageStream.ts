// A strict, streaming reader of ncu's raw page (`--csv --page raw`): text goes in chunk by chunk
// (a read stream of a file of any size, or one string), each launch row comes out through a
// callback as soon as it is complete, and nothing is kept per launch, so memory does not grow
// with the number of launches. Unlike parseRawPage (lenient, for recorded fixtures), incomplete
// or damaged input is an error, never a result: a row cut off part-way (a truncated export or a
// killed ncu), a row with more or fewer cells than the header, text after the header that is
// not a row, a launch with an impossible duration (0 ns or less), or no header at all throw
// RawPageError.
//
// Same preprocessing as parseRawPage: a UTF-8 BOM, ncu's own message lines (==PROF== …) and
// anything before the header row are dropped; a header row may repeat (each applies to the
// rows after it); the units row comes right after a header.
import * as fs from 'fs';
import { IDENTITY_COLUMNS, impossibleDuration, RawKernelRow, rawRowFromCells } from './ncuCsv';

/** Damaged or incomplete raw-page CSV; the message says where and what. */
export class RawPageError extends Error {}

export interface RawPageStreamOptions {
  /** Called with each launch row, in order. */
  onLaunch: (row: RawKernelRow) => void;
  /** Metric columns to keep in each row (default: all); identity columns are always read. */
  columns?: (name: string) => boolean;
}

export interface RawPageSummary {
  launches: number;
  /** The last header's metric columns (identity columns excluded), in order. */
  metricNames: string[];
}

const NCU_LOG_LINE = /^\s*==(?:PROF|WARNING|WARN|ERROR|INFO|NOTE)==/;
const HEADER_LINE = /^"?ID"?,/;

export class RawPageStream {
  private rest = '';
  private lineNo = 0;
  private first = true;
  private seenHeader = false;
  // CSV record state (RFC 4180, as parseCsv; carried over line ends inside a quoted cell)
  private record: string[] = [];
  private field = '';
  private fieldStarted = false;
  private inQuotes = false;
  private recordLine = 0;
  // raw page state
  private header: string[] | null = null;
  private units: string[] | null = null;
  private afterHeader = false;
  private keep: boolean[] = [];
  private metricNames: string[] = [];
  private launches = 0;

  constructor(private readonly o: RawPageStreamOptions) {}

  /** The next piece of text (any split, even mid-line). */
  push(chunk: string): void {
    let text = this.rest + chunk;
    if (this.first && text.length) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      this.line(text.slice(start, nl + 1));
      start = nl + 1;
    }
    this.rest = text.slice(start);
  }

  /** The end of the input: checks that it ended on a complete row. */
  end(): RawPageSummary {
    if (this.rest) this.line(this.rest);
    this.rest = '';
    if (this.inQuotes)
      throw new RawPageError(
        `the CSV ends inside a quoted cell of the row starting on line ${this.recordLine}: the file is cut off (truncated export or ncu stopped part-way)`,
      );
    this.finishRecord();
    if (!this.seenHeader)
      throw new RawPageError(
        'no raw-page header row ("ID","Process ID",…,"Kernel Name",…) found: this is not the output of `ncu --csv --page raw`',
      );
    return { launches: this.launches, metricNames: this.metricNames };
  }

  /** One physical line with its line break (the last one may have none). */
  private line(line: string): void {
    this.lineNo++;
    if (!this.inQuotes) {
      if (NCU_LOG_LINE.test(line)) return;
      if (!this.seenHeader) {
        if (!HEADER_LINE.test(line)) return; // program output and notes before the CSV
        this.seenHeader = true;
      }
    }
    this.tokenize(line);
  }

  /** Splits a line into cells, ending a record at a line break outside quotes. */
  private tokenize(s: string): void {
    const n = s.length;
    let i = 0;
    while (i < n) {
      if (this.inQuotes) {
        const q = s.indexOf('"', i);
        if (q < 0) {
          this.field += s.slice(i);
          return;
        }
        this.field += s.slice(i, q);
        const next = s[q + 1];
        if (next === '"') {
          this.field += '"';
          i = q + 2;
          continue;
        }
        if (next === undefined || next === ',' || next === '\n' || next === '\r') {
          this.inQuotes = false;
          i = q + 1;
          // anything between the closing quote and the next separator is kept as it is
          while (i < n && s[i] !== ',' && s[i] !== '\n' && s[i] !== '\r') this.field += s[i++];
          continue;
        }
        this.field += '"'; // a lone quote inside a quoted cell: literal
        i = q + 1;
        continue;
      }
      const c = s[i];
      if (c === '"' && this.field === '' && !this.fieldStarted) {
        if (!this.record.length) this.recordLine = this.lineNo;
        this.fieldStarted = true;
        this.inQuotes = true;
        i++;
        continue;
      }
      if (c === ',') {
        if (!this.record.length && !this.fieldStarted) this.recordLine = this.lineNo;
        this.record.push(this.field);
        this.field = '';
        this.fieldStarted = false;
        i++;
        continue;
      }
      if (c === '\r' || c === '\n') {
        this.finishRecord();
        i += c === '\r' && s[i + 1] === '\n' ? 2 : 1;
        continue;
      }
      if (!this.record.length && !this.fieldStarted) this.recordLine = this.lineNo;
      this.field += c;
      this.fieldStarted = true;
      i++;
    }
  }

  private finishRecord(): void {
    if (this.fieldStarted || this.record.length > 0) {
      this.record.push(this.field);
      const rec = this.record;
      this.record = [];
      this.field = '';
      this.fieldStarted = false;
      this.onRecord(rec);
    }
    this.record = [];
    this.field = '';
    this.fieldStarted = false;
  }

  private onRecord(rec: string[]): void {
    if (rec[0] === 'ID') {
      const header = rec.map(h => h.trim());
      this.header = header;
      this.units = null;
      this.afterHeader = true;
      this.metricNames = header.filter(h => h && !IDENTITY_COLUMNS.has(h));
      const columns = this.o.columns;
      this.keep = header.map(h => !columns || columns(h));
      return;
    }
    const header = this.header;
    if (!header) return;
    const first = this.afterHeader;
    this.afterHeader = false;
    // ncu may end a row with a comma after its last cell (an extra empty cell)
    const cells = rec.length === header.length + 1 && rec[rec.length - 1] === '' ? rec.slice(0, -1) : rec;
    const idCell = (cells[0] ?? '').trim();
    if (idCell === '' && first && cells.length === header.length) {
      this.units = cells;
      return;
    }
    if (cells.length !== header.length || !/^\d+$/.test(idCell.replace(/,/g, ''))) {
      const what = cells.length === 1 ? `"${cells[0].slice(0, 40)}${cells[0].length > 40 ? '…' : ''}"` : `${cells.length} cells`;
      throw new RawPageError(
        `line ${this.recordLine} is not a complete launch row (${what}; the header has ${header.length} columns): ` +
          'the CSV is cut off or damaged',
      );
    }
    const row = rawRowFromCells(header, this.units, cells, this.keep);
    const impossible = impossibleDuration(row.metrics);
    if (impossible)
      throw new RawPageError(`line ${this.recordLine} (launch ID ${idCell}): ${impossible}; the CSV is damaged or was edited`);
    this.launches++;
    this.o.onLaunch(row);
  }
}

/** Reads a raw-page CSV file as a stream (1 MiB at a time); throws RawPageError on damaged input. */
export async function readRawPageFile(file: string, o: RawPageStreamOptions): Promise<RawPageSummary> {
  const reader = new RawPageStream(o);
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  for await (const chunk of stream) reader.push(chunk as string);
  return reader.end();
}

/** A raw page held in memory, read strictly: every launch row, or RawPageError. */
export function parseRawPageStrict(text: string, columns?: (name: string) => boolean): { kernels: RawKernelRow[]; metricNames: string[] } {
  const kernels: RawKernelRow[] = [];
  const reader = new RawPageStream({ onLaunch: r => kernels.push(r), columns });
  reader.push(text);
  const { metricNames } = reader.end();
  return { kernels, metricNames };
}
