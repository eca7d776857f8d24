// What the CUPTI kernel timer (native/cupti_timer.c) wrote for one program run: JSON lines of
// kernel launches with GPU start and end timestamps, CUPTI's errors, and an end line with the
// records written and those CUPTI dropped. Read strictly: a run whose file has no end line (the
// program died before exit) or lost records says so; it is never a silently shorter list.

/** One kernel launch as CUPTI recorded it. */
export interface KernelLaunch {
  /** Mangled name. */
  kernel: string;
  /** Start after the library's base timestamp, and duration, ns (exact: the library subtracts in 64 bits). */
  startNs: number;
  durationNs: number;
  device: number;
  stream: number;
  grid: [number, number, number];
  block: [number, number, number];
  registers: number;
  staticSharedBytes: number;
  dynamicSharedBytes: number;
  /**
   * ncu's duration of this launch, gpu__time_duration (ns, the GPU's timer in 32 ns ticks), read by
   * CUPTI's range profiler in the same run; null when the run did not read it (gpuTimeProblem says why).
   */
  gpuTimeNs: number | null;
}

/** One sampled PC of one function: its stall-reason sample counts, summed over the run. */
interface PcSample {
  /** Byte offset of the instruction from the start of its function. */
  offset: number;
  /** Mangled function name. */
  kernel: string;
  /** CUPTI's CRC of the cubin (a decimal string: 64 bits). */
  cubinCrc: string;
  /** [index into PcSampling.reasons, samples]. */
  counts: [number, number][];
}

/** What CUPTI PC sampling gave in one run (UNROLL_LENS_PCSAMPLING). */
export interface PcSampling {
  /** Sampling every 2^period cycles; null when the summary line is missing. */
  period: number | null;
  /** CUPTI's stall reason names (`smsp__pcsamp_warps_issue_stalled_<reason>[_not_issued]`). */
  reasons: string[];
  pcs: PcSample[];
  /** Samples CUPTI counted (user kernels, others and dropped ones), and those the hardware dropped. */
  total: number;
  dropped: number;
  /** The hardware buffer filled: samples were lost and CUPTI gives zeros for them. */
  hardwareBufferFull: boolean;
  /** Samples the library could not keep (its PC table full, a reason it did not know). */
  lost: number;
  /** PC sampling calls that failed ("pcerror" lines); the kernel times are still valid. */
  errors: string[];
  /** The summary line was written (the run reached exit with sampling on). */
  complete: boolean;
}

export interface TimerRecords {
  /** Launches in the order CUPTI delivered them (per buffer; sort by startNs for launch order). */
  launches: KernelLaunch[];
  /** CUPTI calls that failed, as the library wrote them. */
  errors: string[];
  /** The end line: records written and records CUPTI dropped; null when the program never reached exit. */
  end: { records: number; dropped: number } | null;
  /** The library loaded and started (an init line). */
  initialised: boolean;
  /** PC sampling's output; null when the run did not sample (no pc, pcs or pcerror line). */
  pcSampling: PcSampling | null;
  /** A run started early and held at its first launch (UNROLL_LENS_HOLD): how long it waited, ns; null otherwise. */
  heldNs: number | null;
  /** Why the launches have no gpuTimeNs (not asked for, the profiler refused, ranges lost); null when every launch has one. */
  gpuTimeProblem: string | null;
  /** Host time the range profiler took in the program (setting up, reading ranges), ms; null without it. */
  gpuTimeHostMs: number | null;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const triple = (v: unknown): [number, number, number] | null =>
  Array.isArray(v) && v.length === 3 && v.every(x => num(x) !== null) ? (v as [number, number, number]) : null;

/** Parses the timer's output; a line that is not one of its records is an error of the run, not skipped silently. */
export function parseTimerRecords(text: string): TimerRecords {
  const out: TimerRecords = {
    launches: [],
    errors: [],
    end: null,
    initialised: false,
    pcSampling: null,
    heldNs: null,
    gpuTimeProblem: null,
    gpuTimeHostMs: null,
  };
  const gpu: GpuTimeLines = { ns: new Map(), errors: [], end: null };
  const sampling = (): PcSampling =>
    (out.pcSampling ??= {
      period: null,
      reasons: [],
      pcs: [],
      total: 0,
      dropped: 0,
      hardwareBufferFull: false,
      lost: 0,
      errors: [],
      complete: false,
    });
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let r: Record<string, unknown>;
    try {
      r = JSON.parse(line) as Record<string, unknown>;
    } catch {
      // the last line of a process killed mid-write is cut off; any other is damage
      out.errors.push(
        i === lines.length - 1 || i === lines.length - 2
          ? 'the timer output ends mid-line (the program was killed?)'
          : `unreadable timer line ${i + 1}`,
      );
      return;
    }
    if (r.init === 1) out.initialised = true;
    else if (typeof r.error === 'string') out.errors.push(r.error);
    else if (typeof r.pcerror === 'string') sampling().errors.push(r.pcerror);
    else if (typeof r.gterror === 'string') gpu.errors.push(r.gterror);
    else if (typeof r.gt === 'number') {
      const index = num(r.gi);
      if (index === null || index < 0 || r.gt < 0 || gpu.ns.has(index))
        out.errors.push(`timer line ${i + 1}: a GPU time without a valid index`);
      else gpu.ns.set(index, r.gt);
    } else if (r.gtend === 1) gpu.end = { ranges: num(r.ranges) ?? 0, dropped: num(r.dropped) ?? 0, hostMs: num(r.hostMs) ?? 0 };
    else if (typeof r.held === 'number') out.heldNs = r.held;
    else if (typeof r.pc === 'number') {
      const pc = pcSampleOf(r);
      if (pc) sampling().pcs.push(pc);
      else out.errors.push(`timer line ${i + 1}: a PC sample without a valid offset, function or counts`);
    } else if (r.pcs === 1) {
      const s = sampling();
      s.period = num(r.period);
      s.reasons = Array.isArray(r.reasons) ? r.reasons.map(String) : [];
      s.total = num(r.total) ?? 0;
      s.dropped = num(r.dropped) ?? 0;
      s.hardwareBufferFull = r.hwFull === 1;
      s.lost = num(r.lost) ?? 0;
      s.complete = true;
    } else if (r.end === 1) out.end = { records: num(r.records) ?? 0, dropped: num(r.dropped) ?? 0 };
    else if (typeof r.k === 'string') {
      const s = num(r.s);
      const du = num(r.du);
      const grid = triple(r.g);
      const block = triple(r.b);
      if (s === null || du === null || du < 0 || !grid || !block) {
        out.errors.push(`timer line ${i + 1}: a kernel record without valid times or shape`);
        return;
      }
      out.launches.push({
        kernel: r.k,
        startNs: s,
        durationNs: du,
        device: num(r.d) ?? 0,
        stream: num(r.st) ?? 0,
        grid,
        block,
        registers: num(r.r) ?? 0,
        staticSharedBytes: num(r.ss) ?? 0,
        dynamicSharedBytes: num(r.ds) ?? 0,
        gpuTimeNs: null,
      });
    } else out.errors.push(`timer line ${i + 1}: not a timer record`);
  });
  withGpuTimes(out, gpu);
  return out;
}

