// Does a translation unit instantiate a header's function? Decided from text before anything is
// compiled (a header's default translation unit, issue 39): the names that lead to the function
// (the function itself, then every function, class or macro of the unit's headers whose body
// names one of them, to a fixed point) and whether the unit names one of them, at file scope
// (an explicit instantiation, as ggml's template-instances/*.cu do with a macro) or inside its
// own functions (an implicit one, unless the way there passes through a template its headers
// declare `extern`: ggml's fattn.cu calls the flash-attention cases that fattn-vec.cuh declares
// extern, and so instantiates none of them). A textual guess, ranked and then confirmed by the
// build (inspect.ts says when the unit holds no code of the loop). Nothing here runs a program.

/** Comments, string and character literals blanked (lengths kept), so that names in them do not count. */
function code(text: string): string {
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, m => m.replace(/[^\n]/g, ' '));
}

/**
 * One branch of every `#if`/`#ifdef` kept, the others blanked (lengths kept): the first, or the
 * `#else` of an `#if 0`. ggml writes a function's `{` in each branch of an `#if` and closes it
 * once after the `#endif` (mmf.cuh, fattn-tile.cuh); counted twice, the braces never balance and
 * every definition after it is lost. Which branch the build takes is unknown here: any one keeps
 * the names and the braces right.
 */
function oneBranch(text: string): string {
  const lines = text.split('\n');
  // per open conditional: whether its kept branch is still to come, and whether lines are kept now
  const stack: { pending: boolean; keep: boolean }[] = [];
  const outer = () => stack.every(c => c.keep);
  for (let i = 0; i < lines.length; i++) {
    const d = /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$/.exec(lines[i]);
    if (d) {
      const [, kw, rest] = d;
      if (kw.startsWith('if')) {
        const dead = kw === 'if' && /^\s*0\s*$/.test(rest);
        stack.push({ pending: dead, keep: !dead });
      } else if (kw === 'endif') stack.pop();
      else if (stack.length) {
        const top = stack[stack.length - 1];
        top.keep = top.pending;
        top.pending = false;
      }
      continue;
    }
    if (!outer()) lines[i] = lines[i].replace(/[^\n]/g, ' ');
  }
  return lines.join('\n');
}

/** Identifiers that stand before a parenthesis in a declaration without being its name. */
const NOT_A_NAME = new Set([
  '__launch_bounds__',
  '__attribute__',
  '__declspec',
  'alignas',
  '__align__',
  'decltype',
  'noexcept',
  'sizeof',
  'if',
  'for',
  'while',
  'switch',
  'return',
]);

export interface Definitions {
  /** Name → the identifiers its body names (functions, classes, macros at file or namespace scope). */
  bodies: Map<string, Set<string>>;
  /** The identifiers named outside every body: declarations, explicit instantiations, macro calls at file scope. */
  fileScope: Set<string>;
  /** The identifiers named inside the bodies. */
  inBodies: Set<string>;
  /**
   * Names declared `extern` at file scope (`extern template …`, or a macro that spells one, with
   * the names of that macro's body): instantiated in another unit, so a call here does not.
   */
  externs: Set<string>;
}

function identifiers(text: string, into = new Set<string>()): Set<string> {
  for (const m of text.matchAll(/[A-Za-z_]\w*/g)) into.add(m[0]);
  return into;
}

