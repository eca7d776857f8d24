// multi-declarator: one declaration whose declarators are offset copies of one another, each
// loading a stepping element (the statements of an offset run written as one declaration).
//
//   float a0 = g[i], a1 = g[i + s], a2 = g[i + 2 * s], a3 = g[i + 3 * s];
//
// The values must step an index (`int a0 = 0, a1 = 1;` is not an unroll), by the same step
// between every two neighbours, and the names must step by a suffix (see namesStep); 2
// declarators are enough, as for an offset run of 2 statements that steps an index.
import type { Node } from '../parser';
import type { Candidate, ManualUnrollDetector } from './detector';
import { siteSig, type Site } from './diff';
import { endRowOf, namedKids } from './syntax';
import { stepWords } from './offsetRun';
import { squash, SUFFIX_RE, templateOf } from './text';

/** At least two `=` initialisers (not `==`), a comma and a subscript: the cheap pre-check. */
function mayHaveDeclarators(text: string): boolean {
  if (text.indexOf(',') < 0 || text.indexOf('[') < 0) return false;
  let n = 0;
  for (let i = text.indexOf('='); i >= 0; i = text.indexOf('=', i + 1)) {
    const prev = text[i - 1];
    if (text[i + 1] === '=' || prev === '=' || prev === '!' || prev === '<' || prev === '>') continue;
    if (++n >= 2) return true;
  }
  return false;
}

/**
 * The declared names must step too (`a0, a1`, `x1, x2`), as the names of an offset run's
 * statements must: `uint64_t a = h[2 * t], b = h[2 * t + 1];` is a pair, `lo = v[i], hi = v[i + 1]`
 * two bounds, `x = p[0], y = p[1], z = p[2]` the fields of a point, none of them an unroll.
 */
function namesStep(a: string, b: string): boolean {
  const ma = SUFFIX_RE.exec(a);
  const mb = SUFFIX_RE.exec(b);
  return !!ma && !!mb && ma[1] === mb[1] && ma[2] !== mb[2];
}

interface Declarator {
  name: string;
  value: Node;
  text: string;
}

function declaratorsOf(decl: Node): Declarator[] {
  const out: Declarator[] = [];
  for (const d of namedKids(decl)) {
    if (d.type !== 'init_declarator') continue;
    const value = d.childForFieldName('value');
    const id = d.childForFieldName('declarator');
    if (!value || !id || value.type === 'initializer_list' || value.type === 'argument_list') continue;
    out.push({ name: id.text, value, text: d.text });
  }
  return out;
}

export const multiDeclarator: ManualUnrollDetector = {
  pattern: 'multi-declarator',
  overlap: 'first-wins',
  detect(ctx) {
    const out: Candidate[] = [];
    for (const list of ctx.scan.lists) {
      for (const s of list.items) {
        if (s.type !== 'declaration' || !s.eligible || !mayHaveDeclarators(s.text)) continue;
        const ds = declaratorsOf(s.node);
        if (ds.length < 2) continue;
        // maximal uniform runs of neighbouring declarators whose values step an index
        let best: { start: number; copies: number; sites: Site[] } | null = null;
        let start = 0;
        let sig: string | null = null;
        let sites: Site[] = [];
        const close = (end: number) => {
          const copies = end - start + 1;
          if (sig !== null && copies >= 2 && (!best || copies > best.copies)) best = { start, copies, sites };
        };
        for (let i = 0; i + 1 < ds.length; i++) {
          const ps: Site[] = [];
          const ok =
            namesStep(ds[i].name, ds[i + 1].name) &&
            ctx.an.diffNodes(ds[i].value, ds[i + 1].value, ps, false, 0) &&
            ps.length > 0 &&
            ps.some(p => p.kind === 'lin' && p.inIndex);
          const psig = ok ? ps.map(siteSig).join('|') : null;
          if (psig !== null && psig === sig) continue;
          close(i);
          start = i;
          sig = psig;
          sites = ps;
        }
        close(ds.length - 1);
        if (!best) continue;
        const b: { start: number; copies: number; sites: Site[] } = best;
        const first = ds[b.start];
        const second = ds[b.start + 1];
        const last = ds[b.start + b.copies - 1];
        const tpl = templateOf(first.value.text, second.value.text, b.copies);
        const loads = tpl
          ? `loading \`${tpl}\`${/\bj\b/.test(tpl) ? `, j = 0..${b.copies - 1}` : ''}`
          : `loading \`${squash(first.value.text, 50)}\` … \`${squash(last.value.text, 50)}\` (${stepWords(b.sites)})`;
        const startRow = s.row;
        const endRow = endRowOf(s.node);
        out.push({
          line: startRow + 1,
          endLine: endRow + 1,
          pattern: 'multi-declarator',
          factor: b.copies,
          detail: `one declaration with ${b.copies} declarators (\`${first.name}\` … \`${last.name}\`) ${loads}`,
          startRow,
          endRow,
        });
      }
    }
    return out;
  },
};