/** The range profiler's lines of a run: each range's gpu__time_duration by launch index, its errors and its end line. */
interface GpuTimeLines {
  ns: Map<number, number>;
  errors: string[];
  end: { ranges: number; dropped: number; hostMs: number } | null;
}

/**
 * Gives each launch its gpu__time_duration: the profiler's ranges are the launches in launch order
 * (one range a kernel), so they pair with the records sorted by start, but only when nothing can
 * have shifted the pairing: no profiler error, every range read, one per record, one device.
 */
function withGpuTimes(out: TimerRecords, gpu: GpuTimeLines): void {
  if (gpu.end) out.gpuTimeHostMs = gpu.end.hostMs;
  const problem =
    gpu.errors.length > 0
      ? `CUPTI's range profiler reported: ${gpu.errors.slice(0, 2).join('; ')}`
      : !gpu.end && gpu.ns.size === 0
        ? 'the run did not read gpu__time_duration (no range profiler output)'
        : !gpu.end
          ? 'the range profiler did not finish (no end line)'
          : gpu.end.dropped > 0
            ? `the range profiler dropped ${gpu.end.dropped} ranges`
            : gpu.ns.size !== gpu.end.ranges || gpu.ns.size !== out.launches.length
              ? `the range profiler read ${gpu.ns.size} ranges of ${gpu.end.ranges} for ${out.launches.length} kernel records`
              : new Set(out.launches.map(l => l.device)).size > 1
                ? 'kernels ran on several devices: ranges cannot be paired with launches'
                : null;
  out.gpuTimeProblem = problem;
  if (problem) return;
  // by start (stable: records that all read 0 keep CUPTI's order, which is launch order for serialized kernels)
  const ordered = [...out.launches].sort((a, b) => a.startNs - b.startNs);
  for (let i = 0; i < ordered.length; i++) {
    const ns = gpu.ns.get(i);
    if (ns === undefined) {
      out.gpuTimeProblem = `the range profiler has no range ${i}`;
      for (const l of ordered) l.gpuTimeNs = null;
      return;
    }
    // a pairing shifted by a launch shows as a range far from its record (they differ by ~0.6 µs on an
    // H200); under the profiler's kernel replay the records read 0 and only the counts can be checked
    const du = ordered[i]!.durationNs;
    if (du > 0 && Math.abs(ns - du) > Math.max(PAIRING_SLACK_NS, 0.1 * du)) {
      out.gpuTimeProblem = `the range profiler's range ${i} (${ns} ns) does not match its kernel record (${du} ns)`;
      for (const l of ordered) l.gpuTimeNs = null;
      return;
    }
    ordered[i]!.gpuTimeNs = ns;
  }
}

/** How far a launch's gpu__time_duration may be from its record's span before the pairing is not trusted. */
const PAIRING_SLACK_NS = 3000;

function pcSampleOf(r: Record<string, unknown>): PcSample | null {
  const offset = num(r.pc);
  const pairs = Array.isArray(r.n) ? r.n : null;
  if (offset === null || offset < 0 || typeof r.f !== 'string' || typeof r.c !== 'string' || !pairs) return null;
  const counts: [number, number][] = [];
  for (const p of pairs) {
    if (!Array.isArray(p) || p.length !== 2 || num(p[0]) === null || num(p[1]) === null) return null;
    counts.push([p[0] as number, p[1] as number]);
  }
  return { offset, kernel: r.f, cubinCrc: r.c, counts };
}
