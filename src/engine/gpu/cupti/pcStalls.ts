// Warp-stall reasons from CUPTI PC sampling in the timed run (native/cupti_timer.c with
// UNROLL_LENS_PCSAMPLING): the samples of every PC of a kernel summed per reason, read as ncu's
// pc-sampling metric family (smsp__pcsamp_warps_issue_stalled_<reason>), so the shares are the
// same kind of number ncu's SourceCounters section gives. Recorded on an H100 the shares agree
// with ncu's own PC sampling of the same kernels within 0.2 to 4.3 points
// (test/fixtures/gpu/h100/cupti/pcsampling, docs/measurements.md).
import { stallBreakdown, type StallBreakdown } from '../../profile/stalls';
import type { PcSampling } from './timerRecords';

/**
 * Sampling every 2^15 cycles: on an H100 a 0.4 ms kernel gets ~3,000 samples per launch, the
 * shares repeat within 0.5 points from run to run and the kernel durations do not move (within
 * ±0.6 %, the runs' own spread); 2^12 costs more host time for no better shares.
 */
export const PC_SAMPLING_PERIOD = 15;

const STALLED = 'smsp__pcsamp_warps_issue_stalled_';

/** One kernel's stall breakdown from the run's PC samples (source 'pc-sampling'; 'none' when it got no samples). */
export function kernelStalls(s: PcSampling, kernel: string): StallBreakdown {
  const sums = new Map<string, number>();
  for (const pc of s.pcs) {
    if (pc.kernel !== kernel) continue;
    for (const [i, n] of pc.counts) {
      const name = s.reasons[i];
      if (name) sums.set(name, (sums.get(name) ?? 0) + n);
    }
  }
  return stallBreakdown(sums);
}

/**
 * Samples of one kernel: the sum over its PCs of the issued stall reasons (CUPTI also lists
 * `smsp__pcsamp_sample_count` among its reasons, but gives it no count per PC on an H100).
 */
export function kernelSamples(s: PcSampling, kernel: string): number {
  let n = 0;
  for (const pc of s.pcs)
    if (pc.kernel === kernel)
      for (const [i, c] of pc.counts) if (s.reasons[i]?.startsWith(STALLED) && !s.reasons[i].endsWith('_not_issued')) n += c;
  return n;
}

/** Why a run's PC samples cannot be trusted as a stall mix, or null. Never fatal to the kernel times. */
export function pcSamplingProblem(s: PcSampling | null): string | null {
  if (!s) return 'the CUPTI timer wrote no PC samples (the run did not sample)';
  if (s.errors.length) {
    const refused = s.errors.some(e => /INSUFFICIENT_PRIVILEGES|NOT_SUPPORTED|ERR_NVGPUCTRPERM/.test(e));
    return (
      `CUPTI PC sampling failed: ${s.errors.slice(0, 2).join('; ')}` +
      (refused
        ? ' (PC sampling needs access to the GPU performance counters: set the driver option NVreg_RestrictProfilingToAdminUsers=0 or run with CAP_SYS_ADMIN, see NVIDIA\'s page "ERR_NVGPUCTRPERM"; the kernel times do not need it)'
        : '')
    );
  }
  if (!s.complete) return 'the program ended before PC sampling wrote its summary (killed, or exited through _exit)';
  if (s.hardwareBufferFull)
    return 'the PC sampling hardware buffer filled during the run: samples were lost, the stall mix would be skewed';
  if (s.dropped > 0) return `the hardware dropped ${s.dropped} of ${s.total} PC samples: the stall mix would be skewed`;
  if (s.lost > 0) return `the timer could not keep ${s.lost} PC samples (its PC table was full)`;
  return null;
}
