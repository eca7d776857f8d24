// SweepVariant construction and the identical-code registry shared by the runners.
import type { SweepVariant, SweepVariantStatus } from '../../schema/types';
import type { CompilerMessage } from '../toolchain/nvccErrors';
import { pointId, pointLabel, SweepPoint } from './space';

/** A variant with every measurement empty: what a runner starts from. */
export function emptyVariant(p: SweepPoint, status: SweepVariantStatus = 'pending'): SweepVariant {
  return {
    id: pointId(p),
    label: pointLabel(p),
    factors: { ...p.factors },
    params: { ...p.params },
    status,
    message: null,
    kernel: null,
    kernelInstructions: null,
    kernelBytes: null,
    loopInstructions: {},
    effectiveUnroll: {},
    fullyUnrolled: {},
    registers: null,
    spillStores: null,
    spillLoads: null,
    occupancy: null,
    identicalTo: null,
    compileMs: null,
    samples: 0,
    medianMs: null,
    q1Ms: null,
    q3Ms: null,
    iqrMs: null,
    cv: null,
    speedup: null,
    withinNoise: null,
    stallShare: null,
    achievedOccupancy: null,
  };
}

/** The GPU measurement fields: what an identical-code variant copies instead of running. */
export const GPU_FIELDS = [
  'samples',
  'medianMs',
  'q1Ms',
  'q3Ms',
  'iqrMs',
  'cv',
  'stallShare',
  'achievedOccupancy',
  'executedInstructions',
  'cached',
  'durationsMs',
  'instantiations',
] as const;

/** nvcc's error lines, one per line: a variant's message. */
export function compilerMessage(messages: CompilerMessage[], fallback: string | null): string | null {
  const errors = messages
    .filter(m => m.severity === 'error')
    .map(m => `${m.file ?? ''}${m.line ? `:${m.line}` : ''}${m.file || m.line ? ' ' : ''}${m.message}`);
  return errors.join('\n') || fallback;
}

/**
 * Variants measured so far, by the hash of their kernel's machine code. On a GPU the key also
 * holds the parameters: -D values can change the host code (launch configuration) even where
 * the kernel's machine code is the same, so only same-parameter variants may share a timing.
 */
export class CodeRegistry {
  private readonly first = new Map<string, SweepVariant>();

  constructor(private readonly perParams: boolean) {}

  private key(hash: string, params: Record<string, string>): string {
    return this.perParams
      ? `${hash}|${Object.keys(params)
          .sort()
          .map(k => `${k}=${params[k]}`)
          .join(',')}`
      : hash;
  }

  /** The earlier variant with this code, or null (then this one is recorded as the first). */
  claim(hash: string | null, v: SweepVariant): SweepVariant | null {
    if (!hash) return null;
    const k = this.key(hash, v.params);
    const earlier = this.first.get(k);
    if (earlier) return earlier;
    this.first.set(k, v);
    return null;
  }

  lookup(hash: string | null, params: Record<string, string>): SweepVariant | null {
    return hash ? (this.first.get(this.key(hash, params)) ?? null) : null;
  }
}
