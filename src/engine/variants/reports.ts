// What inspecting variants reports: per kernel of a file its SASS size and resources, per loop
// variant its instructions and the unroll nvcc applied, per kernel-sweep variant every listed
// loop's measure. The inspector (inspect.ts) fills these; the server, CLI and sweeps read them.
import type { CompilerMessage } from '../toolchain/nvccErrors';
import type { SassClass } from '../sass';
import type { IcacheLoopFacts } from '../sass/issueRate';
import type { BuildResult } from './build';
import type { UnrollFactor } from './factors';
import type { UnrollReadings } from './appliedUnroll';

export interface KernelSass {
  name: string;
  demangled: string;
  instructions: number;
  bytes: number;
  registers: number;
  spillStores: number;
  spillLoads: number;
  sharedBytes: number;
  stackBytes: number;
  /** LDL / STL instructions in the function (null without a listing). */
  localLoads?: number | null;
  localStores?: number | null;
  /** Instructions per opcode class (FP32, LOAD_GLOBAL, …); empty without a disassembler. */
  classes: Partial<Record<SassClass, number>>;
  /** Theoretical occupancy at `blockSize` threads (launch bounds, else 256), when known. */
  occupancy: { blockSize: number; occupancy: number; limiter: string } | null;
}

interface VariantFailure {
  kind: string;
  messages: CompilerMessage[];
}

/** One copy of a loop whose code appears more than once in the kernel (inlined at several call sites). */
export interface LoopCopy {
  /** Where: "inlined at line 14", "not inlined". */
  place: string;
  /** This copy's instructions (the same count as loopInstructions, for this copy alone). */
  instructions: number;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
}

export interface LoopVariant {
  factor: UnrollFactor;
  key: string;
  status: BuildResult['status'];
  /** Mangled name of the kernel whose code holds the loop (the one with most of its instructions). */
  kernel: string | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  /** Instructions whose line info falls inside the loop (nested loops included). */
  loopInstructions: number | null;
  /** Copies of one source iteration in the hottest machine-code loop covering the source loop. */
  effectiveUnroll: number | null;
  /** Why effectiveUnroll is null although the loop was measured: the machine-code readings disagree (appliedUnroll.ts). */
  unrollUnknown?: string | null;
  /** The body and induction-step readings behind effectiveUnroll. */
  unrollReadings?: UnrollReadings | null;
  /** No machine-code loop is left for this source loop: it was unrolled completely. */
  fullyUnrolled: boolean;
  /** Beside the main machine loop: copies per pass of the loop's other machine loops and straight-line copies (null when unrolled completely or unknown). */
  remainder?: { loops: number[]; straight: number } | null;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** Each copy of the loop when its code appears more than once in the kernel; loopInstructions counts them all. Absent or null: once. */
  loopCopies?: LoopCopy[] | null;
  /** The kernel's stack frame in bytes (ptxas -v): local memory per thread, spills and local arrays. */
  stackBytes?: number | null;
  /** LDL / STL instructions in the loop's machine code (the same code as loopInstructions). */
  localLoads?: number | null;
  localStores?: number | null;
  /** An earlier variant in the list whose kernel code is identical, instruction for instruction. */
  identicalTo: UnrollFactor | null;
  cached: boolean;
  compileMs: number;
  failure: VariantFailure | null;
  /** Instructions of every function in this variant's cubin (other instantiations included). */
  kernelSizes?: Record<string, number>;
  /** Hash of every kernel's machine code in the cubin: equal hashes run the same code (the bench measures them once). */
  machineCode?: string | null;
  /** The loop's hot machine code for the instruction-cache model (icache/model.ts); null when it runs once or is unknown. */
  icache?: IcacheLoopFacts | null;
  /** Why `icache` is null for a measured loop (its code runs once: no machine loop repeats it). */
  icacheNone?: string | null;
  /** Theoretical resident warps per SM at the launch-bounds block size (else 256): the i-cache prediction's occupancy before a GPU run. */
  warpsPerSm?: number | null;
}

