// Static findings about unrolling, computed from the analysis alone (no compiler needed).
// The language server turns them into diagnostics; the CLI can print them.
import type { FileAnalysis, Kernel, Loop, ManualUnroll, SourceSpan } from './model';
import { pragmaAsWritten, unevaluatedInstantiationsText } from './describe';

type FindingCode =
  | 'pragma-without-loop'
  | 'full-unroll-runtime-trip'
  | 'full-unroll-dependent-trip'
  | 'nested-unroll-bloat'
  | 'manual-unroll-no-remainder'
  | 'unparsed-function';

export interface Finding {
  code: FindingCode;
  severity: 'warning' | 'information';
  span: SourceSpan;
  message: string;
  kernel?: string;
}

export interface FindingOptions {
  /** Estimated statement copies in a fully unrolled nest above which we warn. */
  bloatThresholdStatements: number;
}

const DEFAULT_FINDING_OPTIONS: FindingOptions = { bloatThresholdStatements: 2048 };

/** How many copies of its body a loop's pragma puts into the code (1 when rolled). */
function bodyCopies(loop: Loop): number {
  const p = loop.pragma;
  const trip = typeof loop.tripCount === 'number' ? loop.tripCount : null;
  if (!p || p.kind === 'disable') return 1;
  if (p.kind === 'full') return trip ?? 1;
  if (p.factor === null) return 1;
  return trip !== null ? Math.max(1, Math.min(p.factor, trip)) : p.factor;
}

/** Statement copies after unrolling, counting nested loops' expansions. */
function expandedStatements(loop: Loop, children: Map<number, Loop[]>): number {
  const kids = childrenOf(loop, children);
  const own = Math.max(1, loop.bodyStatements - kids.length);
  let inner = 0;
  for (const k of kids) inner += expandedStatements(k, children);
  return bodyCopies(loop) * (own + inner);
}

/**
 * Loops by their parent's line. Loops nest on one line too (`for (…) for (…) x;`): callers take
 * only the children one level deeper than the loop (childrenOf), or a loop would be its own child.
 */
function childrenByParent(kernel: Kernel): Map<number, Loop[]> {
  const m = new Map<number, Loop[]>();
  for (const l of kernel.loops) {
    if (l.parentLine === null) continue;
    if (!m.has(l.parentLine)) m.set(l.parentLine, []);
    m.get(l.parentLine)!.push(l);
  }
  return m;
}

function childrenOf(loop: Loop, children: Map<number, Loop[]>): Loop[] {
  return (children.get(loop.line) ?? []).filter(k => k.depth === loop.depth + 1);
}

function fullyUnrolledChain(loop: Loop, children: Map<number, Loop[]>): number {
  const self = loop.pragma?.kind === 'full' && typeof loop.tripCount === 'number' ? 1 : 0;
  let best = 0;
  for (const k of childrenOf(loop, children)) best = Math.max(best, fullyUnrolledChain(k, children));
  return self + best;
}

function manualUnrollLoop(kernel: Kernel, m: ManualUnroll): Loop | undefined {
  return kernel.loops.find(l => l.line === m.line);
}

/**
 * What the file's instantiations give as trip counts: the distinct numbers, and how many we
 * could not evaluate (an argument that is itself a template parameter or a header's constant);
 * "dependent" is no trip count and is never printed as one.
 */
/** `c0`, the counter of the unrolled loop at line 10, and `CH`, `D` */
function counterText(names: string[], counters: Map<string, number>): string {
  const own = names.filter(n => counters.has(n));
  const rest = names.filter(n => !counters.has(n));
  const c = own.map(n => `\`${n}\`, the counter of the unrolled loop at line ${counters.get(n)}`).join(', ');
  return rest.length ? `${c}, and ${rest.map(n => `\`${n}\``).join(', ')}` : c;
}

/** The induction variables of the loops around `loop` (by parentLine), each with its loop's line. */
function enclosingCounters(kernel: Kernel, loop: Loop): Map<string, number> {
  const out = new Map<string, number>();
  for (let line = loop.parentLine, hops = 0; line !== null && hops < 64; hops++) {
    const parent = kernel.loops.find(l => l.line === line);
    if (!parent) break;
    if (parent.inductionVariable && !out.has(parent.inductionVariable)) out.set(parent.inductionVariable, parent.line);
    line = parent.parentLine;
  }
  return out;
}

function instantiationsText(byInst: NonNullable<Loop['tripCountByInstantiation']>, kernel: Kernel, capped?: number): string {
  if (!byInst.length)
    return kernel.usedUnread
      ? ': its name is used elsewhere in this file (a macro, a function pointer) where no instantiation was read, so none is evaluated.'
      : ', with no instantiation visible in this file.';
  const numbers = [...new Set(byInst.map(b => b.tripCount).filter((t): t is number => typeof t === 'number'))];
  const runtime = byInst.some(b => b.tripCount === 'runtime');
  const rest = byInst.filter(b => typeof b.tripCount !== 'number' && b.tripCount !== 'runtime').length;
  const parts = [...numbers.map(String), ...(runtime ? ['a run-time count'] : [])];
  // (no count of them: see unevaluatedInstantiationsText)
  if (!parts.length) return ': Unroll Lens could not evaluate the arguments of the instantiations in this file.';
  const subject = capped ? `the first ${capped} instantiations read in this file (it shows more)` : 'the instantiations in this file';
  return `: ${subject} give ${parts.join(', ')}${rest ? ' (and some whose arguments Unroll Lens could not evaluate)' : ''}.`;
}

/** The loop's start and condition as written (`i_q = tid; i_q < N_Q_TILE`): the run-time part may be either. */
function loopHeader(loop: Loop): string {
  const parts = [loop.initText, loop.conditionText].filter(Boolean);
  return parts.length ? ` (\`${parts.join('; ')}\`)` : '';
}

