// Which function (template instantiation) a row measured, named the way the source names it:
// `void ilp_chains<256>(float*, int)` → `ilp_chains<256>`, `void gemm<float, 128>(…)` →
// `gemm<float, 128>`. The demangled name's return type and parameter list are dropped; a name that
// did not demangle (no c++filt) is kept whole.

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

/** The instantiation as the source would write it: `ilp_chains<256>`, `ns::k<float, 2>`, `k` (no template). */
export function instantiationLabel(demangled: string): string {
  let s = demangled.trim();
  if (s.startsWith('_Z')) return s; // not demangled
  // The parameter list: the last top-level `(…)` that closes at the end.
  if (s.endsWith(')')) {
    let depth = 0;
    for (let i = s.length - 1; i >= 0; i--) {
      if (s[i] === ')') depth++;
      else if (s[i] === '(') {
        depth--;
        if (depth === 0) {
          // `(anonymous namespace)::k` keeps its parentheses: a parameter list follows a name.
          if (i > 0) s = s.slice(0, i).trimEnd();
          break;
        }
      }
    }
  }
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
 * A sweep's note on which instantiation its rows measure, when several functions hold the swept
 * loops' code; null when one does (its name is in every row). `choices`: one per group of
 * template values, the first the file as written's.
 */
export function instantiationNote(
  choices: readonly { demangled: string; of: number }[],
  templateSwept: boolean,
  filtered: boolean,
): string | null {
  const several = choices.filter(c => c.of > 1);
  if (!several.length) return null;
  if (templateSwept)
    return (
      'each row measures the instantiation its template values name (instantiation column); ' +
      several
        .map(c => `for ${instantiationLabel(c.demangled)}, ${c.of} functions matched and the one with most of the loops' code was kept`)
        .join('; ')
    );
  const c = several[0];
  return (
    `${c.of} instantiations hold the swept loops' code: every row measures ${instantiationLabel(c.demangled)}, ` +
    `the one with most of it in the sweep's first builds (the file as written and its rolled build${filtered ? ', among those the kernel filter names' : ''}); ` +
    'sweep its template parameter (--param NAME=V1,V2) to measure the others'
  );
}
