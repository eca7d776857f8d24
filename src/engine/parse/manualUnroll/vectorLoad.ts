// vector-load: W scalars loaded at once through a pointer cast to a W-wide vector type, then used
// component by component: the loads of a manual unroll by W folded into one wide access.
//
//   float4 v = reinterpret_cast<const float4*>(p)[i];        s += v.x; s += v.y; s += v.z; s += v.w;
//   float4 v = *reinterpret_cast<const float4*>(&p[4 * i]);  out[i] = v.x + v.y + v.z + v.w;
//   float2 v = __ldg(reinterpret_cast<const float2*>(p) + i);
//   const int4* q = reinterpret_cast<const int4*>(p); … int4 v = q[i];
//
// Reported: a declaration of a vector variable (`float4`, `int2`, …, or `auto`) whose initialiser
// reads through such a cast (in place, or through a pointer variable initialised with one in the
// same function), when every component (.x .y, or .x .y .z .w) is used within the next
// statements. A vector read from a pointer that is already of vector type (`float4 v = in4[i]`
// with a `const float4*` parameter) is the data's own type, not a hand-made unroll, and
// `float4 v; v.x = 0; v.y = 0; …` (no load) is an initialisation: neither is reported.
import type { Candidate, ManualUnrollDetector } from './detector';
import type { Stmt, StmtList } from './statements';
import { endRowOf } from './syntax';
import { squash } from './text';

const VEC = '(?:(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[24]|__half2|half2|__nv_bfloat162|nv_bfloat162)';
/** Cheap pre-check: the statement names a vector type. */
const VEC_WORD_RE = new RegExp(`\\b${VEC}\\b`);
const QUAL = '(?:(?:const|volatile|__restrict__)\\s+)*';
/** `reinterpret_cast<const float4*>` or the C-style `(const float4*)`: group 1 or 2 is the type. */
const VEC_CAST_RE = new RegExp(
  `reinterpret_cast\\s*<\\s*${QUAL}(${VEC})\\s*(?:const\\s*)?\\*\\s*(?:const\\s*)?>|\\(\\s*${QUAL}(${VEC})\\s*(?:const\\s*)?\\*\\s*(?:const\\s*)?\\)`,
);
/** `const float4 v = …;` / `auto& v = …;`: type, name, initialiser. */
const VEC_DECL_RE = new RegExp(`^\\s*${QUAL}(${VEC}|auto)\\s*&?\\s*([A-Za-z_]\\w*)\\s*=(?!=)\\s*([^;]*?)\\s*;\\s*$`, 's');
/** `const float4* q = <cast>…;`: type, name, initialiser. */
const VEC_PTR_DECL_RE = new RegExp(
  `^\\s*${QUAL}(${VEC})\\s*(?:const\\s*)?\\*\\s*(?:const\\s+|__restrict__\\s+)*([A-Za-z_]\\w*)\\s*=(?!=)\\s*([^;]*?)\\s*;\\s*$`,
  's',
);
/** Statements after the load in which its components must all be used. */
const USE_WINDOW = 16;

function widthOf(type: string): number {
  return /2$/.test(type) ? 2 : 4;
}

interface VecPtr {
  type: string;
  row: number;
}

/** Pointer variables initialised with a vector cast (`const float4* q = reinterpret_cast<…>(p)`). */
function castPointers(lists: StmtList[]): Map<string, VecPtr> {
  const out = new Map<string, VecPtr>();
  for (const list of lists)
    for (const s of list.items) {
      if (s.type !== 'declaration' || !VEC_WORD_RE.test(s.text)) continue;
      const m = VEC_PTR_DECL_RE.exec(s.text);
      if (!m) continue;
      const c = VEC_CAST_RE.exec(m[3]);
      if (c && (c[1] ?? c[2]) === m[1]) out.set(m[2], { type: m[1], row: s.row });
    }
  return out;
}

/** The vector type loaded by initialiser `init`, or null when it is not a load through a cast. */
function loadedType(init: string, ptrs: Map<string, VecPtr>, row: number): { type: string; via: string } | null {
  const c = VEC_CAST_RE.exec(init);
  if (c) return { type: c[1] ?? c[2], via: c[0] };
  for (const [name, p] of ptrs) {
    if (p.row > row) continue;
    // q[i], *(q + i), __ldg(q + i), __ldg(&q[i])
    const re = new RegExp(`(?:^|[^\\w.>])${name}\\s*(?:\\[|\\+|\\))`);
    if (re.test(init)) return { type: p.type, via: name };
  }
  return null;
}

function componentUse(name: string, items: Stmt[], from: number, width: number): number {
  const want = width === 2 ? 'xy' : 'xyzw';
  const seen = new Set<string>();
  const re = new RegExp(`(?:^|[^\\w.>])${name}\\s*\\.\\s*([xyzw])\\b`, 'g');
  for (let i = from; i < items.length && i < from + USE_WINDOW; i++) {
    const t = items[i].text;
    if (t.indexOf(name) < 0) continue;
    re.lastIndex = 0;
    for (let m = re.exec(t); m; m = re.exec(t)) if (want.includes(m[1])) seen.add(m[1]);
    if (seen.size === want.length) return i;
  }
  return -1;
}

export const vectorLoad: ManualUnrollDetector = {
  pattern: 'vector-load',
  // each load is checked against the findings of earlier detectors; two loads whose uses
  // interleave (`float4 a = …; float4 b = …; s += a.x * b.x; …`) are both reported
  overlap: 'keep-all',
  detect(ctx) {
    const out: Candidate[] = [];
    let ptrs: Map<string, VecPtr> | null = null;
    for (const list of ctx.scan.lists) {
      const items = list.items;
      for (let d = 0; d < items.length; d++) {
        const s = items[d];
        if (s.type !== 'declaration' || !s.eligible || !VEC_WORD_RE.test(s.text)) continue;
        const m = VEC_DECL_RE.exec(s.text);
        if (!m) continue;
        ptrs ??= castPointers(ctx.scan.lists);
        const load = loadedType(m[3], ptrs, s.row);
        if (!load) continue;
        const declared = m[1];
        if (declared !== 'auto' && widthOf(declared) !== widthOf(load.type)) continue;
        // `auto q = reinterpret_cast<const float4*>(p);` is the pointer, not a load
        if (declared === 'auto' && !/^\*|^__ld\w*\s*\(|\]$/.test(m[3])) continue;
        const width = widthOf(load.type);
        const end = componentUse(m[2], items, d + 1, width);
        if (end < 0) continue;
        const startRow = s.row;
        const endRow = endRowOf(items[end].node);
        if (!ctx.isFree({ startRow, endRow })) continue;
        const comps = (width === 2 ? ['x', 'y'] : ['x', 'y', 'z', 'w']).map(c => `${m[2]}.${c}`).join(', ');
        out.push({
          line: startRow + 1,
          endLine: endRow + 1,
          pattern: 'vector-load',
          factor: width,
          vectorType: load.type,
          detail: `one \`${load.type}\` load of ${width} elements, \`${squash(m[3], 60)}\`${
            load.via === m[2] || VEC_CAST_RE.test(m[3]) ? '' : ` (\`${load.via}\` is a cast pointer)`
          }, then ${comps} used one by one`,
          startRow,
          endRow,
        });
      }
    }
    return out;
  },
};
