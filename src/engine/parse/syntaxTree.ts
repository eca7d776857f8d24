// Small reads of tree-sitter nodes shared by the analysis steps (analyze.ts and the files it uses).
import type { Node } from './parser';
import type { SourceSpan } from './model';

export function spanOf(node: Node): SourceSpan {
  return {
    line: node.startPosition.row + 1,
    column: node.startPosition.column,
    endLine: node.endPosition.row + 1,
    endColumn: node.endPosition.column,
  };
}

export function named(node: Node | null | undefined): Node[] {
  return node ? (node.namedChildren.filter(Boolean) as Node[]) : [];
}

export function isComment(n: Node): boolean {
  return n.type === 'comment';
}
