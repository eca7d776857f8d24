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
import type { SassFunction, SassInstruction } from './model';

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

function isAlwaysTrue(pred: string | null): boolean {
  return pred === null || pred === '@PT' || pred === '@UPT';
}
function isNeverTrue(pred: string | null): boolean {
  return pred === '@!PT' || pred === '@!UPT';
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

// ---------------------------------------------------------------------------------------------
// Control-flow graph over basic blocks and its dominator tree (iterative algorithm of Cooper,
// Harvey and Kennedy over reverse post-order). Roots: the function entry and every CALL target
// inside the function (a non-inlined callee placed in its caller's section).

interface Dominators {
  /** Whether instruction `a` dominates instruction `b` (false when `b` is unreachable). */
  dominates(a: number, b: number): boolean;
}

function endsBlock(x: SassInstruction): boolean {
  switch (x.opcode) {
    case 'BRA':
    case 'BRX':
    case 'BRXU':
    case 'JMP':
    case 'JMX':
    case 'JMXU':
    case 'RET':
    case 'EXIT':
    case 'KILL':
    case 'CALL':
      return true;
    default:
      return false;
  }
}

function dominators(ins: SassInstruction[], indexOf: Map<number, number>): Dominators {
  const n = ins.length;
  // Leaders.
  const leader = new Uint8Array(n + 1);
  if (n > 0) leader[0] = 1;
  const roots: number[] = [0];
  for (let i = 0; i < n; i++) {
    const x = ins[i];
    if (endsBlock(x) && i + 1 < n) leader[i + 1] = 1;
    if (x.target !== undefined && (x.opcode === 'BRA' || x.opcode === 'JMP' || x.opcode === 'CALL')) {
      const t = indexOf.get(x.target);
      if (t !== undefined) {
        leader[t] = 1;
        if (x.opcode === 'CALL') roots.push(t);
      }
    }
  }
  const blockOf = new Int32Array(n);
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    if (leader[i]) starts.push(i);
    blockOf[i] = starts.length - 1;
  }
  const nb = starts.length;
  const succ: number[][] = [];
  for (let b = 0; b < nb; b++) {
    const last = (b + 1 < nb ? starts[b + 1] : n) - 1;
    const x = ins[last];
    const out: number[] = [];
    const fall = last + 1 < n ? blockOf[last + 1] : -1;
    const jumpTarget = x.target !== undefined ? indexOf.get(x.target) : undefined;
    switch (x.opcode) {
      case 'BRA':
      case 'JMP':
        if (isNeverTrue(x.predicate)) {
          if (fall >= 0) out.push(fall);
          break;
        }
        if (jumpTarget !== undefined) out.push(blockOf[jumpTarget]);
        if ((!isAlwaysTrue(x.predicate) || x.modifiers.includes('DIV')) && fall >= 0) out.push(fall);
        break;
      case 'BRX':
      case 'BRXU':
      case 'JMX':
      case 'JMXU':
        // Indirect jump: targets unknown; only the fall-through when guarded.
        if (!isAlwaysTrue(x.predicate) && fall >= 0) out.push(fall);
        break;
      case 'RET':
      case 'EXIT':
      case 'KILL':
        if (!isAlwaysTrue(x.predicate) && fall >= 0) out.push(fall);
        break;
      default:
        if (fall >= 0) out.push(fall);
    }
    succ.push(out);
  }

  // Reverse post-order from a virtual root (index nb) connected to every root block.
  const rootBlocks = [...new Set(roots.filter(r => r < n).map(r => blockOf[r]))];
  const order: number[] = [];
  const visited = new Uint8Array(nb);
  const stack: { b: number; k: number }[] = [];
  for (const r of rootBlocks) {
    if (visited[r]) continue;
    visited[r] = 1;
    stack.push({ b: r, k: 0 });
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const s = succ[top.b];
      if (top.k < s.length) {
        const next = s[top.k++];
        if (!visited[next]) {
          visited[next] = 1;
          stack.push({ b: next, k: 0 });
        }
      } else {
        order.push(top.b);
        stack.pop();
      }
    }
  }
  const VROOT = nb;
  const rpo = [VROOT, ...order.reverse()];
  const rpoIndex = new Int32Array(nb + 1).fill(-1);
  rpo.forEach((b, i) => (rpoIndex[b] = i));
  const preds: number[][] = Array.from({ length: nb + 1 }, () => []);
  for (let b = 0; b < nb; b++) for (const s of succ[b]) preds[s].push(b);
  for (const r of rootBlocks) preds[r].push(VROOT);

  const idom = new Int32Array(nb + 1).fill(-1);
  idom[VROOT] = VROOT;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (rpoIndex[a] > rpoIndex[b]) a = idom[a];
      while (rpoIndex[b] > rpoIndex[a]) b = idom[b];
    }
    return a;
  };
  let changed = true;
  while (changed) {
    changed = false;
    for (let k = 1; k < rpo.length; k++) {
      const b = rpo[k];
      let nd = -1;
      for (const p of preds[b]) {
        if (idom[p] === -1) continue;
        nd = nd === -1 ? p : intersect(p, nd);
      }
      if (nd !== -1 && idom[b] !== nd) {
        idom[b] = nd;
        changed = true;
      }
    }
  }

  return {
    dominates(a: number, b: number): boolean {
      const ba = blockOf[a];
      let x = blockOf[b];
      if (idom[x] === -1) return false;
      // Inside one block, an earlier instruction dominates a later one.
      if (ba === x) return a <= b;
      while (x !== VROOT) {
        x = idom[x];
        if (x === ba) return true;
      }
      return false;
    },
  };
}
