// An index of one file's classes, functions, calls and namespace variables for scope-aware
// lookup (scopes.ts), built on first use. Nodes are only read, never kept past the analysis of
// the tree they belong to.
import type { Node } from './parser';
import type { TextSource } from './segmentedText';
import { templateParamNames } from './declaratorNames';
import { named } from './syntaxTree';

export const CLASS_TYPES = new Set(['struct_specifier', 'class_specifier', 'union_specifier']);
/**
 * The containers whose declarations isGlobalVariable reads (the root's too); the function cache
 * keys an item's place by the same set (topLevel.ts TopLevel.others' `hidden`).
 */
export const NAMESPACE_SCOPES = new Set([
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
]);
/** A character that continues an identifier token (or a number's), by code: [A-Za-z0-9_$] (NaN, before the start or past the end, is none). */
function isIdentChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}
/** Lookups of one kind by walking the text before the whole file is indexed for that kind. */
const WALK_LOOKUPS = 32;

/** One class (or specialisation) in the file. */
interface ClassInfo {
  node: Node;
  name: string;
  /** The template_argument_list of an explicit or partial specialisation (`Op<double>`). */
  specArgs: Node | null;
  templateParams: string[];
  body: Node | null;
  /** The class this one is nested in, if any. */
  outer: ClassInfo | null;
}

export type Member =
  | { kind: 'value'; value: Node | null; isConst: boolean; isStatic: boolean; type: Node | null }
  | { kind: 'enumerator'; base: Node | null; offset: number }
  | { kind: 'type'; type: Node | null }
  | { kind: 'class'; info: ClassInfo };

/** A class as seen from one place: the class and what its template parameters are bound to. */
export interface ClassView {
  info: ClassInfo;
  bindings: Map<string, number>;
}

function classInfoOf(node: Node, outer: ClassInfo | null): ClassInfo | null {
  const nameNode = node.childForFieldName('name');
  if (!nameNode) return null;
  let name = nameNode.text;
  let specArgs: Node | null = null;
  if (nameNode.type === 'template_type') {
    name = nameNode.childForFieldName('name')?.text ?? name;
    specArgs = nameNode.childForFieldName('arguments');
  } else if (nameNode.type === 'qualified_identifier') {
    name = nameNode.text.split('::').pop() ?? name;
  }
  const parent = node.parent;
  const templateDecl = parent?.type === 'template_declaration' ? parent : null;
  return { node, name, specArgs, templateParams: templateParamNames(templateDecl), body: node.childForFieldName('body'), outer };
}

/** The function definition a node is in, if any. */
export function enclosingFunction(node: Node): Node | null {
  for (let p = node.parent; p; p = p.parent) if (p.type === 'function_definition') return p;
  return null;
}

/**
 * `Tile<N, M>` in `template <int N, int M> void Tile<N, M>::run(…) {…}` (or a static member's
 * `int Tile<N>::count = …`): the definition of a member outside its class names the class
 * template with its own parameters. That is the template itself, not an instantiation of it.
 */
export function namesOutOfClassMember(n: Node): boolean {
  const q = n.parent;
  if (q?.type !== 'qualified_identifier' || q.childForFieldName('scope')?.id !== n.id) return false;
  let d: Node = q;
  while (d.parent && d.parent.type === 'qualified_identifier') d = d.parent;
  const owner = d.parent;
  if (!owner || owner.childForFieldName('declarator')?.id !== d.id) return false;
  if (owner.type === 'function_declarator') return owner.parent?.type === 'function_definition' || owner.parent?.type === 'declaration';
  return owner.type === 'init_declarator' || owner.type === 'declaration';
}

/** The enclosing classes of a node, innermost first. */
export function enclosingClasses(node: Node): ClassInfo[] {
  const nodes: Node[] = [];
  for (let p = node.parent; p; p = p.parent) if (CLASS_TYPES.has(p.type) && p.childForFieldName('body')) nodes.push(p);
  const out: ClassInfo[] = [];
  let outer: ClassInfo | null = null;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const info = classInfoOf(nodes[i], outer);
    if (!info) continue;
    out.unshift(info);
    outer = info;
  }
  return out;
}

/**
 * The names the lookups of one function's analysis asked the file about (FileIndex's queries by
 * name), for its cache entry (functionCache.ts): outside the function and its call-graph
 * dependencies, everything a lookup reads lies in a top-level item that spells the name it was
 * asked for (a class, a namespace variable, a call), so the result holds while those items do.
 * Nested: what an inner span asks (a memoised member value) is asked by the outer one too.
 */
