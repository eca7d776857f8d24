// A recorded CUPTI timer run as the range profiler's kernel replay (UNROLL_LENS_GPU_TIME=1) leaves it:
// measured on an H200 (test/fixtures/gpu/h200/short-kernels/), the kernel records then read
// start = end = 0 and PC sampling gets nothing, and a gpu__time_duration line follows for each launch.
// For replays of runs recorded before the timer read the counter; each range is its record's span
// less 600 ns (about what the H200's records read over ncu), unless `ranges` says otherwise.

const lines = (text: string) => text.split('\n').filter(Boolean);

export function underProfiler(
  records: string,
  ranges: (spans: number[]) => string[] = ns => ns.map((n, i) => `{"gt":${n},"gi":${i}}`),
): string {
  const kept = lines(records).filter(l => !l.startsWith('{"end"') && !l.startsWith('{"pc'));
  const spans = kept.filter(l => l.startsWith('{"k"')).map(l => (JSON.parse(l) as { du: number }).du - 600);
  const zeroed = kept.map(l => (l.startsWith('{"k"') ? l.replace(/"s":-?\d+,"du":\d+/, '"s":0,"du":0') : l));
  return [
    ...zeroed,
    ...ranges(spans),
    `{"gtend":1,"ranges":${spans.length},"dropped":0,"prepareMs":90.0,"enableMs":280.0,"hostMs":380.0}`,
    `{"end":1,"records":${spans.length},"dropped":0}`,
  ].join('\n');
}
