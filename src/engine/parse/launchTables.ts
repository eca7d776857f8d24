// Launches through a kernel pointer (issue 26): a program that runs a ladder of kernels keeps them
// in a table and launches `kernels[i]<<<grid, block>>>(…)`, `v.kernel<<<…>>>` over a table of
// structs, or `cudaLaunchKernel((void *)kernels[i], …)`. Which entry runs is decided at run time,
// so such a launch counts as a launch of every kernel the table names, each with the launch's
// sizes; without that a kernel launched only through the table has no launch in the file and its
// occupancy falls back to a guessed block size. Read from the text (comments and strings
// blanked), like the launches themselves:
//
//   void (*kernels[])(int *, int *, unsigned) = {reduceNeighbored, reduceInterleaved};
//   using K = void (*)(int *); K kernels[] = {a, b};        std::array<K, 2> kernels{{a, b}};
//   const Variant variants[] = {{"a", a, 1}, {"b", b, 2}}; for (const Variant &v : variants) v.kernel<<<…>>>
//   K fn = kernels[i];   auto &v = variants[i];   fn = use_b ? b : a;

/** What a pointer launch resolves to: the kernels a table (or pointer variable) names, and where. */
export interface KernelTable {
  /** The table the launch reaches (`kernels`, `variants`), or the pointer variable assigned kernels directly. */
  name: string;
  /** 1-based line of its initializer (or of the first assignment read). */
  line: number;
  /** Kernel names in the order the table lists them, each once. */
  kernels: string[];
}

const KEYWORDS = new Set([
  'nullptr', 'NULL', 'true', 'false', 'sizeof', 'const', 'void', 'int', 'unsigned', 'float', 'double', 'char',
  'auto', 'static', 'constexpr', 'struct', 'return', 'new', 'this', 'std',
]); // prettier-ignore

/**
 * Names of the `__global__` functions the text defines or declares (`template <…> __global__ void
 * __launch_bounds__(256) k(…)`): the identifiers of a table that are kernels.
 */
export function globalKernelNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/\b__global__\b/g)) {
    // the head up to the parameter list, with `__launch_bounds__(…)` and attribute parentheses dropped
    const head = text.slice(m.index! + m[0].length, m.index! + 400).replace(/\b__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)/g, ' ');
    const n = /^[^;{}()]*?([A-Za-z_]\w*)\s*(?:<[^<>;{}()]*>\s*)?\(/.exec(head);
    if (n) out.add(n[1]);
  }
  return out;
}

/** The index just past the brace block opening at `open`, or -1. */
function closingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

function escape(name: string): string {
  return name.replace(/[^\w]/g, '');
}

/** The kernels an expression names (`a`, `k<64>`, `use ? a : b`, a brace initializer), in order. */
function kernelsNamedIn(expr: string, kernels: Set<string>): string[] {
  const out: string[] = [];
  // `&k`, `(void *)k`, `k<64>`: the name is what counts; member names after `.`/`->` are fields, not kernels
  for (const m of expr.matchAll(/(?<![\w.>]|->)([A-Za-z_]\w*)/g)) {
    const n = m[1];
    if (KEYWORDS.has(n) || out.includes(n)) continue;
    // a file that defines no kernels (a header's translation unit) cannot tell kernels from other names
    if (kernels.size ? kernels.has(n) : /^\s*(?:<[^;]*?>)?\s*(?:[,}]|$)/.test(expr.slice(m.index! + n.length))) out.push(n);
  }
  return out;
}

/** The base name of a callee (`kernels[i]` → kernels, `v.kernel` → v, `(*fp)` → fp), when it has one. */
function baseName(callee: string): string | null {
  const m = /^[\s(*&]*([A-Za-z_]\w*)/.exec(callee);
  return m ? m[1] : null;
}

/**
 * Is a declaration at `decl` in scope at `at` (after it)? Not when a `}` between them closes the
 * block it was declared in: a table of the same name in another function (issue 40:
 * coarsening.cu's two `variants` tables) is not the one a later launch reads.
 */
function inScope(text: string, decl: number, at: number): boolean {
  let depth = 0;
  for (let i = decl; i < at; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth < 0) return false;
  }
  return true;
}