export class NameReads {
  private readonly open: Set<string>[] = [];

  note(name: string): void {
    this.open[this.open.length - 1]?.add(name);
  }

  noteAll(names: Iterable<string> | undefined): void {
    const top = this.open[this.open.length - 1];
    if (top && names) for (const n of names) top.add(n);
  }

  begin(): void {
    this.open.push(new Set());
  }

  /** Closes the innermost span: its names, also added to the span around it. */
  end(): Set<string> {
    const names = this.open.pop() ?? new Set<string>();
    this.noteAll(names);
    return names;
  }
}

/**
 * What computing each entry of a memo shared by a file's functions asked the file (NameReads): a
 * function that reuses an entry asked it too, so its cache entry depends on those names as if it
 * had computed the entry itself.
 */
export class MemoReads {
  private readonly byKey = new Map<string | number, Set<string>>();

  constructor(private readonly reads: NameReads) {}

  /** Entry `key` was reused: its names are asked again. */
  reused(key: string | number): void {
    this.reads.noteAll(this.byKey.get(key));
  }

  /** Opens entry `key`'s computation (closed by `end`). */
  begin(): void {
    this.reads.begin();
  }

  end(key: string | number): void {
    this.byKey.set(key, this.reads.end());
  }

  /** `compute` as entry `key`'s computation. */
  run<T>(key: string | number, compute: () => T): T {
    this.begin();
    try {
      return compute();
    } finally {
      this.end(key);
    }
  }
}

/**
 * What a FileIndex read from the file outside every function body, built on first use: an edit
 * inside one body (bodyEdit.ts) leaves it standing, so the next keystroke's index starts from it
 * instead of walking the file again (the namespace-scope variables: half a millisecond a
 * keystroke in a 5,000-line file).
 */
export interface OutsideBodies {
  /** Non-const variables declared at namespace scope. */
  globals: Set<string> | null;
}

/**
 * Everything a lookup may need from the whole file, built on first use: classes by name,
 * functions by name (constexpr ones are evaluated), non-const variables at namespace scope.
 */
export class FileIndex {
  private classes: Map<string, ClassInfo[]> | null = null;
  private members = new Map<number, Map<string, Member>>();
  readonly reads = new NameReads();

  /**
   * `source`: the text the tree was parsed from, where lookups by name start (without it, the
   * root's text, which a segmented document's parse hands over in pieces: made one string on the
   * first search, 1.6 ms a keystroke in the 200 KB bench file).
   */
  constructor(
    private readonly root: Node,
    readonly fileValues: Map<string, number>,
    readonly outside: OutsideBodies = { globals: null },
    private readonly source?: TextSource,
  ) {}

  /** The text lookups by name search, and the file offset of its first character. */
  private search: { text: TextSource; base: number } | null = null;

  private classNodes: Node[] | null = null;
  private readonly named = new Map<string, Node[]>();

  /** Lookups by name that walked the text, by kind: past WALK_LOOKUPS, the kind is indexed whole. */
  private readonly lookups = new Map<string, number>();
  /** Every node of a kind by the name `keyOf` gives it, built in one walk (see byName). */
  private readonly wholeIndex = new Map<string, Map<string, Node[]>>();

