// One pass over the top level of a file (through namespaces, extern "C", #if blocks and class
// bodies) with a tree cursor: the device functions, the nodes that may define constants, and the
// rest. Materialising every top-level node as an object is what costs time in the wasm build, so
// only the kinds of node each later step needs are materialised.
import type { Node } from './parser';
import type { KernelQualifier } from './model';
import { activeMacros, qualifierMacrosIn } from './macroContext';
import { CLASS_TYPES, NAMESPACE_SCOPES } from './fileIndex';

const CONTAINERS = new Set([
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
  'preproc_elifdef',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
  'ERROR',
  'field_declaration_list',
]);

/** Class bodies hold member functions (CUB's and CUTLASS's device code is mostly members). */

export interface TopLevel {
  /** function_definition nodes whose head names __global__/__device__, with their template and text. */
  functions: {
    node: Node;
    templateDecl: Node | null;
    qualifier: KernelQualifier;
    text: string;
    headMacros?: string;
    member?: boolean;
    /** For a device lambda (which has no name): `lambda@LINE`. */
    name?: string;
  }[];
  /** Nodes that may define constants: #define, const/constexpr declarations, enums, structs. */
  constants: Node[];
  /**
   * Everything else, with its text: where template instantiations may appear. `hidden`: the
   * item stands where a namespace-scope variable cannot (inside an ERROR node error recovery
   * made, a template declaration, a class), as FileIndex.isGlobalVariable reads the file.
   */
  others: { node: Node; text: string; hidden?: true }[];
  /** Function-like `#define`s: instantiations may be written through them (instantiations.ts). */
  defines: Node[];
}

export function scanTopLevel(root: Node): TopLevel {
  const out: TopLevel = { functions: [], constants: [], others: [], defines: [] };
  const cursor = root.walk();
  try {
    new TopLevelScanner(cursor, out).visitChildren(null, 0);
  } finally {
    cursor.delete();
  }
  return out;
}

type TreeCursor = ReturnType<Node['walk']>;

/** The walk of scanTopLevel: one cursor moved through the tree, each visit returning it to where it started. */
class TopLevelScanner {
  /** A qualifier macro written on the line before the `template <…>` being visited (mask.ts). */
  private leading: string | null = null;
  /** Inside a container that isGlobalVariable does not read (TopLevel.others' `hidden`). */
  private hidden = false;

  constructor(
    private readonly cursor: TreeCursor,
    private readonly out: TopLevel,
  ) {}

