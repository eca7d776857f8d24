// The hottest source lines of a per-line stall sample, as text: what `bench --source-stalls` and
// `sweep --source-stalls` print under their tables.

export interface LineStallsRow {
  line: number;
  samples: number;
  stallShare: Record<string, number>;
  /** The line's text, when the sample carries it. */
  source?: string;
}

/** Where the per-line samples came from, in words. */
const FROM: Record<'pc-sampling' | 'ncu', string> = {
  'pc-sampling': ", from the timed run's CUPTI PC samples",
  ncu: ", from ncu's source page",
};

/** Eight hottest lines, their share of the samples and their top reason; the problem when sampling failed; '' when not asked. */
export function lineStallsText(
  lines: LineStallsRow[] | null | undefined,
  problem: string | null | undefined,
  source?: 'pc-sampling' | 'ncu',
): string {
  if (problem) return `per-line stalls: ${problem}\n`;
  if (!lines?.length) return '';
  const total = lines.reduce((a, l) => a + l.samples, 0);
  const top = [...lines].sort((a, b) => b.samples - a.samples).slice(0, 8);
  const from = source ? FROM[source] : '';
  return (
    `\nhottest source lines (warp-stall samples, file as written${from}):\n` +
    top
      .map(l => {
        const reason = Object.entries(l.stallShare).sort((a, b) => b[1] - a[1])[0];
        const share = ((l.samples / Math.max(1, total)) * 100).toFixed(1).padStart(5);
        return `  line ${String(l.line).padStart(4)}  ${share}%  ${reason ? `${reason[0]} ${(reason[1] * 100).toFixed(0)}%` : ''}  ${(l.source ?? '').trim().slice(0, 60)}`;
      })
      .join('\n') +
    '\n'
  );
}