  /**
   * The nodes of `type` whose name (`keyOf`) is `name`, in document order. Every such node has the
   * name's text inside it (a call's callee, a definition's declarator, a template-id's name), so
   * the first lookups of a kind read only the few places that spell the name, among their
   * ancestors: a walk visits every node of the file, tens of ms on each keystroke in a 5,000-line
   * one. A whole-file analysis looks up hundreds of names in one file (CUTLASS's GMMA headers:
   * thousands of class templates, each searched for over 40,000 lines), so past WALK_LOOKUPS
   * lookups of a kind one walk of the tree indexes every node of it by name: the same nodes, as
   * a walk finds them.
   */
  private byName(kind: string, name: string, type: string, keyOf: (n: Node) => string | undefined): Node[] {
    this.reads.note(name);
    const key = `${kind}\u0000${name}`;
    const known = this.named.get(key);
    if (known) return known;
    if (!name) return [];
    const whole = this.wholeIndex.get(kind);
    if (whole) return whole.get(name) ?? [];
    const count = (this.lookups.get(kind) ?? 0) + 1;
    this.lookups.set(kind, count);
    if (count > WALK_LOOKUPS) {
      const index = new Map<string, Node[]>();
      for (const n of this.root.descendantsOfType(type)) {
        if (!n) continue;
        const k = keyOf(n);
        if (k === undefined) continue;
        const list = index.get(k);
        if (list) list.push(n);
        else index.set(k, [n]);
      }
      this.wholeIndex.set(kind, index);
      return index.get(name) ?? [];
    }
    const out: Node[] = [];
    const seen = new Set<number>();
    // Offsets in `source` are the file's; the root's text starts at the root's start.
    this.search ??= this.source ? { text: this.source, base: 0 } : { text: this.root.text, base: this.root.startIndex };
    const { text: source, base } = this.search;
    const find = (from: number) => (source.find ? source.find(name, from) : source.indexOf(name, from));
    const [first, end] = [this.root.startIndex - base, this.root.endIndex - base];
    // A name that starts or ends with an identifier character is a token of its own there: a
    // place where the text goes on with one (`offset` in `offsets`) is inside a longer token.
    const checkBefore = isIdentChar(name.charCodeAt(0));
    const checkAfter = isIdentChar(name.charCodeAt(name.length - 1));
    for (let i = find(first); i !== -1 && i + name.length <= end; i = find(i + 1)) {
      if ((checkBefore && isIdentChar(source.charCodeAt(i - 1))) || (checkAfter && isIdentChar(source.charCodeAt(i + name.length))))
        continue;
      const start = base + i;
      for (let n: Node | null = this.root.descendantForIndex(start, start + name.length - 1); n; n = n.parent) {
        if (n.type !== type || seen.has(n.id)) continue;
        seen.add(n.id);
        if (keyOf(n) === name) out.push(n);
      }
    }
    // Document order, as a walk finds them: by start, the enclosing node first.
    out.sort((a, b) => a.startIndex - b.startIndex || b.endIndex - a.endIndex);
    this.named.set(key, out);
    return out;
  }

  /** Every `Name<…>` in the file (template-ids naming a type), by name. */
  templateTypesNamed(name: string): Node[] {
    return this.byName('template', name, 'template_type', n => n.childForFieldName('name')?.text);
  }

  classesNamed(name: string): ClassInfo[] {
    this.reads.note(name);
    if (!this.classes) {
      this.classes = new Map();
      const byId = new Map<number, ClassInfo>();
      // Classes of the three kinds together, in document order (outer before inner).
      this.classNodes ??= this.root.descendantsOfType([...CLASS_TYPES]).filter((n): n is Node => !!n);
      for (const n of this.classNodes) {
        if (!n.childForFieldName('body')) continue;
        let outerNode: Node | null = null;
        for (let p = n.parent; p; p = p.parent)
          if (CLASS_TYPES.has(p.type) && p.childForFieldName('body')) {
            outerNode = p;
            break;
          }
        const info = classInfoOf(n, outerNode ? (byId.get(outerNode.id) ?? null) : null);
        if (!info) continue;
        byId.set(n.id, info);
        if (!this.classes.has(info.name)) this.classes.set(info.name, []);
        this.classes.get(info.name)!.push(info);
      }
    }
    return this.classes.get(name) ?? [];
  }

  /** Calls of a function by its (last) name: `f(…)`, `ns::f(…)`, `f<8>(…)`, `obj.f(…)`, `this->f(…)`. */
  callsNamed(name: string): Node[] {
    return this.byName('call', name, 'call_expression', n => {
      let f = n.childForFieldName('function');
      if (f?.type === 'field_expression') f = f.childForFieldName('field');
      if (f?.type === 'template_function') f = f.childForFieldName('name');
      return f?.text.split('::').pop();
    });
  }

  functionsNamed(name: string): Node[] {
    return this.byName('function', name, 'function_definition', n => {
      const decl = n.childForFieldName('declarator');
      return decl?.type === 'function_declarator' ? decl.childForFieldName('declarator')?.text.split('::').pop() : undefined;
    });
  }

  /** Non-const variables declared at namespace scope (`__device__ int g_count;`): run-time values. */
  isGlobalVariable(name: string): boolean {
    this.reads.note(name);
    return (this.outside.globals ??= this.readGlobals()).has(name);
  }

