// Loops in machine code: backward branches.
//
// A loop is a `BRA` (predicated or not, any modifiers) whose resolved target address is at or
// before its own address. Not counted:
// - the `BRA` to itself that ptxas puts after the last EXIT (an end-of-code trap, never run);
// - RET/CALL/BSSY/WARPSYNC targets (they are no jumps back).
// Several backward branches to the same head (a `continue`, or a loop with two latches) form
// one loop: `branchAddress` is the last of them and `branchAddresses` lists all.
//
// Nesting is by address containment: the parent of a loop is the smallest other loop whose
// [head, branch] range contains it.
//
// `natural` tells whether the head dominates the branch in the control-flow graph, i.e. the
// range really is a loop. A backward branch that is not natural is, e.g., the jump from the
// out-of-line `BRA.DIV` fallback code of a warp shuffle back into the main path (reduce
// fixture, `BRA 0x660` at 0x960): it jumps backwards but enters code that does not lead back to it.
import { dominators, isAlwaysTrue, isNeverTrue } from './controlFlow';
import type { SassFunction } from './model';

export interface SassLoop {
  /** Address of the first instruction of the loop (the branch target). */
  headAddress: number;
  /** Address of the (last) backward BRA. */
  branchAddress: number;
  /** All backward BRAs to this head, ascending. */
  branchAddresses: number[];
  /** Instructions in [headAddress, branchAddress], both included. */
  instructions: number;
  /** Index (in the returned array) of the innermost loop containing this one, or null. */
  parent: number | null;
  /** 0 for an outermost loop. */
  depth: number;
  /** The head dominates every backward branch (see the file header). */
  natural: boolean;
  /** The (last) backward branch is guarded by a predicate. */
  predicated: boolean;
}

export function findSassLoops(fn: SassFunction): SassLoop[] {
  const ins = fn.instructions;
  const indexOf = new Map<number, number>();
  for (let i = 0; i < ins.length; i++) if (!indexOf.has(ins[i].address)) indexOf.set(ins[i].address, i);

  // Back edges grouped by head.
  const byHead = new Map<number, number[]>(); // head address -> indices of the branches
  for (let i = 0; i < ins.length; i++) {
    const x = ins[i];
    if (x.opcode !== 'BRA' || x.target === undefined) continue;
    if (x.target > x.address || x.target === x.address) continue;
    if (isNeverTrue(x.predicate) || !indexOf.has(x.target)) continue;
    const list = byHead.get(x.target);
    if (list) list.push(i);
    else byHead.set(x.target, [i]);
  }
  if (byHead.size === 0) return [];

  const dom = dominators(ins, indexOf);
  const loops: SassLoop[] = [];
  for (const [head, branches] of byHead) {
    const headIdx = indexOf.get(head)!;
    const lastIdx = branches[branches.length - 1];
    loops.push({
      headAddress: head,
      branchAddress: ins[lastIdx].address,
      branchAddresses: branches.map(b => ins[b].address),
      instructions: lastIdx - headIdx + 1,
      parent: null,
      depth: 0,
      natural: branches.every(b => dom.dominates(headIdx, b)),
      predicated: !isAlwaysTrue(ins[lastIdx].predicate),
    });
  }
  loops.sort((a, b) => a.headAddress - b.headAddress || b.branchAddress - a.branchAddress);

  for (let i = 0; i < loops.length; i++) {
    let best: number | null = null;
    for (let j = 0; j < loops.length; j++) {
      if (j === i) continue;
      const o = loops[j];
      const l = loops[i];
      if (o.headAddress <= l.headAddress && o.branchAddress >= l.branchAddress) {
        if (best === null || loops[best].instructions > o.instructions) best = j;
      }
    }
    loops[i].parent = best;
  }
  for (let i = 0; i < loops.length; i++) {
    let d = 0;
    const seen = new Set<number>();
    for (let p = loops[i].parent; p !== null && !seen.has(p); p = loops[p].parent) {
      seen.add(p);
      d++;
    }
    loops[i].depth = d;
  }
  return loops;
}
