// The unroll nvcc applied to one source loop, read from the machine code in two independent ways
// that must agree.
//
// A machine-code loop (a natural back edge, sass/loops.ts) belongs to the source loop its back
// edge is attributed to: the line of the backward BRA (the loop's condition) lies in the loop's
// own lines, not in a nested loop's. So a pragma on an outer loop is measured on the outer loop's
// back edge, and a machine loop that an inner loop's code merely sits in (unrolled completely
// inside it) is not the inner loop's.
//
// Reading 1, the body: copies of one source iteration in a stretch of machine code. The
// stretch's arithmetic of the loop's lines (nested loops included: they run once per iteration)
// is counted per (opcode, line), and so is one iteration of the rolled build (the same file with
// the loop at `unroll 1`). Each pair gives a ratio; work that unrolling folds away (index
// arithmetic, constants of the counter) gives ratios near 0 and is left out, and the ratio most of
// the remaining per-iteration work agrees on is the number of copies. Memory instructions do not
// vote while there is other work: nvcc merges consecutive loads (four `LDS` of `As[ty][k]` become
// one `LDS.128`), which would count ×2 for ×4 (issue 40, NVIDIA's matrixMul).
// Reading 2, the trip structure: the loop's induction steps per pass (sass/induction.ts) against
// the rolled loop's: unrolled ×k, each counter and pointer moves k times as far per pass.
// A remaining machine loop's copies are the number both readings give; when they differ, or the
// body gives none, the copies are unknown with the reason. With only the body readable (a
// grid-stride loop: its step is a register), the body's count stands and says so.
//
// The main loop is the loop's machine loop with most work; the other loops of the same source loop
// and its straight-line copies outside them are the remainder nvcc emitted beside it. A loop with
// no machine loop left was unrolled completely: its factor is its trip count, checked against the
// body's copies in one pass of the enclosing machine loop (or in the function); without a known
// trip count, the body's copies.
import * as path from 'path';
import type { Kernel, Loop } from '../parse/model';
import { classifyInstruction, findSassLoops } from '../sass';
import type { SassFunction, SassInstruction, SassLoop } from '../sass';
import { inductionSteps, stepRatio } from '../sass/induction';

/** Work whose count scales with the iterations a stretch of code holds (arithmetic and memory). */
export const WORK_CLASSES = new Set<string>([
  'FP32',
  'FP64',
  'FP16_TENSOR',
  'LOAD_GLOBAL',
  'STORE_GLOBAL',
  'SHARED',
  'LOCAL',
  'SHUFFLE',
  'SPECIAL',
  'ATOMIC',
  'TEXTURE',
]);
/** Work that vectorisation cannot merge: arithmetic, shuffles, special functions (the body reading's first choice). */
const ARITHMETIC_CLASSES = new Set<string>(['FP32', 'FP64', 'FP16_TENSOR', 'SHUFFLE', 'SPECIAL']);
/**
 * The classes the body reading counts, in order of preference: the first that one rolled iteration
 * holds any of. Arithmetic; else integer work too (hashing); else memory too (a copy loop), which
 * the induction steps must then confirm.
 */
const BODY_CLASS_TIERS = [
  ARITHMETIC_CLASSES,
  new Set<string>([...ARITHMETIC_CLASSES, 'INT', 'CONVERT']),
  new Set<string>([...WORK_CLASSES, 'INT', 'CONVERT']),
];

/** Share of one iteration's work a straight-line stretch must hold to count as copies of it. */
const STRAIGHT_COPY_SHARE = 0.5;