  private readGlobals(): Set<string> {
    const globals = new Set<string>();
    const visit = (n: Node, depth: number) => {
      if (depth > 16) return;
      for (const c of named(n)) {
        if (
          c.type === 'declaration' &&
          !/\b(const|constexpr|extern\s+"C")\b/.test(c.text) &&
          !c.childForFieldName('declarator')?.type.includes('function')
        ) {
          for (const d of named(c)) {
            const id = d.type === 'init_declarator' ? d.childForFieldName('declarator') : d;
            if (id?.type === 'identifier') globals.add(id.text);
          }
        } else if (NAMESPACE_SCOPES.has(c.type)) visit(c, depth + 1);
      }
    };
    visit(this.root, 0);
    return globals;
  }

  /** Members of a class by name (data members, enumerators, type aliases, nested classes). */
  membersOf(info: ClassInfo): Map<string, Member> {
    // The class's item spells its name (a nested class's, its outer class's item).
    this.reads.note(info.name);
    let m = this.members.get(info.node.id);
    if (m) return m;
    m = new Map();
    this.members.set(info.node.id, m);
    for (const c of named(info.body)) this.collectMember(c, info, m, 0);
    return m;
  }

  private collectMember(c: Node, info: ClassInfo, m: Map<string, Member>, depth: number): void {
    switch (c.type) {
      case 'field_declaration':
      case 'declaration': {
        const type = c.childForFieldName('type');
        if (type?.type === 'enum_specifier') this.collectEnum(type, m);
        else if (type && CLASS_TYPES.has(type.type) && type.childForFieldName('body')) {
          const nested = classInfoOf(type, info);
          if (nested) m.set(nested.name, { kind: 'class', info: nested });
        }
        const isStatic = named(c).some(k => k.type === 'storage_class_specifier' && k.text === 'static');
        const isConst = named(c).some(k => k.type === 'type_qualifier' && /^(const|constexpr)$/.test(k.text));
        // `static constexpr int a = 1, b = 2;`: each declarator is followed by its default value.
        let last: string | null = null;
        for (let i = 0; i < c.childCount; i++) {
          const k = c.child(i);
          if (!k) continue;
          const field = c.fieldNameForChild(i);
          if (field === 'declarator') {
            const id = k.type === 'init_declarator' ? k.childForFieldName('declarator') : k;
            last = id && /^(field_)?identifier$/.test(id.type) ? id.text : null;
            if (last)
              m.set(last, {
                kind: 'value',
                value: k.type === 'init_declarator' ? k.childForFieldName('value') : null,
                isConst,
                isStatic,
                type,
              });
            if (k.type === 'init_declarator') last = null;
          } else if (field === 'default_value' && last) {
            m.set(last, { kind: 'value', value: k, isConst, isStatic, type });
            last = null;
          }
        }
        break;
      }
      case 'alias_declaration':
      case 'type_definition': {
        const name = c.type === 'alias_declaration' ? c.childForFieldName('name')?.text : c.childForFieldName('declarator')?.text;
        if (name) m.set(name, { kind: 'type', type: c.childForFieldName('type') });
        break;
      }
      case 'template_declaration':
        for (const k of named(c)) if (CLASS_TYPES.has(k.type) || k.type === 'alias_declaration') this.collectMember(k, info, m, depth);
        break;
      case 'struct_specifier':
      case 'class_specifier':
      case 'union_specifier': {
        const nested = c.childForFieldName('body') ? classInfoOf(c, info) : null;
        if (nested) m.set(nested.name, { kind: 'class', info: nested });
        break;
      }
      case 'enum_specifier':
        this.collectEnum(c, m);
        break;
      default:
        if (depth < 4 && /^(preproc_(if|ifdef|else|elif)|access_specifier)$/.test(c.type))
          for (const k of named(c)) this.collectMember(k, info, m, depth + 1);
    }
  }

  private collectEnum(en: Node, m: Map<string, Member>): void {
    // An enumerator without a value is one more than the previous one (evaluated on use).
    let base: Node | null = null;
    let offset = 0;
    let first = true;
    for (const e of named(en.childForFieldName('body'))) {
      if (e.type !== 'enumerator') continue;
      const name = e.childForFieldName('name')?.text;
      const value = e.childForFieldName('value');
      if (value) {
        base = value;
        offset = 0;
      } else if (!first) offset++;
      first = false;
      if (name) m.set(name, { kind: 'enumerator', base, offset });
    }
  }
}
