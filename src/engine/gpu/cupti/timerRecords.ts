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
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const triple = (v: unknown): [number, number, number] | null =>
  Array.isArray(v) && v.length === 3 && v.every(x => num(x) !== null) ? (v as [number, number, number]) : null;

/** Parses the timer's output; a line that is not one of its records is an error of the run, not skipped silently. */
export function parseTimerRecords(text: string): TimerRecords {
  const out: TimerRecords = { launches: [], errors: [], end: null, initialised: false, pcSampling: null, heldNs: null };
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
      });
    } else out.errors.push(`timer line ${i + 1}: not a timer record`);
  });
  return out;
}

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
