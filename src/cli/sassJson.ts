// The documented `sass --json` and `sass --listing --json` contracts (docs/cli.md).
import { type FileSassReport, type LoopReport, type VariantIcache } from '../engine';
import type { SassListingData } from '../protocol';

function icacheJson(p: VariantIcache | null | undefined) {
  if (!p) return null;
  return {
    bytes: p.bytes,
    predictedSlowdown: p.predictedSlowdown,
    warpsPerSm: p.warpsPerSm,
    warpsRange: p.warpsRange,
    warpsSource: p.warpsSource,
    demand: p.demand,
    shape: p.shape,
    fits: p.fits,
    basis: p.basis,
    reference: p.reference,
  };
}

/** The documented `sass --json` contract (docs/cli.md). */
export function toSassJson(file: FileSassReport, loop: LoopReport | null, icache: (VariantIcache | null)[] = []) {
  return {
    arch: file.arch,
    nvcc: file.nvcc,
    compileFlags: file.compileFlags
      ? { database: file.compileFlags.database, entry: file.compileFlags.entry, looked: file.compileFlags.looked }
      : null,
    kernels: file.kernels.map(k => ({
      name: k.name,
      demangled: k.demangled,
      instructions: k.instructions,
      bytes: k.bytes,
      registers: k.registers,
      spillStores: k.spillStores,
      spillLoads: k.spillLoads,
      sharedBytes: k.sharedBytes,
      stackBytes: k.stackBytes,
      localLoads: k.localLoads ?? null,
      localStores: k.localStores ?? null,
    })),
    ...(loop
      ? {
          loop: {
            line: loop.line,
            instantiation: loop.instantiation,
            variants: loop.variants.map((v, i) => ({
              factor: v.factor,
              status: v.status,
              kernel: v.kernel,
              kernelInstructions: v.kernelInstructions,
              loopInstructions: v.loopInstructions,
              effectiveUnroll: v.effectiveUnroll,
              unrollUnknown: v.unrollUnknown ?? null,
              unrollReadings: v.unrollReadings ?? null,
              fullyUnrolled: v.fullyUnrolled,
              remainder: v.remainder ?? null,
              registers: v.registers,
              spillStores: v.spillStores,
              stackBytes: v.stackBytes ?? null,
              localLoads: v.localLoads ?? null,
              localStores: v.localStores ?? null,
              identicalTo: v.identicalTo,
              icache: icacheJson(icache[i]),
              icacheNone: icache[i] ? null : (v.icacheNone ?? null),
              ...(v.failure
                ? {
                    error:
                      v.failure.messages
                        .filter(m => m.severity === 'error')
                        .map(m => m.message)
                        .join('\n') || v.failure.kind,
                  }
                : {}),
            })),
            notes: loop.notes,
            limitation: loop.limitation,
          },
        }
      : {}),
    limitation: file.limitation ?? null,
  };
}

/** The documented `sass --listing --json` contract (docs/cli.md). */
export function listingJson(l: SassListingData) {
  return {
    kernel: l.kernel,
    demangled: l.demangled,
    arch: l.arch,
    nvcc: l.nvcc,
    factor: l.factor,
    file: l.file,
    loopLine: l.loopLine,
    instructions: l.instructions,
    bytes: l.bytes,
    registers: l.registers,
    lines: l.lines.map(x => ({
      sourceLine: x.sourceLine,
      file: x.file,
      inLoop: x.inLoop,
      opcodes: x.opcodes,
      instructions: x.instructions.map(i => ({ offset: i.offset, opcode: i.opcode, text: i.text, ...(i.stall ? { stall: i.stall } : {}) })),
    })),
    loops: l.loops.map(p => ({
      name: p.name,
      startOffset: p.startOffset,
      endOffset: p.endOffset,
      sourceLines: p.sourceLines,
      unroll: p.unroll,
      kind: p.kind,
      role: p.role,
      instructions: p.instructions,
      ...(p.perPass ? { perPass: true } : {}),
    })),
    stalls: l.stalls,
    stallsNote: l.stallsNote,
  };
}
