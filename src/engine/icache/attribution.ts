// Issue 22: a measured slowdown is an instruction-cache slowdown only when the machine code says
// so. A variant is slower "for the i-cache" when both hold:
//   1. its hot loop is past the cache: the i-cache model (model.ts) says it does not fit
//      the first level (`fits` false), and
//   2. its warps wait for instructions: ncu's no_instruction share of its stalls is at least
//      NO_INSTRUCTION_MIN (10 %) and at least NO_INSTRUCTION_RISE (5 points) above the
//      reference variant's share.
// Any other measured slowdown is shown as what it is ("slower, not i-cache: hot loop fits
// (0.9 KiB); top stall long_scoreboard 61 %"), never as an i-cache slowdown.
import type { IcacheAttribution } from '../../schema/types';

/** no_instruction share (0..1) a variant's stalls must reach before its slowdown is put on the i-cache. */
export const NO_INSTRUCTION_MIN = 0.1;
/** How far (0..1, share points) its no_instruction share must rise above the reference variant's. */
export const NO_INSTRUCTION_RISE = 0.05;

/** Stall reasons that are not waits: a warp issuing ("selected") is not stalled on anything. */
const NOT_STALLS = new Set(['selected']);

/** The largest stall reason of a profile, "selected" (issuing) aside; null without one. */
export function topStall(share: Record<string, number> | null | undefined): { reason: string; share: number } | null {
  if (!share) return null;
  let best: { reason: string; share: number } | null = null;
  for (const [reason, s] of Object.entries(share)) {
    if (NOT_STALLS.has(reason) || !(s > 0)) continue;
    if (!best || s > best.share) best = { reason, share: s };
  }
  return best;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

function kib(bytes: number): string {
  const k = bytes / 1024;
  return `${k < 10 ? k.toFixed(1) : k.toFixed(0)} KiB`;
}

export interface AttributionInput {
  /** This median ÷ the reference's. */
  slowdown: number;
  /** This variant's no_instruction share (ncu), null when not profiled. */
  noInstruction: number | null;
  /** The reference variant's no_instruction share. */
  referenceNoInstruction: number | null;
  /** The i-cache model's verdict on this variant's hot loop (null: no facts). */
  fits: boolean | null;
  /** Bytes of the hot loop, when known. */
  bytes: number | null;
  /** This variant's stall shares, for the top stall. */
  stallShare: Record<string, number> | null | undefined;
}

/** Whether a measured slowdown is the instruction cache's, and why (see the file's head). */
export function attributeSlowdown(m: AttributionInput): IcacheAttribution {
  const top = topStall(m.stallShare);
  const topText = top ? `top stall ${top.reason} ${pct(top.share)}` : 'no stall profile';
  if (!(m.slowdown > 1)) return { cause: 'none', why: 'not slower than the reference', topStall: top };
  const size = m.bytes !== null ? ` (${kib(m.bytes)})` : '';
  const reasons: string[] = [];
  if (m.fits === null) reasons.push('hot loop size unknown');
  else if (m.fits) reasons.push(`hot loop fits${size}`);
  const ni = m.noInstruction;
  const ref = m.referenceNoInstruction ?? 0;
  if (ni === null) reasons.push('no no_instruction share (not profiled)');
  else if (ni < NO_INSTRUCTION_MIN || ni < ref + NO_INSTRUCTION_RISE) {
    reasons.push(`no_instruction ${pct(ni)} (reference ${pct(ref)})`);
  }
  if (!reasons.length) {
    return {
      cause: 'icache',
      why: `hot loop past the cache${size}; no_instruction ${pct(ni!)} of stalls (reference ${pct(ref)})`,
      topStall: top,
    };
  }
  return { cause: 'other', why: `slower, not i-cache: ${reasons.join('; ')}; ${topText}`, topStall: top };
}
