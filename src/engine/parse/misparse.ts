// tree-sitter reads `i < Traits<8>::kCount` as the template-id `i<Traits < 8>::kCount` and
// `i < size<0>(acc)` as the call `i<size < 0>(acc)`: without type information `<` is ambiguous.
// For a loop condition whose variable is known this undoes the misreading: the bound is the same
// tree with the template's name replaced by the left operand of its first argument and that
// argument by its right operand. The result is a light view over the real nodes, enough for
// constant evaluation (type, text, fields, named children); it is never stored.
import type { Node } from './parser';

interface View {
  type: string;
  text: string;
  startIndex: number;
  endIndex: number;
  id: number;
  parent: null;
  namedChildren: (Node | View)[];
  childForFieldName(name: string): Node | View | null;
}

function named(n: Node): Node[] {
  return n.namedChildren.filter(Boolean) as Node[];
}

/** The leftmost path from `root` to a template-id named `variable` whose first argument is `A < B`. */
function pathToMisread(root: Node, variable: string): Node[] | null {
  const path: Node[] = [];
  for (let n: Node | null = root; n && path.length < 16; n = named(n)[0] ?? null) {
    path.push(n);
    if ((n.type === 'template_type' || n.type === 'template_function') && n.childForFieldName('name')?.text === variable) {
      const first = named(n.childForFieldName('arguments') ?? n)[0];
      return first?.type === 'binary_expression' && first.childForFieldName('operator')?.text === '<' ? path : null;
    }
  }
  return null;
}

export function repairLessThan(cond: Node, variable: string): Node | null {
  const path = pathToMisread(cond, variable);
  if (!path) return null;
  const target = path[path.length - 1];
  const list = target.childForFieldName('arguments');
  const first = list ? named(list)[0] : null;
  const left = first?.childForFieldName('left');
  const right = first?.childForFieldName('right');
  if (!list || !first || !left || !right) return null;
  const cut = first.startIndex; // the text of the repaired tree starts at the first argument
  const args: View = {
    type: list.type,
    text: list.text,
    startIndex: list.startIndex,
    endIndex: list.endIndex,
    id: -1,
    parent: null,
    namedChildren: [right, ...named(list).slice(1)],
    childForFieldName: () => null,
  };
  const templ: View = {
    type: target.type,
    text: target.text.slice(cut - target.startIndex),
    startIndex: cut,
    endIndex: target.endIndex,
    id: -1,
    parent: null,
    namedChildren: [left, args],
    childForFieldName: f => (f === 'name' ? left : f === 'arguments' ? args : target.childForFieldName(f)),
  };
  // Rebuild the path above the template-id, each level pointing at the repaired child.
  let child: Node | View = templ;
  for (let i = path.length - 2; i >= 0; i--) {
    const n = path[i];
    const old = path[i + 1];
    const replaced: Node | View = child;
    const view: View = {
      type: n.type,
      text: n.text.slice(cut - n.startIndex),
      startIndex: cut,
      endIndex: n.endIndex,
      id: -1,
      parent: null,
      namedChildren: named(n).map(c => (c.id === old.id ? replaced : c)),
      childForFieldName: f => {
        const c = n.childForFieldName(f);
        return c && c.id === old.id ? replaced : c;
      },
    };
    child = view;
  }
  return child as unknown as Node;
}
