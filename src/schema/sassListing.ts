// The annotated SASS listing of one variant's kernel: built by the engine (report/sassListing.ts),
// sent to the editor as is (protocol.ts re-exports it). Types only.
// SASS listings: the disassembly of one variant's kernel, grouped by source line.

/** Warp-stall samples of one SASS instruction (ncu SourceCounters at SASS level). */
interface SassInstructionStall {
  samples: number;
  /** This instruction's fraction of the kernel's samples (0..1). */
  share: number;
  /** Largest stall reasons (canonical names, e.g. long_scoreboard) and their share of this instruction's samples. */
  top: { reason: string; share: number }[];
}

export interface SassListingInstruction {
  /** Byte offset from the start of the kernel (the `/*0240*\/` column). */
  offset: number;
  /** Base opcode, e.g. FFMA, LDG. */
  opcode: string;
  /** The instruction as nvdisasm printed it, predicate and modifiers included, without the ';'. */
  text: string;
  stall?: SassInstructionStall;
}

/** A run of consecutive instructions that come from one source line. */
export interface SassListingLine {
  /** 1-based line in `file` (the kernel's own line for inlined code), null when the line table has none. */
  sourceLine: number | null;
  /** The file of `sourceLine` (basename shown in the listing), null when unknown. */
  file: string | null;
  /** The line lies in the focus loop's source lines. */
  inLoop: boolean;
  /** Instructions per base opcode (FFMA, LDG …) in this run. */
  opcodes: Record<string, number>;
  instructions: SassListingInstruction[];
}

/**
 * A piece of the focus loop's machine code: a machine-code loop (a backward branch) or a
 * straight-line block that runs once (e.g. the ×8 remainder nvcc emits between its ×16 main
 * loop and a ×4 remainder loop). `unroll` is source iterations per pass, from the work
 * instructions compared with the rolled build's one iteration.
 */
export interface SassMachineLoop {
  /** A, B, C … in address order. */
  name: string;
  startOffset: number;
  /** Offset of the last instruction (the backward branch of a loop). */
  endOffset: number;
  sourceLines: number[];
  unroll: number | null;
  kind: 'loop' | 'once';
  /** The piece with most work is the main loop; the rest are remainders. */
  role: 'main' | 'remainder';
  instructions: number;
  /** A straight-line piece inside an enclosing machine loop (the loop unrolled completely in it): it runs once per pass of that loop. */
  perPass?: boolean;
}

export interface SassListingData {
  /** Mangled name of the kernel. */
  kernel: string;
  demangled: string;
  arch: string;
  nvcc: string | null;
  /** as-written, default, full or the number. */
  factor: string;
  /** The source file. */
  file: string;
  /** 1-based line of the focus loop's keyword; null for a whole-kernel listing. */
  loopLine: number | null;
  /** First and last source line of the focus loop. */
  loopLines: { from: number; to: number } | null;
  instructions: number;
  bytes: number;
  registers: number | null;
  lines: SassListingLine[];
  loops: SassMachineLoop[];
  /** Branch labels nvdisasm defines in the kernel (.L_x_N) → offset. */
  labels: Record<string, number>;
  /** Where the stall samples came from, when the listing has them. */
  stalls: { samples: number; source: string } | null;
  /** Why stall samples are missing although a GPU run collected some (its code differs from this build …). */
  stallsNote: string | null;
}

export interface SassListingResult {
  listing: SassListingData;
  /** The rendered document. */
  text: string;
  /** Per document line (0-based): the 1-based source line it belongs to, or null (headers, blank lines). */
  sourceLines: (number | null)[];
  /** Document lines (0-based) of instructions from the focus loop's source lines. */
  loopBodyLines: number[];
  /** Per machine-code loop: its first and last document line (0-based). */
  machineLoops: { name: string; firstLine: number; lastLine: number }[];
}