export function computeFindings(analysis: FileAnalysis, options: FindingOptions = DEFAULT_FINDING_OPTIONS): Finding[] {
  const out: Finding[] = [];
  for (const s of analysis.strayPragmas) {
    out.push({
      code: 'pragma-without-loop',
      severity: 'warning',
      span: s.pragma.span,
      message: `${pragmaAsWritten(s.pragma)} is not followed by a loop: nvcc ignores it.`,
    });
  }
  for (const u of analysis.unparsedFunctions ?? []) {
    out.push({
      code: 'unparsed-function',
      severity: 'warning',
      span: { line: u.line, column: 0, endLine: u.line, endColumn: 0 },
      kernel: u.name,
      message: `\`${u.name}\` could not be read: ${u.reason}. Its loops and unroll pragmas are not analysed.`,
    });
  }
  for (const kernel of analysis.kernels) {
    const children = childrenByParent(kernel);
    for (const loop of kernel.loops) {
      const p = loop.pragma;
      if (p?.kind === 'full' && loop.tripCount === 'runtime') {
        out.push({
          code: 'full-unroll-runtime-trip',
          severity: 'warning',
          span: p.span,
          kernel: kernel.name,
          message:
            `${pragmaAsWritten(p)} asks for a full unroll, but the trip count of this ${loop.kind} loop` +
            loopHeader(loop) +
            ' is not a compile-time constant: nvcc cannot fully unroll it; it unrolls it partially by its own choice, or leaves it a loop.',
        });
      } else if (p?.kind === 'full' && loop.tripCount === 'dependent' && loop.tripDependsOn?.length) {
        // Only where a template argument decides the trip count: a constant we merely cannot
        // evaluate (a header's, wmma's num_elements) is nvcc's to unroll, with nothing to tell.
        const byInst = loop.tripCountByInstantiation;
        const counters = enclosingCounters(kernel, loop);
        const names = loop.tripDependsOn.map(n => `\`${n}\``).join(', ');
        out.push({
          code: 'full-unroll-dependent-trip',
          severity: 'information',
          span: p.span,
          kernel: kernel.name,
          message: loop.tripDependsOn.some(n => counters.has(n))
            ? (p.form === 'macro' ? `${pragmaAsWritten(p)}: full` : 'Full') +
              ` unroll of a loop whose trip count depends on ${counterText(loop.tripDependsOn, counters)}: a constant in each ` +
              'copy of the unrolled loop around it, so each copy is unrolled; its code size grows with the trip counts.'
            : (p.form === 'macro' ? `${pragmaAsWritten(p)}: full` : 'Full') +
              ` unroll of a loop whose trip count depends on ${names}` +
              (loop.unevaluatedInstantiations
                ? `: ${unevaluatedInstantiationsText(loop)}.`
                : instantiationsText(byInst ?? [], kernel, loop.instantiationsCapped)) +
              ' Each instantiation is unrolled separately; its code size grows with the trip count.',
        });
      }
      if (loop.parentLine === null || !kernel.loops.some(l => l.line === loop.parentLine)) {
        // Outermost loop of a nest: estimate the straight-line size of nested full unrolls.
        if (fullyUnrolledChain(loop, children) >= 2) {
          const size = expandedStatements(loop, children);
          if (size > options.bloatThresholdStatements) {
            out.push({
              code: 'nested-unroll-bloat',
              severity: 'warning',
              span: loop.pragma?.span ?? loop.span,
              kernel: kernel.name,
              message:
                `Nested full unrolls expand this loop nest to about ${size.toLocaleString('en-US')} statement copies ` +
                `(threshold ${options.bloatThresholdStatements.toLocaleString('en-US')}): the straight-line code may overflow ` +
                'the instruction cache and stall warps on instruction fetch (ncu: no_instruction).',
            });
          }
        }
      }
    }
    for (const m of kernel.manualUnrolls) {
      if (m.pattern !== 'strided-body' || m.guarded) continue;
      const loop = manualUnrollLoop(kernel, m);
      const extent = loop?.constantExtent ?? null;
      if (extent !== null && extent % m.factor === 0) continue; // constant bounds that divide: no tail
      // A bound we could not evaluate (`RegArray::kElements`, a template's `C::Nb / 2`) is a
      // compile-time value that may well divide: only a run-time trip count provably can leave a tail.
      if (extent === null && loop?.tripCount !== 'runtime') continue;
      out.push({
        code: 'manual-unroll-no-remainder',
        severity: 'warning',
        span: loop?.span ?? { line: m.line, column: 0, endLine: m.line, endColumn: 0 },
        kernel: kernel.name,
        message:
          `Manually unrolled ×${m.factor} without a remainder guard: when the trip count is not a multiple of ` +
          `${m.factor} the last iterations are ${loop && /\+\s*\d|-\s*\d/.test(loop.conditionText) ? 'skipped' : 'read out of bounds or skipped'}. ` +
          `Guard each copy (\`if (k + j < n)\`) or add a remainder loop.`,
      });
    }
  }
  return out.sort((a, b) => a.span.line - b.span.line || a.span.column - b.span.column);
}