export interface AppliedUnroll {
  /** The source loop's own machine loops, the main one (most work) first. */
  loops: SassLoop[];
  /** Copies of one source iteration per pass of the main loop; the trip count when unrolled completely. */
  copies: number | null;
  /** Why `copies` is null when something was measured (the readings disagree, or one iteration's work is not found); else null. */
  unknown: string | null;
  /** The two readings of the main piece (see the file header). */
  readings: UnrollReadings;
  /** Copies per pass of each of `loops` (0: unknown). */
  loopCopies: number[];
  /** No machine loop of its own is left: nvcc unrolled the loop completely. */
  fullyUnrolled: boolean;
  /**
   * Beside the main loop: the copies per pass of each other machine loop of the source loop
   * (largest first) and the copies in straight-line code outside them. Null when unrolled completely,
   * or when the copies of a remainder loop are unknown.
   */
  remainder: { loops: number[]; straight: number } | null;
  /** Unrolled completely inside an enclosing machine loop: that loop (its copies run once per pass of it). */
  enclosing: SassLoop | null;
  /**
   * Instructions of the loop's machine code: everything inside its machine loops (main and
   * remainder loops, whatever line the scheduler gave them) plus its straight-line remainder;
   * unrolled completely, the instructions of its lines in one pass of the enclosing machine loop
   * (or in the function), plus its straight-line copies outside that loop. Setup before the loop
   * is not counted.
   */
  instructions: number;
  /** Local-memory instructions among those: LDL and STL (spills, or an array the loop indexes moved to the stack). */
  local: { loads: number; stores: number };
  /**
   * The loop's copies at one place in the source (a loop around it unrolled: in its own function,
   * or in a caller it is inlined in): the rolled build has one machine loop per copy, and `loops` are those copies,
   * each unrolled the same, not a main loop and its remainders. 0 otherwise.
   */
  sameSiteCopies: number;
}

/** LDL and STL among `ins` (local memory: the thread's stack frame). */
export function localTraffic(ins: SassInstruction[]): { loads: number; stores: number } {
  return { loads: ins.filter(i => i.opcode === 'LDL').length, stores: ins.filter(i => i.opcode === 'STL').length };
}

function sameFile(a: string, b: string): boolean {
  return a === b || path.resolve(a) === path.resolve(b);
}

/** The innermost frame of an instruction's inline chain that lies in `file`. */
function frameInFile(ins: SassInstruction, file: string): number | null {
  const s = ins.source;
  if (!s) return null;
  for (const f of [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])]) if (sameFile(f.file, file)) return f.line;
  return null;
}

/** Any frame of the instruction in [from, to] of file (own line or an inlined-at call site). */
export function inSpan(ins: SassInstruction, file: string, loop: Loop): boolean {
  const s = ins.source;
  if (!s) return false;
  for (const f of [{ file: s.file, line: s.line }, ...(s.inlinedAt ?? [])])
    if (f.line >= loop.span.line && f.line <= loop.span.endLine && sameFile(f.file, file)) return true;
  return false;
}

/** Loops of the kernel strictly inside `loop`. */
function nestedLoops(kernel: Kernel, loop: Loop): Loop[] {
  return kernel.loops.filter(l => l !== loop && l.span.line >= loop.span.line && l.span.endLine <= loop.span.endLine);
}

/** Is the line one of the loop's own (inside it, not inside a nested loop)? */
function ownLine(kernel: Kernel, loop: Loop, line: number): boolean {
  if (line < loop.span.line || line > loop.span.endLine) return false;
  return !nestedLoops(kernel, loop).some(n => line >= n.span.line && line <= n.span.endLine);
}

/** The machine loops whose back edge is the source loop's (its condition's line). */
function ownMachineLoops(fn: SassFunction, file: string, kernel: Kernel, loop: Loop): SassLoop[] {
  const byAddress = new Map(fn.instructions.map(i => [i.address, i]));
  return findSassLoops(fn).filter(
    l =>
      l.natural &&
      l.branchAddresses.some(a => {
        const b = byAddress.get(a);
        const line = b ? frameInFile(b, file) : null;
        return line !== null && ownLine(kernel, loop, line);
      }),
  );
}

type Range = { headAddress: number; branchAddress: number };
const within = (i: SassInstruction, r: Range) => i.address >= r.headAddress && i.address <= r.branchAddress;

