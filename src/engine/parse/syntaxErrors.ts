// Whether a tree has syntax errors that are real, not the grammar's misreadings of valid CUDA.
import type { Node } from './parser';
import { qualifierMacrosIn } from './macroContext';
import { isPragmaStatement } from './pragmas';

export function hasRealSyntaxErrors(root: Node): boolean {
  if (!root.hasError) return false;
  // `_Pragma("…") for (…)` makes tree-sitter insert a MISSING ";" — that is valid CUDA.
  const stack: Node[] = [root];
  while (stack.length) {
    const n = stack.pop()!;
    if (!n.hasError && !n.isMissing) continue;
    if (n.type === 'ERROR') {
      // `[=] __device__ (int t) {…}`: the grammar has no place for an extended lambda's qualifiers.
      if (n.parent?.type === 'lambda_expression' && /^(__host__|__device__|\s)+$/.test(n.text)) continue;
      // `_CCCL_DEVICE _CCCL_FORCEINLINE void f()`: the head's unknown macros are not errors.
      if (n.parent?.type === 'function_definition' && n.endIndex <= (n.parent.childForFieldName('body')?.startIndex ?? 0)) {
        const body = n.parent.childForFieldName('body');
        const head = n.parent.text.slice(0, (body?.startIndex ?? n.parent.endIndex) - n.parent.startIndex);
        if (qualifierMacrosIn(head).length) continue;
      }
      return true;
    }
    if (n.isMissing) {
      const stmt = n.parent;
      if (!(stmt && isPragmaStatement(stmt))) {
        // `_CCCL_DEVICE _CCCL_FORCEINLINE` split off a member function's head (see scanTopLevel).
        const words = stmt?.text.trim().split(/\s+/) ?? [];
        if (
          stmt &&
          /^(field_)?declaration$/.test(stmt.type) &&
          words.every(w => /^[A-Za-z_]\w*$/.test(w)) &&
          qualifierMacrosIn(stmt.text).length
        )
          continue;
        return true;
      }
      continue;
    }
    for (const c of n.children) if (c) stack.push(c);
  }
  return false;
}
