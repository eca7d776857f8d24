// Kernel names as ncu and cuobjdump print them (demangled): `void ilp_chains<256>(float*, int)`.
// Pure text, shared by the engine (sweep and SASS reports), the CLI and the results panel, so it
// lives in the schema leaf that every layer may import.

/** Depth of () and <> nesting at each character; `operator<` and the like are not a concern in kernel names. */
function topLevel(s: string, at: (i: number, depth: number) => boolean): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(' || c === '<' || c === '[') depth++;
    else if (c === ')' || c === '>' || c === ']') depth--;
    if (at(i, depth)) return i;
  }
  return -1;
}

/**
 * Where the parameter list starts: the `(` of the last balanced `(…)` group that closes at the end
 * of the name; -1 when the name does not end in one.
 */
export function parameterListStart(name: string): number {
  if (!name.endsWith(')')) return -1;
  let depth = 0;
  for (let i = name.length - 1; i >= 0; i--) {
    if (name[i] === ')') depth++;
    else if (name[i] === '(') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

// Which function (template instantiation) a row measured, named the way the source names it:
// `void ilp_chains<256>(float*, int)` → `ilp_chains<256>`, `void gemm<float, 128>(…)` →
// `gemm<float, 128>`. The demangled name's return type and parameter list are dropped; a name that
// did not demangle (no c++filt) is kept whole.

/** The instantiation as the source would write it: `ilp_chains<256>`, `ns::k<float, 2>`, `k` (no template). */
export function instantiationLabel(demangled: string): string {
  let s = demangled.trim();
  if (s.startsWith('_Z')) return s; // not demangled
  // The parameter list: the last top-level `(…)` that closes at the end.
  // `(anonymous namespace)::k` keeps its parentheses: a parameter list follows a name.
  const params = parameterListStart(s);
  if (params > 0) s = s.slice(0, params).trimEnd();
  // The return type of a template: everything before the last top-level space.
  let lastSpace = -1;
  topLevel(s, (i, depth) => {
    if (s[i] === ' ' && depth === 0) lastSpace = i;
    return false;
  });
  return lastSpace >= 0 ? s.slice(lastSpace + 1) : s;
}

/**
 * Whether rows need an instantiation column: some row names one, and the kernel is a template
 * or rows name different ones (else the kernel's name in the heading says it all).
 */
export function showInstantiations(rows: readonly { instantiation?: string | null }[]): boolean {
  const named = [...new Set(rows.flatMap(r => (r.instantiation ? [instantiationLabel(r.instantiation)] : [])))];
  return named.length > 1 || (named.length === 1 && named[0].includes('<'));
}

/**
 * The source name of a function from its demangled name: `void hot_loop<2048>(…)` → hot_loop,
 * `ns::k(float*)` → k (a template's demangled name starts with its return type).
 */
export function sourceNameOf(demangled: string): string {
  return demangled.replace(/\(.*$/, '').replace(/<.*$/, '').split('::').pop()?.trim().split(/\s+/).pop() ?? '';
}