/** Counts per (opcode.modifiers @ line) of the loop's instructions (nested loops included) that `keep` accepts. */
export function profile(
  fn: SassFunction,
  file: string,
  loop: Loop,
  classes: Set<string>,
  keep: (i: SassInstruction) => boolean,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const i of fn.instructions) {
    if (!keep(i) || !inSpan(i, file, loop) || !classes.has(classifyInstruction(i))) continue;
    const key = `${i.opcode}.${i.modifiers.join('.')}@${frameInFile(i, file)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * Copies of one iteration (`perIteration`) in a stretch of code (`counts`): per key the ratio of
 * the counts; keys whose ratio is below 3/4 (folded away by unrolling) are left out; each
 * remaining ratio votes, with its per-iteration weight, for every whole number within 15% of it
 * (a large unroll folds a few copies of some instruction); the most weight wins. On a tie the
 * number most ratios round to exactly wins: in a ×8 loop of 16 inlined IMADs per iteration,
 * one counter VIADD per copy plus one (ratio 9) must not outvote the 48 instructions at exactly 8
 * only because 8 lies within 15% of 9. Then the larger. 0 when nothing of an iteration is there,
 * or when the winner holds less than `minShare` of one iteration's work.
 */
export function copiesOf(perIteration: Map<string, number>, counts: Map<string, number>, minShare = 0): number {
  const kept: { r: number; w: number }[] = [];
  for (const [k, b] of perIteration) {
    const r = (counts.get(k) ?? 0) / b;
    if (r >= 0.75) kept.push({ r, w: b });
  }
  const weight = (c: number, near: (x: { r: number }) => boolean) => kept.filter(near).reduce((s, x) => s + x.w, 0);
  let best = { c: 0, score: 0, exact: 0 };
  for (const { r } of kept) {
    const c = Math.max(1, Math.round(r));
    const tol = Math.max(0.5, 0.15 * c);
    const score = weight(c, x => Math.abs(x.r - c) <= tol);
    const exact = weight(c, x => Math.max(1, Math.round(x.r)) === c);
    const better = score > best.score || (score === best.score && (exact > best.exact || (exact === best.exact && c > best.c)));
    if (better) best = { c, score, exact };
  }
  const whole = [...perIteration.values()].reduce((a, b) => a + b, 0);
  return best.score >= minShare * whole ? best.c : 0;
}

/** The trip count of the loop in this function: a constant, or its instantiation's (from the demangled name). */
function tripCountIn(loop: Loop, kernel: Kernel, demangled: string | undefined): number | null {
  if (typeof loop.tripCount === 'number') return loop.tripCount;
  const byInst = loop.tripCountByInstantiation;
  if (!byInst?.length || !demangled) return null;
  const args = templateArguments(demangled);
  if (!args) return null;
  const values: Record<string, number> = {};
  kernel.templateParameters.forEach((p, k) => {
    const n = Number(args[k]?.replace(/[uUlL]+$/, ''));
    if (args[k] !== undefined && Number.isFinite(n)) values[p] = n;
  });
  const match = byInst.find(x => Object.entries(x.instantiation).every(([p, v]) => values[p] === v));
  return match && typeof match.tripCount === 'number' ? match.tripCount : null;
}

/** `void k<8, float>(float*)` → ["8", "float"]; null without template arguments. */
function templateArguments(demangled: string): string[] | null {
  const head = demangled.replace(/\(.*$/, '');
  const open = head.indexOf('<');
  if (open < 0) return null;
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of head.slice(open + 1)) {
    if (ch === '<' || ch === '(') depth++;
    if ((ch === '>' || ch === ')') && depth === 0) break;
    if (ch === '>' || ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/** The per-iteration profile: the rolled build's main machine loop of the source loop, with that loop. */
export function perIterationProfile(
  base: SassFunction,
  file: string,
  kernel: Kernel,
  loop: Loop,
): { counts: Map<string, number>; classes: Set<string>; loop: SassLoop } | null {
  const own = ownMachineLoops(base, file, kernel, loop);
  for (const classes of BODY_CLASS_TIERS) {
    let best: { counts: Map<string, number>; loop: SassLoop } | null = null;
    let bestN = 0;
    for (const l of own) {
      const c = profile(base, file, loop, classes, i => within(i, l));
      const n = [...c.values()].reduce((a, b) => a + b, 0);
      if (n > bestN) {
        best = { counts: c, loop: l };
        bestN = n;
      }
    }
    if (best) return { ...best, classes };
  }
  return null;
}

/** What one reading or both say about the copies in a piece of machine code (see the file header). */
export interface UnrollReadings {
  /** Copies of one iteration's work in the piece (the body reading); null: none found or no rolled build. */
  body: number | null;
  /** The growth of the induction steps against the rolled loop (the trip-structure reading); null: not readable. */
  steps: number | null;
  /** Why `steps` is what it is (the steps compared, or why there are none). */
  stepsBasis: string;
}

type PerIteration = NonNullable<ReturnType<typeof perIterationProfile>>;

/**
 * The copies per pass of machine loop `l` of `fn` from both readings: the number when they agree,
 * or the body's alone when the steps cannot be read; else null with the reason.
 */
function loopCopiesOf(
  fn: SassFunction,
  l: SassLoop,
  work: Map<string, number>,
  base: SassFunction | null,
  per: PerIteration | null,
): { copies: number | null; unknown: string | null; readings: UnrollReadings } {
  if (!base || !per) {
    return { copies: null, unknown: 'no rolled build to compare with', readings: { body: null, steps: null, stepsBasis: '' } };
  }
  const c = copiesOf(per.counts, work);
  const body = c > 0 ? c : null;
  const ratio = stepRatio(inductionSteps(fn, l, findSassLoops(fn)), inductionSteps(base, per.loop, findSassLoops(base)));
  const readings = { body, steps: ratio.factor, stepsBasis: ratio.reason };
  if (body === null) return { copies: null, unknown: "the machine loop holds no whole copy of one iteration's work", readings };
  if (ratio.factor === null || ratio.factor === body) return { copies: body, unknown: null, readings };
  const what = per.classes === ARITHMETIC_CLASSES ? 'arithmetic' : 'work';
  return {
    copies: null,
    unknown: `the machine readings disagree: the body holds ×${body} of one iteration's ${what}, the ${ratio.reason} say ×${ratio.factor}`,
    readings,
  };
}

