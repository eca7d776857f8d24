// Syntax-tree helpers shared by the manual-unroll detectors.
import type { Node } from '../parser';

export function opOf(n: Node): string {
  const o = n.childForFieldName('operator');
  return o ? o.type : '';
}

export function namedKids(n: Node): Node[] {
  return typedKids(n).map(k => k[0]);
}

/** Named children other than comments, with their types (each `.type` is a wasm call). */
export function typedKids(n: Node): Array<[Node, string]> {
  const out: Array<[Node, string]> = [];
  for (const c of n.namedChildren) {
    if (!c) continue;
    const t = c.type;
    if (t !== 'comment') out.push([c, t]);
  }
  return out;
}

/** Last row of a node; a node that ends at column 0 ends on the row before. */
export function endRowOf(n: Node): number {
  const e = n.endPosition;
  return e.column === 0 && e.row > n.startPosition.row ? e.row - 1 : e.row;
}