  visitChildren(templateDecl: Node | null, depth: number): void {
    const { cursor, out } = this;
    if (!cursor.gotoFirstChild()) return;
    let leading: string | null = null;
    do {
      if (!cursor.nodeIsNamed) continue;
      const type = cursor.nodeType;
      const wasLeading: string | null = leading;
      leading = null;
      const hidden = this.hidden;
      if (CONTAINERS.has(type) && depth < 16) {
        this.hidden = hidden || !NAMESPACE_SCOPES.has(type);
        this.visitChildren(null, depth + 1);
        this.hidden = hidden;
      } else if (type === 'template_declaration' && depth < 16) {
        const node = cursor.currentNode;
        this.leading = wasLeading;
        this.hidden = true;
        this.visitChildren(node, depth + 1);
        this.hidden = hidden;
        this.leading = null;
      } else if (type === 'comment') {
        // Only a short one can be masking's (`/*CUTLASS_HOST_DE*\/`): others are not materialised.
        const q = cursor.endIndex - cursor.startIndex < 64 ? activeMacros().leadingQualifier(cursor.currentNode.text) : null;
        leading = q ? (wasLeading ? wasLeading + ' ' : '') + q : null;
      } else if (type === 'function_definition') {
        this.topLevelFunction(templateDecl, depth);
      } else if (type === 'preproc_def' || type === 'enum_specifier') {
        out.constants.push(cursor.currentNode);
      } else if (type === 'preproc_function_def') {
        out.defines.push(cursor.currentNode);
      } else if (type === 'preproc_include' || type === 'preproc_call') {
        // no constants, no instantiations
      } else {
        const node = cursor.currentNode;
        const text = node.text;
        if (/\b(const|constexpr|enum)\b/.test(text)) out.constants.push(node);
        out.others.push(hidden ? { node, text, hidden } : { node, text });
        if (CLASS_TYPES.has(type) && depth < 16 && activeMacros().mentionsDeviceCode(text)) this.visitClassBody(depth + 1);
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }

  /** The function_definition under the cursor, at namespace scope. */
  private topLevelFunction(templateDecl: Node | null, depth: number): void {
    const node = this.cursor.currentNode;
    const text = node.text;
    const brace = text.indexOf('{');
    const lead = this.leading;
    this.leading = null;
    const head = (lead ? lead + ' ' : '') + (brace === -1 ? text : text.slice(0, brace));
    // The qualifiers precede the body; reading them from text avoids walking children.
    const qualifier: KernelQualifier | null = activeMacros().headQualifier(head);
    if (qualifier) this.out.functions.push({ node, templateDecl, qualifier, text, ...(lead ? { headMacros: lead } : {}) });
    else {
      this.out.others.push({ node, text });
      deviceLambdas(node, templateDecl, text, this.out);
    }
    // `struct S {…} MACRO f() {…}` (a macro the grammar does not know after a class): the class is the "return type".
    if (/^\s*(struct|class|union)\b/.test(head) && depth < 16 && activeMacros().mentionsDeviceCode(text)) this.visitTypeClass(depth + 1);
  }

  /** Member function definitions of the class under the cursor (its other members are in its node). */
  private visitClassBody(depth: number): void {
    const { cursor } = this;
    if (!cursor.gotoFirstChild()) return;
    do {
      if (cursor.nodeType === 'field_declaration_list') {
        this.visitMembers(depth);
        break;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }

  private memberFunction(node: Node, templateDecl: Node | null, pending: string | null): void {
    const text = node.text;
    const brace = text.indexOf('{');
    const head = (pending ? pending + ' ' : '') + (brace === -1 ? text : text.slice(0, brace));
    const qualifier: KernelQualifier | null = activeMacros().headQualifier(head);
    if (qualifier)
      this.out.functions.push({ node, templateDecl, qualifier, text, member: true, ...(pending ? { headMacros: pending } : {}) });
    else deviceLambdas(node, templateDecl, text, this.out);
    if (/^\s*(struct|class|union)\b/.test(head) && activeMacros().mentionsDeviceCode(text)) this.visitTypeClass(1);
  }

  /** The class that a function_definition under the cursor has as its type. */
  private visitTypeClass(depth: number): void {
    const { cursor } = this;
    if (depth > 16 || !cursor.gotoFirstChild()) return;
    do if (CLASS_TYPES.has(cursor.nodeType)) this.visitClassBody(depth + 1);
    while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }

  private visitMembers(depth: number): void {
    const { cursor } = this;
    if (!cursor.gotoFirstChild()) return;
    let pending: string | null = null;
    do {
      const type = cursor.nodeType;
      const wasPending: string | null = pending;
      pending = null;
      if (type === 'function_definition') {
        this.memberFunction(cursor.currentNode, null, wasPending);
      } else if (type === 'template_declaration') {
        this.visitMemberTemplate(depth);
      } else if (CLASS_TYPES.has(type) && depth < 16) {
        this.visitClassBody(depth + 1);
      } else if (CONTAINERS.has(type) && depth < 16) {
        this.visitMembers(depth + 1);
      } else if (type === 'field_declaration') {
        const node = cursor.currentNode;
        pending = macroOnly(node.text);
        // A nested `struct Inner { … };` member.
        if (!pending && depth < 16 && cursor.gotoFirstChild()) {
          do if (CLASS_TYPES.has(cursor.nodeType)) this.visitClassBody(depth + 1);
          while (cursor.gotoNextSibling());
          cursor.gotoParent();
        }
      } else if (type === 'comment') {
        pending = wasPending;
      }
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }

  /** A member template under the cursor: a member function template or a nested class template. */
  private visitMemberTemplate(depth: number): void {
    const { cursor } = this;
    const node = cursor.currentNode;
    if (!cursor.gotoFirstChild()) return;
    let inner: string | null = null;
    do {
      const t = cursor.nodeType;
      const was: string | null = inner;
      inner = null;
      if (t === 'function_definition') this.memberFunction(cursor.currentNode, node, was);
      else if (CLASS_TYPES.has(t) && depth < 16) this.visitClassBody(depth + 1);
      else if (t === 'field_declaration' || t === 'declaration') inner = macroOnly(cursor.currentNode.text);
    } while (cursor.gotoNextSibling());
    cursor.gotoParent();
  }
}

// In a class body, `_CCCL_DEVICE _CCCL_FORCEINLINE uint32_t get() const {…}` parses as a
// member declaration `_CCCL_DEVICE _CCCL_FORCEINLINE` (missing its `;`) followed by the
// function: the macros of such a declaration qualify the function after it.
function macroOnly(text: string): string | null {
  // `[[CUTLASS_HOST_DE]] friend T` before `operator+(…) {…}`: masked qualifiers (macros/mask.ts) read back.
  if (text.includes('[['))
    text = activeMacros()
      .unmask(text)
      .replace(/\[\[|\]\]/g, ' ');
  if (/[;(){}=<>,[\]]/.test(text)) return null;
  const words = text.trim().split(/\s+/);
  // Also `void THRUST_DEVICE_FUNCTION` and `_CCCL_DEVICE bit_packed_counter` (the grammar splits before the name).
  return words.length && words.every(w => /^[A-Za-z_]\w*$/.test(w)) && qualifierMacrosIn(text).length ? text : null;
}

/**
 * `[=] __device__ (int t) {…}` lambdas written in a host function (tiny-cuda-nn's
 * `parallel_for_gpu`, Thrust functors): device code with no name, reported as `lambda@LINE`.
 * A lambda inside a device lambda is part of it. Marked `member`: its text is part of its host
 * function's, which collectInstantiations reads already.
 */
function deviceLambdas(fn: Node, templateDecl: Node | null, text: string, out: TopLevel): void {
  if (!text.includes('[') || !activeMacros().mentionsDeviceCode(text)) return;
  const found: Node[] = [];
  for (const l of fn.descendantsOfType('lambda_expression')) {
    if (!l || found.some(f => f.startIndex <= l.startIndex && l.endIndex <= f.endIndex)) continue;
    const body = l.childForFieldName('body');
    if (!body) continue;
    const lambdaText = l.text;
    const qualifier = activeMacros().headQualifier(lambdaText.slice(0, body.startIndex - l.startIndex));
    if (!qualifier) continue;
    found.push(l);
    out.functions.push({ node: l, templateDecl, qualifier, text: lambdaText, name: `lambda@${l.startPosition.row + 1}`, member: true });
  }
}
