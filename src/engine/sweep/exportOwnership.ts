// How we know an existing export file is one Unroll Lens wrote, so that `sweep --csv/--t4/--report`
// may replace it without --force (and a `.cu`, a header or anyone's notes are never overwritten):
//   HTML report  its first 4 KiB hold `<meta name="generator" content="Unroll Lens">` (page() in
//                panelHtml.ts writes it in the head of every page).
//   CSV          its first line is our header row: starts `id,label,status,` and holds `,best,message`
//                followed only by plain column names (sweepCsv's first columns, and its last ones
//                before columns added later, such as `instantiation`; a spreadsheet keeps them).
//   T4 JSON      it parses (at most 64 MiB) to exactly {schema_version, results}, and every result
//                carries our `variant` measurement (sweepT4 adds one to each); an empty results list
//                counts as ours only in our exact formatting.
// Anything else (unreadable, a link, a FIFO, larger than the cap) is not ours.
import { REPORT_GENERATOR_META } from '../../schema/reportMarker';
import { readHead } from '../base/safeWrite';
import { T4_SCHEMA_VERSION } from './export';

export type ExportFormat = 'csv' | 't4' | 'report';

const T4_MAX_BYTES = 64 << 20;

function csvIsOurs(head: string): boolean {
  const first = head.split(/\r?\n/, 1)[0];
  return head.length > first.length && /^id,label,status,.*,best,message(?:,[A-Za-z_]+)*$/.test(first);
}

function t4IsOurs(text: string): boolean {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return false;
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const o = doc as Record<string, unknown>;
  if (Object.keys(o).sort().join(',') !== 'results,schema_version' || !Array.isArray(o.results)) return false;
  if (!o.results.length) return text === JSON.stringify({ schema_version: T4_SCHEMA_VERSION, results: [] }, null, 2) + '\n';
  return o.results.every(
    r =>
      !!r &&
      typeof r === 'object' &&
      Array.isArray((r as { measurements?: unknown }).measurements) &&
      (r as { measurements: unknown[] }).measurements.some(
        m =>
          !!m &&
          typeof m === 'object' &&
          (m as { name?: unknown }).name === 'variant' &&
          typeof (m as { value?: unknown }).value === 'string',
      ),
  );
}

/** True when `file` (an existing regular file) is an export of this format that Unroll Lens wrote. */
export function writtenByUs(file: string, format: ExportFormat): boolean {
  const max = format === 't4' ? T4_MAX_BYTES + 1 : 64 << 10;
  const head = readHead(file, max);
  if (!head) return false;
  if (format === 't4') return head.length <= T4_MAX_BYTES && t4IsOurs(head.toString('utf8'));
  const text = head.toString('utf8');
  return format === 'csv' ? csvIsOurs(text) : text.slice(0, 4096).includes(REPORT_GENERATOR_META);
}