/** The matches of `re` in `before` whose declaration is in scope at its end, nearest first. */
function visibleMatches(before: string, re: RegExp): RegExpMatchArray[] {
  return [...before.matchAll(re)].filter(m => inScope(before, m.index!, before.length)).reverse();
}

/**
 * Where `name` gets its kernels, before `at`, from the nearest declaration in scope there: a brace initializer (`name[] = {…}`, `(*name[])(…)
 * = {…}`, `std::array<…> name{…}`), a range-for over a table (`for (auto &name : table)`), or
 * assignments (`K name = table[i];`, `fn = cond ? a : b;`) read through to what they name.
 */
function resolveName(text: string, name: string, at: number, kernels: Set<string>, depth: number): KernelTable | null {
  if (depth > 4) return null;
  const before = text.slice(0, at);
  const n = escape(name);
  const lineAt = (i: number) => text.slice(0, i).split('\n').length;
  // a brace initializer: the table itself
  const init = new RegExp(String.raw`(?<![\w.])${n}\s*(?:\[[^\]\n]*\]\s*)*(?:\)\s*\([^()]*\)\s*)?(=\s*)?\{`, 'g');
  for (const m of visibleMatches(before, init)) {
    // `name {` without `=` is a declaration only after a type (`std::array<K, 3> name{…}`), not `if (name) {`
    if (!m[1] && !/(?:[\w>]\s+|>)$/.test(before.slice(0, m.index!))) continue;
    const open = m.index! + m[0].length - 1;
    const end = closingBrace(text, open);
    if (end < 0) continue;
    const found = kernelsNamedIn(text.slice(open, end), kernels);
    if (found.length) return { name, line: lineAt(m.index!), kernels: found };
  }
  // a range-for over a table
  const rangeFor = new RegExp(String.raw`\bfor\s*\([^;()]*?[\s&*]${n}\s*:\s*([A-Za-z_]\w*)\s*\)`, 'g');
  for (const m of visibleMatches(before, rangeFor)) {
    // the loop variable lives in the loop's body only: a loop that ended before `at` is not it
    const body = /^\s*\{/.test(text.slice(m.index! + m[0].length)) ? text.indexOf('{', m.index! + m[0].length) : -1;
    if (body >= 0 && closingBrace(text, body) < at) continue;
    const t = resolveName(text, m[1], m.index!, kernels, depth + 1);
    if (t) return t;
  }
  // assignments and initialisers: what each names, directly or through another table
  const assign = new RegExp(String.raw`(?<![\w.>])${n}\s*=(?!=)\s*([^;{]+);`, 'g');
  const names: string[] = [];
  let line = 0;
  let table = name;
  for (const m of before.matchAll(assign)) {
    const rhs = m[1];
    const direct = kernelsNamedIn(rhs, kernels.size ? kernels : new Set());
    const inner = direct.length ? null : baseName(rhs.replace(/^\s*\([^()]*\)\s*/, ''));
    const via = inner && inner !== name ? resolveName(text, inner, m.index!, kernels, depth + 1) : null;
    const got = direct.length ? direct : (via?.kernels ?? []);
    if (got.length && !line) [line, table] = via ? [via.line, via.name] : [lineAt(m.index!), name];
    for (const k of got) if (!names.includes(k)) names.push(k);
  }
  return names.length ? { name: table, line, kernels: names } : null;
}

/**
 * The kernels a launch through a pointer reaches: `kernels[i]`, `v.kernel`, `table[i].fn`, `fn`
 * (a pointer variable). Null when the callee is a kernel itself or nothing in the file says.
 */
export function kernelTableOf(text: string, callee: string, at: number, kernels: Set<string>): KernelTable | null {
  const base = baseName(callee);
  if (!base || kernels.has(base)) return null;
  try {
    return resolveName(text, base, at, kernels, 0);
  } catch {
    return null; // best effort: the launch stays one through an unknown pointer
  }
}