/** The definitions of a header or unit, read from its text (see the module comment). */
export function definitionsOf(text: string): Definitions {
  const bodies = new Map<string, Set<string>>();
  const inBodies = new Set<string>();
  const add = (name: string | null, body: string) => {
    const ids = identifiers(body);
    for (const x of ids) inBodies.add(x);
    if (name) bodies.set(name, identifiers(body, bodies.get(name)));
  };
  let t = oneBranch(code(text));
  // Macros: their replacement text is their body; the lines are then blanked.
  const macroBodies = new Map<string, string>();
  t = t.replace(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)((?:[^\n\\]|\\\n?)*)/gm, (m, name: string, body: string) => {
    add(name, body);
    macroBodies.set(name, body);
    return m.replace(/[^\n]/g, ' ');
  });
  t = t.replace(/^[ \t]*#[^\n]*/gm, m => m.replace(/[^\n]/g, ' '));
  let fileScope = '';
  let from = 0; // start of the current file-scope stretch
  let headStart = 0; // start of the declaration before the next `{`
  // Open braces: 'scope' for a namespace or extern "C" (its content is file scope), else a body.
  const stack: { kind: 'scope' | 'body'; name: string | null; start: number }[] = [];
  const inBody = () => stack.some(s => s.kind === 'body');
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (!inBody() && (c === ';' || c === '}')) {
      if (c === '}' && stack.length) stack.pop();
      headStart = i + 1;
      continue;
    }
    if (c === '{') {
      if (inBody()) {
        stack.push({ kind: 'body', name: null, start: i });
        continue;
      }
      const head = t.slice(headStart, i);
      if (/\bnamespace\b|\bextern\s*$/.test(head) || /^\s*extern\s*$/.test(head)) {
        stack.push({ kind: 'scope', name: null, start: i });
        headStart = i + 1;
        continue;
      }
      fileScope += t.slice(from, i);
      stack.push({ kind: 'body', name: declaredName(head), start: i });
      continue;
    }
    if (c === '}' && inBody()) {
      const top = stack.pop()!;
      if (!inBody()) {
        add(top.name, t.slice(top.start, i + 1));
        from = i + 1;
        headStart = i + 1;
      }
    }
  }
  if (!inBody()) fileScope += t.slice(from);
  const externs = new Set<string>();
  const declared = (spelled: string) => {
    for (const id of identifiers(spelled)) {
      externs.add(id);
      // `extern DECL_CASE(…)`: the names the macro spells are the ones declared.
      for (const x of bodies.get(id) ?? []) externs.add(x);
    }
  };
  for (const m of fileScope.matchAll(/\bextern\s+(?!")([^;{]*)/g)) declared(m[1]);
  // A macro that spells `extern …` itself (ggml's EXTERN_DECL_FATTN_VEC_CASES), called at file scope.
  const fileIds = identifiers(fileScope);
  for (const [name, body] of macroBodies) if (fileIds.has(name)) for (const m of body.matchAll(/\bextern\s+(?!")([^;{]*)/g)) declared(m[1]);
  return { bodies, fileScope: fileIds, inBodies, externs };
}

/** The name a declaration head defines: a class's, else the first identifier before a `(` (attributes skipped). */
function declaredName(headIn: string): string | null {
  // Parenthesised groups emptied (innermost first): a name inside `__launch_bounds__(f(x))` or a
  // parameter list is not the one declared.
  let head = headIn;
  for (let prev = ''; prev !== head;) {
    prev = head;
    head = head.replace(/\([^()]*\)/g, '\u00b6');
  }
  head = head.replace(/\u00b6/g, '()');
  const cls = /\b(?:struct|class|union)\s+(?:__align__\s*\([^)]*\)\s*|alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)[^(]*$/.exec(head);
  if (cls) return cls[1];
  for (const m of head.matchAll(/([A-Za-z_]\w*)\s*(?:<[^<>;{}]*(?:<[^<>;{}]*>[^<>;{}]*)*>)?\s*\(/g)) if (!NOT_A_NAME.has(m[1])) return m[1];
  return null;
}

function mentions(ids: Set<string>, names: Set<string>): boolean {
  for (const x of names) if (ids.has(x)) return true;
  return false;
}

/**
 * The names that lead to `functions`: they, and every definition of `headers` whose body names
 * one already in the set, to a fixed point.
 */
export function namesLeadingTo(functions: string[], headers: Definitions[], except: Set<string> = new Set()): Set<string> {
  const names = new Set(functions);
  for (let grew = true; grew;) {
    grew = false;
    for (const h of headers)
      for (const [name, ids] of h.bodies)
        if (!names.has(name) && !except.has(name) && mentions(ids, names)) {
          names.add(name);
          grew = true;
        }
  }
  return names;
}

/**
 * How a unit instantiates one of `names`: 'explicit' (named at file scope), 'implicit' (inside
 * its functions, through `implicitNames`: the names that lead to the function without passing
 * through one its headers declare extern), or null.
 */
export function instantiationIn(unit: Definitions, names: Set<string>, implicitNames: Set<string> = names): 'explicit' | 'implicit' | null {
  if (mentions(unit.fileScope, names)) return 'explicit';
  return mentions(unit.inBodies, implicitNames) ? 'implicit' : null;
}

/** The names every header declares extern (see Definitions.externs). */
export function externNames(headers: Definitions[]): Set<string> {
  const out = new Set<string>();
  for (const h of headers) for (const x of h.externs) out.add(x);
  return out;
}