/**
 * The applied unroll of `loop` in `fn`, with `base` the same function in the rolled build (the
 * loop at `unroll 1`; null: no per-iteration baseline, copies of a remaining loop unknown).
 */
export function appliedUnroll(
  fn: SassFunction,
  base: SassFunction | null,
  file: string,
  kernel: Kernel,
  loop: Loop,
  demangled?: string,
): AppliedUnroll {
  const per = base ? perIterationProfile(base, file, kernel, loop) : null;
  const classes = per?.classes ?? WORK_CLASSES;
  const own = ownMachineLoops(fn, file, kernel, loop);
  const work = (keep: (i: SassInstruction) => boolean) => profile(fn, file, loop, classes, keep);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const mine = fn.instructions.filter(i => inSpan(i, file, loop));
  const mineSet = new Set(mine);

  // The rolled build keeps one machine loop per copy of the loop (ggml's vec_dot_fattn_vec_KQ_f16,
  // inlined in a loop of its caller that nvcc unrolled: 16 copies). Counted only where something
  // makes copies: a device function (inlined wherever it is called) or a loop around it unrolled
  // completely; elsewhere two machine loops at unroll 1 are nvcc's own split of one loop.
  const madeCopies = kernel.qualifier === 'device' || parentUnrolledToo(fn, file, kernel, loop);
  const rolledLoops =
    base && madeCopies
      ? ownMachineLoops(base, file, kernel, loop).filter(l => total(profile(base, file, loop, classes, i => within(i, l))) > 0)
      : [];
  const rolledCopies = rolledLoops.length;
  // Loops of the source loop that hold its work (a loop of only its counter is no copy of it).
  const withWork = own
    .map(l => ({ l, w: work(i => within(i, l)) }))
    .filter(x => total(x.w) > 0)
    .sort((a, b) => total(b.w) - total(a.w) || a.l.headAddress - b.l.headAddress);
  // Only the innermost of nested ones (a latch attributed to the loop around another of its loops).
  const loops = withWork.filter(
    x => !withWork.some(o => o !== x && o.l.headAddress >= x.l.headAddress && o.l.branchAddress <= x.l.branchAddress),
  );

  if (loops.length) {
    const inOwn = (i: SassInstruction) => loops.some(x => within(i, x.l));
    const straightWork = work(i => !inOwn(i) && !isHeaderOnly(i, file, kernel, loop));
    const each = loops.map(x => loopCopiesOf(fn, x.l, x.w, base, per));
    // A straight-line copy holds most of an iteration's work: one instruction of the last
    // iteration that the scheduler recomputed after the loop is no copy.
    const straight = per ? copiesOf(per.counts, straightWork, STRAIGHT_COPY_SHARE) : 0;
    const counted = fn.instructions.filter(i => inOwn(i) || (mineSet.has(i) && straight > 0 && !isHeaderOnly(i, file, kernel, loop)));
    const rest = each.slice(1).map(e => e.copies ?? 0);
    const sameSite = rolledCopies > 1 && loops.length === rolledCopies && each.every(e => e.copies !== null && e.copies === each[0].copies);
    return {
      sameSiteCopies: sameSite ? loops.length : 0,
      loops: loops.map(x => x.l),
      copies: each[0].copies,
      unknown: each[0].copies === null ? each[0].unknown : null,
      readings: each[0].readings,
      loopCopies: each.map(e => e.copies ?? 0),
      fullyUnrolled: false,
      remainder: sameSite
        ? { loops: [], straight }
        : per && rest.every(c => c > 0)
          ? { loops: rest.sort((a, b) => b - a), straight }
          : null,
      enclosing: null,
      instructions: counted.length,
      local: localTraffic(counted),
    };
  }
  return unrolledCompletely(fn, file, kernel, loop, per, mine, demangled, base ? copiesPerPass(base, rolledLoops) : null);
}