export interface LoopReport {
  line: number;
  kernel: string;
  /**
   * The function every row measures: the one holding most of the loop's code in the rolled build
   * (or the one --kernel names); `of`: how many functions hold some of it. Null when unknown.
   */
  instantiation?: {
    name: string;
    demangled: string;
    of: number;
    /** How many times the loop runs in it, from the SASS: a number, 'runtime', or null (unknown, or the only one). */
    trips?: TripCount;
  } | null;
  /** The factor the loop has as written. */
  written: UnrollFactor;
  /** The architecture the variants were built for. */
  arch: string;
  variants: LoopVariant[];
  /** Plain-language notes: requested factors nvcc ignored or capped. */
  notes: string[];
  /** Why effective unroll is unknown, when it is (no disassembler with line info). */
  limitation: string | null;
}

export interface FileSassReport {
  arch: string;
  nvcc: string | null;
  status: BuildResult['status'];
  kernels: KernelSass[];
  failure: VariantFailure | null;
  /** Per loop (line) in the file as written: effective unroll vs the rolled build. */
  loops: {
    line: number;
    kernel: string | null;
    loopInstructions: number | null;
    effectiveUnroll: number | null;
    fullyUnrolled: boolean;
    /** The loop's hot machine code for the instruction-cache model; null when it runs once or is unknown. */
    icache?: IcacheLoopFacts | null;
    /**
     * Every function whose code holds the loop, most of its code first, each measured on its own,
     * when there are several (template instantiations); `kernel` above is the first.
     */
    instantiations?: LoopInstantiation[];
  }[];
  cached: boolean;
  disassembler: 'nvdisasm' | 'cuobjdump' | 'elf';
  /** Where the compile's flags came from: the database and entry, or that none had one and where the search looked. */
  compileFlags?: CompileFlagsOrigin;
  /** Why the loops' instructions and effective unroll are unknown, when they are (no nvdisasm listing). */
  limitation?: string | null;
}

/** How many times an instantiation runs a loop: a number, 'runtime' (not a compile-time constant), or null (unknown). */
export type TripCount = number | 'runtime' | null;

/** Where a compile's flags came from (flags.ts): every compile says which database and entry, or where it looked. */
export interface CompileFlagsOrigin {
  /** The compile_commands.json used; null when none had an entry for the file. */
  database: string | null;
  /** Its entry: the file it names and the folder its command ran in. */
  entry: { file: string; directory: string } | null;
  /** No database used: the folders searched (each with its build*\/ and out/), nearest first. */
  looked: string[];
  /** The same in one line for people. */
  text: string;
}

/** One instantiation's measure of a loop in the file as written. */
export interface LoopInstantiation {
  name: string;
  demangled: string;
  loopInstructions: number;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
}

/** The function every variant of a kernel sweep measures, and how many hold the loops' code. */
export interface InstantiationChoice {
  name: string;
  demangled: string;
  of: number;
  /** Kept from an earlier choice (a sweep's first builds) rather than chosen from this call's builds. */
  pinned: boolean;
}

/** One loop's measurement inside a variant (see measureLoop). */
interface LoopMeasurement {
  loopInstructions: number | null;
  effectiveUnroll: number | null;
  fullyUnrolled: boolean;
  icache?: IcacheLoopFacts | null;
}

/** A variant of a whole kernel: several loops' factors at once, every listed loop measured. */
export interface KernelVariant {
  key: string;
  status: BuildResult['status'];
  /** Mangled name of the function measured: the same for every variant of one call (see chooseInstantiation). */
  kernel: string | null;
  /** Its demangled name (template arguments): the instantiation the row measured. */
  demangled: string | null;
  /** How many functions hold some of the loops' code (several: template instantiations). */
  instantiations: number | null;
  kernelInstructions: number | null;
  kernelBytes: number | null;
  registers: number | null;
  spillStores: number | null;
  spillLoads: number | null;
  /** Theoretical occupancy (0..1) at the launch-bounds block size (else 256). */
  occupancy: number | null;
  /** Loop line → measurement; empty when the build failed. */
  loops: Record<string, LoopMeasurement>;
  /** When no function matched: the cubin's functions, demangled (what could have been measured). */
  functions?: string[];
  /** Hash of the kernel's machine code: equal hashes mean identical code. */
  codeHash: string | null;
  /** Hash of every function's machine code in the cubin (a benchmark times them all); absent when not built. */
  machineCode?: string | null;
  /** Every function of the cubin → its SASS instructions. */
  kernelSizes?: Record<string, number>;
  cached: boolean;
  compileMs: number;
  failure: VariantFailure | null;
}
