// The analysis model of one CUDA source file. These shapes are also the `scan --json`
// contract (see docs/cli.md), so change them only together with that document.

/** 1-based line and 0-based column, as editors and compilers print them. */
export interface SourceSpan {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export type KernelQualifier = 'global' | 'device';

export type LoopKind = 'for' | 'while' | 'do';

/**
 * What an unroll pragma asks for.
 * - full:    `#pragma unroll`            (unroll completely; needs a compile-time trip count)
 * - count:   `#pragma unroll 4`          (literal factor)
 * - expr:    `#pragma unroll (B/2)`      (integral constant expression; factor when we can evaluate it)
 * - disable: `#pragma unroll 1`          (keep the loop rolled)
 */
type UnrollPragmaKind = 'full' | 'count' | 'expr' | 'disable';

export interface UnrollPragma {
  kind: UnrollPragmaKind;
  factor: number | null;
  /** The pragma's text after `#pragma` / inside `_Pragma("…")`, e.g. "unroll 4". */
  text: string;
  line: number;
  /** Where the pragma itself sits; used for hover and diagnostics. */
  span: SourceSpan;
  /** `#pragma` directive, the `_Pragma("…")` operator, or a library macro (see `macro`). */
  form: 'directive' | 'operator' | 'macro';
  /** For form "macro": the macro as written, what it expands to and where that meaning comes from. */
  macro?: PragmaMacroUse;
  /**
   * When the pragma reaches its loop across a preprocessor conditional: the branch it holds in,
   * e.g. `#if defined(__CUDA_ARCH__)` (the pragma's branch) or `#else of #ifdef USE_ONES` (the
   * loop's branch, for a pragma before `#ifdef`'d loops).
   */
  condition?: string;
}

/**
 * Where a macro's meaning comes from: the `#define` the file sees (in itself or a header it
 * includes, expanded through every level), or the built-in table of a well-known library when no
 * readable header defines the name.
 */
export type MacroOrigin =
  { kind: 'header'; file: string; line: number } | { kind: 'builtin'; library: 'CCCL' | 'CUTLASS' | 'CuTe' | 'PyTorch' };

/** An unroll macro (`_CCCL_PRAGMA_UNROLL_FULL()`, `CUTLASS_PRAGMA_UNROLL`, a project's own) in front of a loop. */
export interface PragmaMacroUse {
  name: string;
  /** The invocation as written, e.g. `_CCCL_PRAGMA_UNROLL(4)`. */
  written: string;
  /** The library whose own spelling variants use (`_CCCL_PRAGMA_UNROLL(8)`), when the name is a known one. */
  library?: 'CCCL' | 'CUTLASS' | 'CuTe' | 'PyTorch';
  /** The pragma text it expands to, e.g. `unroll 4`. */
  expandsTo: string;
  origin: MacroOrigin;
  /** Each step of the expansion (`_CCCL_PRAGMA(unroll)`, `_Pragma(_CCCL_TO_STRING(unroll))`, …), when read from headers. */
  chain?: string[];
}

/** A qualifier macro in a function head (`_CCCL_DEVICE`, `CUTLASS_HOST_DEVICE`, a project's own). */
interface QualifierMacroUse {
  name: string;
  /** What nvcc sees, e.g. `__forceinline__ __device__`. */
  expandsTo: string;
  origin: MacroOrigin;
}

/**
 * A compile-time trip count, "runtime" when the bounds depend on values known only at run
 * time (kernel arguments, threadIdx, memory), or "dependent" when it depends on a template
 * parameter whose instantiation is not visible in this file.
 */
export type TripCount = number | 'runtime' | 'dependent';

export interface Loop {
  line: number;
  kind: LoopKind;
  /** 0 for a loop directly in the function body, 1 inside one loop, … */
  depth: number;
  pragma: UnrollPragma | null;
  /**
   * When the pragmas before the loop sit in different branches of one conditional (`#if A
   * #pragma unroll 4 #else #pragma unroll 2 #endif`): `pragma` is the first branch's, these the
   * others', each with its condition.
   */
  alternativePragmas?: UnrollPragma[];
  /**
   * An upper-case name written alone right before the loop that is no unroll macro we can
   * resolve (a pragma macro from a header that could not be read, perhaps): the loop's pragma
   * is unknown.
   */
  unknownMacro?: string;
  tripCount: TripCount;
  /**
   * With tripCount "dependent": the template parameters (or counters of enclosing fully unrolled
   * loops) the loop's header names. Empty: a compile-time constant this file does not let us
   * evaluate (a header's constant, wmma `num_elements`): nothing depends on a template argument.
   */
  tripDependsOn?: string[];
  /** With tripCount "dependent" and instantiations visible in the file: the trip count of each. */
  tripCountByInstantiation?: { instantiation: Record<string, number>; tripCount: TripCount }[];
  /**
   * With tripCount "dependent": instantiations the file names (`iter<warp_size, DV>` in another
   * template) none of whose arguments evaluate here, so no trip count per instantiation.
   */
  unevaluatedInstantiations?: number;
  /**
   * With unevaluatedInstantiations: the names the trip count depends on that some of those
   * instantiations leave unbound (`type` of `mmq<type, 8>` written in another template whose
   * own instantiations this file does not show); empty when each binds them all and a constant
   * this file cannot evaluate keeps the count open.
   */
  unevaluatedParameters?: string[];
  /** The file shows more instantiations than were read: the trip counts given are those of the first N. */
  instantiationsCapped?: number;
  span: SourceSpan;
  /** Induction variable when the loop has the canonical `for (int i = a; i < b; i += s)` shape. */
  inductionVariable: string | null;
  /** Source text of the condition, for hover. */
  conditionText: string;
  /**
   * Source text of a `for` loop's initializer (`int i = tid`), when it has one: a warning that the
   * trip count is run time quotes it with the condition, since the run-time part may be the start.
   */
  initText?: string;
  /** Line of the enclosing loop, or null at depth 0. */
  parentLine: number | null;
  /** Statements in the body (nested loops count as one statement each). */
  bodyStatements: number;
  /** For `for (k = a; k < b; k += s)` with constant a and b: b - a (what a manual unroll must divide). */
  constantExtent: number | null;
}

/**
 * How the copies are written (see src/engine/parse/manualUnroll.ts for examples):
 * - strided-body:        a loop stepping by U whose body repeats one statement U times
 * - offset-run:          straight-line statements differing by a constant index offset
 * - warp-tail:           an unrolled warp-reduction tail (offsets halved down to 1)
 * - coarsening:          one thread computing N outputs via `N*threadIdx` indexing
 * - multi-declarator:    one declaration whose declarators load stepping elements (`a0 = g[i], a1 = g[i + s], …`)
 * - element-assignments: `v[0] = x[i]; v[1] = x[i + 1]; …` (stepping element, stepping value)
 * - accumulate-chain:    `sum += a[i]; sum += a[i + 1]; …` or `acc[0] += …; acc[1] += …; …`
 * - expression-sum:      copies summed in one expression (`a[i] + a[i + 1] + a[i + 2] + …`)
 * - vector-load:         one `float4`/`int2`/… load through a cast pointer whose components are all used
 * - block-level:         each thread block reduces N data blocks (`idx = blockIdx.x * blockDim.x * N + threadIdx.x`,
 *                        reads at `idx + k * blockDim.x`, k = 0…N-1): the host launches grid / N blocks
 */
export type ManualUnrollPattern =
  | 'strided-body'
  | 'offset-run'
  | 'warp-tail'
  | 'coarsening'
  | 'multi-declarator'
  | 'element-assignments'
  | 'accumulate-chain'
  | 'expression-sum'
  | 'vector-load'
  | 'block-level';

export interface ManualUnroll {
  line: number;
  endLine: number;
  pattern: ManualUnrollPattern;
  factor: number;
  /** For strided-body: whether each copy is guarded by `if (k + j < n)` or a remainder loop follows. */
  guarded?: boolean;
  /** Short explanation shown in hover, e.g. "8 loads at idx + j*blockDim.x". */
  detail: string;
  /** For vector-load: the vector type loaded, e.g. "float4" (factor is its width). */
  vectorType?: string;
  /** For block-level: what the host divides the grid by (the data blocks one thread block reduces). */
  gridDivisor?: number;
}

export interface Kernel {
  name: string;
  qualifier: KernelQualifier;
  line: number;
  span: SourceSpan;
  /** Template parameter names, in order; empty for non-templates. */
  templateParameters: string[];
  /** Library qualifier macros in the head (`_CCCL_DEVICE`, `CUTLASS_HOST_DEVICE`), when there are any. */
  qualifierMacros?: string[];
  /** What each of `qualifierMacros` expands to and where that comes from (hover). */
  qualifierMacroUses?: QualifierMacroUse[];
  /** `__launch_bounds__(…)` arguments as written, or null. */
  launchBounds: string[] | null;
  /** Template arguments of each instantiation visible in the file, by parameter name. */
  instantiations: Record<string, number>[];
  /**
   * A template with no instantiation read whose name the file still uses outside its definition
   * (in a macro, as a pointer): its instantiations may be there, unread, so none is claimed absent.
   */
  usedUnread?: true;
  loops: Loop[];
  manualUnrolls: ManualUnroll[];
}

/** A `#pragma unroll` that is not followed by a loop (nvcc ignores it, with a warning at best). */
export interface StrayPragma {
  pragma: UnrollPragma;
  reason: string;
}

/** A device function written in the file that the analysis could not read (unparsedFunctions.ts). */
export interface UnparsedFunction {
  name: string;
  /** 1-based line of its head. */
  line: number;
  /** Why: the syntax error tree-sitter stopped at, or the analysis's failure. */
  reason: string;
}

export interface FileAnalysis {
  path: string;
  kernels: Kernel[];
  strayPragmas: StrayPragma[];
  /** True when tree-sitter found syntax errors; results are best effort then. */
  hasSyntaxErrors: boolean;
  /** Device functions the file defines that are not in `kernels`, with why; absent when none. */
  unparsedFunctions?: UnparsedFunction[];
  /** What reading the file's headers left out (the include work budget ran out), when anything. */
  readWarnings?: string[];
}