/** The copies of a loop with no machine loop of its own left: its trip count, checked against the body's copies. */
function unrolledCompletely(
  fn: SassFunction,
  file: string,
  kernel: Kernel,
  loop: Loop,
  per: PerIteration | null,
  mine: SassInstruction[],
  demangled: string | undefined,
  rolled: { copies: number; enclosed: boolean } | null = null,
): AppliedUnroll {
  // Its copies run once per pass of the enclosing machine loop holding most of them; a machine
  // loop of a nested source loop (rolled inside each copy) encloses one copy of that loop only.
  const byAddress = new Map(fn.instructions.map(i => [i.address, i]));
  const nested = nestedLoops(kernel, loop);
  const ofNested = (l: SassLoop) =>
    l.branchAddresses.some(a => {
      const b = byAddress.get(a);
      const line = b ? frameInFile(b, file) : null;
      return line !== null && nested.some(n => line >= n.span.line && line <= n.span.endLine);
    });
  let enclosing: SassLoop | null = null;
  let most = 0;
  for (const l of findSassLoops(fn)) {
    if (!l.natural || ofNested(l)) continue;
    const n = mine.filter(i => within(i, l)).length;
    if (n > most || (n === most && enclosing && l.instructions < enclosing.instructions)) {
      enclosing = l;
      most = n;
    }
  }
  const region = (i: SassInstruction) => !enclosing || within(i, enclosing);
  const trip = tripCountIn(loop, kernel, demangled);
  const c = per ? copiesOf(per.counts, profile(fn, file, loop, per.classes, region)) : 0;
  let body = c > 0 ? c : null;
  let unknown: string | null = null;
  // Several copies of the loop (the rolled build has a machine loop for each): the code holds
  // every copy's iterations, so one copy's are the share of each; not a whole share: unknown.
  // The copies per pass are the rolled build's only when a loop around them is a machine loop in
  // both builds or in neither (heavy.cu's rows<256, V>: the caller's 4-step loop unrolled around
  // the rolled loop, kept rolled around the 256 unrolled iterations).
  if (body !== null && rolled && rolled.copies > 1) {
    const each = body / rolled.copies;
    if (rolled.enclosed !== (enclosing !== null)) {
      unknown = `no machine loop is left, and how many of the loop's ${rolled.copies} copies (${rolled.copies} machine loops when rolled) one pass holds is not known: a loop around them is a machine loop in one build and not in the other`;
      body = null;
    } else if (Number.isInteger(each)) body = each;
    else {
      unknown = `no machine loop is left, and the code's ×${body} of one iteration's work is spread over the loop's ${rolled.copies} copies (${rolled.copies} machine loops when rolled) unevenly`;
      body = null;
    }
  }
  let copies: number | null = trip ?? body;
  // An enclosing machine loop unrolled ×m holds m × trip copies per pass: a multiple agrees.
  if (trip !== null && body !== null && body % trip !== 0) {
    copies = null;
    unknown = `the machine readings disagree: no machine loop is left (trip count ${trip}), but the ${enclosing ? 'enclosing machine loop holds' : 'code holds'} ×${body} of one iteration's work`;
  } else if (trip === null && body !== null && enclosing === null && parentUnrolledToo(fn, file, kernel, loop)) {
    // The code holds the copies of both loops (convolutionSeparable's `j` loop inside its `i`
    // loop: 136 = 8 × 17): without this loop's trip count they cannot be told apart.
    copies = null;
    unknown = `no machine loop is left, but the enclosing loop was unrolled completely too: the code's ×${body} counts the copies of both, and this loop's trip count is not known`;
  } else if (copies === null) unknown ??= 'no machine loop is left, and neither the trip count nor the copies in the code are known';
  // Its code outside the enclosing machine loop counts too when it holds a straight-line copy of
  // the work (at least half an iteration's), as beside a remaining machine loop: a pass peeled
  // after the loop, or a second inlined copy the line table files under the same call site (ggml's
  // fattn-tile.cuh:609 at full unroll: the bounds-checked tail call's copy carries the main call's
  // chain, issue 40). Setup and single instructions the scheduler moved out are not counted.
  const outside = (i: SassInstruction) => !region(i);
  const straight = enclosing && per ? copiesOf(per.counts, profile(fn, file, loop, per.classes, outside), STRAIGHT_COPY_SHARE) : 0;
  const counted = mine.filter(i => region(i) || (straight > 0 && !isHeaderOnly(i, file, kernel, loop)));
  return {
    loops: [],
    copies: mine.length ? copies : null,
    unknown: mine.length ? unknown : null,
    readings: { body, steps: null, stepsBasis: 'no machine loop is left' },
    loopCopies: [],
    fullyUnrolled: mine.length > 0,
    remainder: null,
    enclosing,
    instructions: counted.length,
    local: localTraffic(counted),
    sameSiteCopies: 0,
  };
}

