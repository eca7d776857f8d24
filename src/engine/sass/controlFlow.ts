// Control-flow graph over basic blocks and its dominator tree (iterative algorithm of Cooper,
// Harvey and Kennedy over reverse post-order). Roots: the function entry and every CALL target
// inside the function (a non-inlined callee placed in its caller's section).
import type { SassInstruction } from './model';

/** The guard lets the instruction run always (no predicate, or the true predicate). */
export function isAlwaysTrue(pred: string | null): boolean {
  return pred === null || pred === '@PT' || pred === '@UPT';
}

/** The guard never lets the instruction run. */
export function isNeverTrue(pred: string | null): boolean {
  return pred === '@!PT' || pred === '@!UPT';
}

export interface Dominators {
  /** Whether instruction `a` dominates instruction `b` (false when `b` is unreachable). */
  dominates(a: number, b: number): boolean;
}

/** Control may leave the straight line here: the next instruction starts a new block. */
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

/** Basic blocks: the block of each instruction, each block's first instruction, and the roots (entry, CALL targets). */
function basicBlocks(ins: SassInstruction[], indexOf: Map<number, number>): { blockOf: Int32Array; starts: number[]; roots: number[] } {
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
  return { blockOf, starts, roots };
}

/** The blocks each block may continue to: its jump's target and, when it may not jump, the next block. */
function blockSuccessors(ins: SassInstruction[], indexOf: Map<number, number>, blockOf: Int32Array, starts: number[]): number[][] {
  const n = ins.length;
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
  return succ;
}

/** Blocks in post-order of a depth-first walk from the root blocks (reversed: reverse post-order). */
function postOrder(succ: number[][], rootBlocks: number[]): number[] {
  const nb = succ.length;
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
  return order;
}

/** The immediate dominator of each block in `rpo` order (-1: unreachable), by the Cooper-Harvey-Kennedy fixed point. */
function immediateDominators(rpo: number[], preds: number[][], root: number): Int32Array {
  const rpoIndex = new Int32Array(preds.length).fill(-1);
  rpo.forEach((b, i) => (rpoIndex[b] = i));
  const idom = new Int32Array(preds.length).fill(-1);
  idom[root] = root;
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
  return idom;
}

export function dominators(ins: SassInstruction[], indexOf: Map<number, number>): Dominators {
  const { blockOf, starts, roots } = basicBlocks(ins, indexOf);
  const n = ins.length;
  const nb = starts.length;
  const succ = blockSuccessors(ins, indexOf, blockOf, starts);

  // Reverse post-order from a virtual root (index nb) connected to every root block.
  const rootBlocks = [...new Set(roots.filter(r => r < n).map(r => blockOf[r]))];
  const order = postOrder(succ, rootBlocks);
  const VROOT = nb;
  const rpo = [VROOT, ...order.reverse()];
  const preds: number[][] = Array.from({ length: nb + 1 }, () => []);
  for (let b = 0; b < nb; b++) for (const s of succ[b]) preds[s].push(b);
  for (const r of rootBlocks) preds[r].push(VROOT);
  const idom = immediateDominators(rpo, preds, VROOT);

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