/**
 * The rolled build's copies of the loop (its machine loops with work) in one pass of the machine
 * loop around most of them, and whether there is one (else: all of them, once per run).
 */
function copiesPerPass(base: SassFunction, rolledLoops: SassLoop[]): { copies: number; enclosed: boolean } {
  let best: { around: SassLoop; n: number } | null = null;
  for (const l of findSassLoops(base)) {
    if (!l.natural || rolledLoops.some(r => r.headAddress === l.headAddress && r.branchAddress === l.branchAddress)) continue;
    const n = rolledLoops.filter(r => r.headAddress >= l.headAddress && r.branchAddress <= l.branchAddress).length;
    if (n > 0 && (!best || n > best.n || (n === best.n && l.instructions < best.around.instructions))) best = { around: l, n };
  }
  return best ? { copies: best.n, enclosed: true } : { copies: rolledLoops.length, enclosed: false };
}

/** The innermost source loop around `loop` has no machine loop of its own either (unrolled completely). */
function parentUnrolledToo(fn: SassFunction, file: string, kernel: Kernel, loop: Loop): boolean {
  const around = kernel.loops.filter(l => l !== loop && l.span.line <= loop.span.line && l.span.endLine >= loop.span.endLine);
  const parent = around.sort((a, b) => b.span.line - a.span.line)[0];
  return parent !== undefined && ownMachineLoops(fn, file, kernel, parent).length === 0;
}

/** An instruction of the loop's header line only (setup or test of the counter), in a loop whose body has other lines. */
export function isHeaderOnly(i: SassInstruction, file: string, kernel: Kernel, loop: Loop): boolean {
  void kernel;
  return loop.span.endLine > loop.span.line && frameInFile(i, file) === loop.line;
}
