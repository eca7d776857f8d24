// A seeded fuzzer for the incremental documents the language server keeps (CudaDocuments): random
// edit sequences and byte-level mutations of the bundled cuda-samples. After every checked step
// the incremental state must equal a fresh parse of the same text (FileAnalysis as JSON), and
// nothing may throw. Documents opened with a header-derived macro table get their table re-read
// when an edit may touch a directive, as the server does (src/server/macros.ts editMayChangeMacros).
//
// Everything is a pure function of the seed: a failure prints the seed, the step and a reproducer
// (the edit list shrunk by dropping edits while it still fails).
import * as fs from 'fs';
import * as path from 'path';
import { CudaDocuments, TextChange } from '../../src/engine/parse/documents';
import { MacroTable, MacroTables } from '../../src/engine/parse/macros';
import type { PreprocessOptions } from '../../src/engine/parse/macros';
import { editMayChangeMacros } from '../../src/server/macros';
import { computeFindings } from '../../src/engine/parse/findings';

// ---------------------------------------------------------------- random numbers

/** mulberry32: small, fast, good enough for test generation; a pure function of its seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
}

/** The seed of case `i` of a run started with `seed` (cases are independent of each other). */
export function caseSeed(seed: number, i: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca77)) >>> 0;
}

// ---------------------------------------------------------------- samples

export interface Sample {
  name: string;
  path: string;
  bytes: Buffer;
  text: string;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
export const SAMPLES_DIR = path.join(REPO_ROOT, 'cuda-samples');
/** The sample whose macros come from its own header (pm_config.h). */
export const MACRO_SAMPLE = path.join(SAMPLES_DIR, 'project_macros', 'project_macros.cu');
export const MACRO_OPTIONS: PreprocessOptions = { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90' };

let samplesCache: Sample[] | undefined;
export function loadSamples(): Sample[] {
  if (samplesCache) return samplesCache;
  const out: Sample[] = [];
  for (const f of fs.readdirSync(SAMPLES_DIR, { recursive: true }).map(String).sort()) {
    if (!/\.(cu|cuh|h)$/.test(f)) continue;
    const p = path.join(SAMPLES_DIR, f);
    const bytes = fs.readFileSync(p);
    out.push({ name: f, path: p, bytes, text: bytes.toString('utf8') });
  }
  return (samplesCache = out);
}

// ---------------------------------------------------------------- cases

export type Step =
  | { kind: 'update'; label: string; changes: TextChange[]; check: boolean }
  | { kind: 'replace'; label: string; text: string; check: boolean };

export interface FuzzCase {
  seed: number;
  /** The sample the case starts from (its path is the document's path). */
  sample: string;
  path: string;
  /** 'headers': the document sees the macros its headers define (MacroTables), re-read on directive edits. */
  macros: 'builtin' | 'headers';
  /** How the initial text was made from the sample. */
  origin: string;
  initial: string;
  steps: Step[];
}

/** Text an edit may insert: pragmas in every spelling, braces, directives, odd characters. */
const SNIPPETS = [
  '#pragma unroll 4\n',
  '#pragma unroll\n',
  '#pragma unroll 1\n',
  '  #pragma unroll 16\n',
  '#pragma unroll (2)\n',
  '#pragma unroll N\n',
  '#pragma nounroll\n',
  '#pragma unroll 4',
  '#pragma',
  'unroll 8',
  '_Pragma("unroll 4")',
  '_Pragma("unroll 4") ',
  '_Pragma("unroll")\n',
  '_Pragma(',
  'CUTLASS_PRAGMA_UNROLL\n',
  'CUTLASS_PRAGMA_NO_UNROLL\n',
  'CUTLASS_PRAGMA_UNROLL',
  'PM_UNROLL(4)\n',
  'PM_UNROLL_ALL ',
  'PM_NO_UNROLL\n',
  'PM_DEVICE ',
  'PM_KERNEL void z(float* a) {\n',
  '#define UNR _Pragma("unroll 2")\n',
  '#define PM_UNROLL(n) _Pragma("unroll 8")\n',
  '#define N 8\n',
  '#define',
  '#undef N\n',
  '#undef PM_UNROLL\n',
  '#if 0\n',
  '#endif\n',
  '#else\n',
  '#include "pm_config.h"\n',
  '\\\n',
  '{',
  '}',
  ';',
  '(',
  ')',
  '{\n',
  '}\n',
  'for (int i = 0; i < 8; ++i) ',
  'for (int j = 0; j < n; j += 2) { a[j] = 0; }\n',
  'for (',
  'while (n--) ',
  '__global__ void g(float* a) {\n',
  '__device__ ',
  'template <int T>\n',
  'a[i] += b[i] * c;',
  'x = y0 + y1 + y2 + y3;',
  'float4 v = reinterpret_cast<float4*>(p)[i];',
  '/*',
  '*/',
  '// ',
  '"',
  "'",
  '\n',
  '\r\n',
  '\r',
  ' ',
  '\t',
  '0',
  '9',
  'é',
  '€',
  '😀',
  '漢字',
  '\uFFFD',
  '\uD83D', // a lone high surrogate
  '\uDE00', // a lone low surrogate
  '\0',
  '\u00A0',
  '\uFEFF',
];

/** Offsets worth editing: pragmas, loops, braces, line starts, directives. */
const HOT = /#\s*pragma|_Pragma|PRAGMA|UNROLL|for\s*\(|[{}();]|\n|#\s*define|#\s*include|\\\n/g;

function pickOffset(rng: Rng, text: string): number {
  if (text.length && rng.chance(0.6)) {
    const hits: number[] = [];
    HOT.lastIndex = 0;
    for (let m = HOT.exec(text); m; m = HOT.exec(text)) hits.push(m.index + (rng.chance(0.5) ? 0 : m[0].length));
    if (hits.length) return Math.max(0, Math.min(text.length, rng.pick(hits) + (rng.chance(0.3) ? rng.range(-3, 3) : 0)));
  }
  return rng.int(text.length + 1);
}

function randomChunk(rng: Rng, text: string, maxLen: number): string {
  if (!text.length) return '';
  const at = rng.int(text.length);
  return text.slice(at, at + rng.range(1, maxLen));
}

function insertText(rng: Rng, samples: Sample[]): string {
  const r = rng.next();
  if (r < 0.6) return rng.pick(SNIPPETS);
  if (r < 0.8) {
    let s = '';
    for (let n = rng.range(1, 4); n > 0; n--) s += rng.pick(SNIPPETS);
    return s;
  }
  return randomChunk(rng, rng.pick(samples).text, 400); // a paste from another sample
}

export function applyChange(text: string, c: TextChange): string {
  return text.slice(0, c.start) + c.text + text.slice(c.start + c.length);
}

/** A change made valid for `text` (after shrinking dropped the edits it was generated after). */
export function clampChange(text: string, c: TextChange): TextChange {
  const start = Math.min(c.start, text.length);
  return { start, length: Math.min(c.length, text.length - start), text: c.text };
}

/** Byte-level mutations: flips, inserted and deleted bytes, NULs, broken UTF-8; decoded as the server would receive it. */
export function mutateBytes(rng: Rng, bytes: Buffer): { text: string; what: string } {
  const b = [...bytes];
  const what: string[] = [];
  const n = rng.range(1, 12);
  const junk = [
    0x00, 0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0x82, 0xed, 0xa0, 0xf0, 0x9f, 0xf5, 0xfe, 0xff, 0x0d, 0x0a, 0x23, 0x7b, 0x7d, 0x22, 0x5c,
  ];
  for (let i = 0; i < n; i++) {
    const at = rng.int(b.length + 1);
    const r = rng.next();
    if (r < 0.3 && b.length) {
      const j = Math.min(at, b.length - 1);
      b[j] ^= 1 << rng.int(8);
      what.push(`flip@${j}`);
    } else if (r < 0.6) {
      const ins = Array.from({ length: rng.range(1, 4) }, () => (rng.chance(0.7) ? rng.pick(junk) : rng.int(256)));
      b.splice(at, 0, ...ins);
      what.push(`ins@${at}`);
    } else if (r < 0.85) {
      const len = rng.range(1, 8);
      b.splice(at, len);
      what.push(`del@${at}+${len}`);
    } else {
      // a multi-byte character cut short (its lead byte only)
      b.splice(at, 0, rng.pick([0xc3, 0xe2, 0xf0]));
      what.push(`cut@${at}`);
    }
  }
  return { text: Buffer.from(b).toString('utf8'), what: what.join(',') };
}

/** A window of the sample around a random line (smaller documents: more cases per second). */
function window(rng: Rng, text: string): string {
  const lines = text.split('\n');
  const from = rng.int(lines.length);
  return lines.slice(from, from + rng.range(20, 120)).join('\n');
}

/** Generates one case; each step's offsets are valid for the text the previous steps left. */
export function generateCase(seed: number, samples: Sample[] = loadSamples(), maxSteps = 24): FuzzCase {
  const rng = new Rng(seed);
  const headers = rng.chance(0.3);
  const sample = headers ? samples.find(s => s.path === MACRO_SAMPLE)! : rng.pick(samples);
  let text: string;
  let origin: string;
  const r = rng.next();
  if (r < 0.25) {
    const m = mutateBytes(rng, sample.bytes);
    text = m.text;
    origin = `bytes(${m.what})`;
  } else if (r < 0.6) {
    text = window(rng, sample.text);
    origin = 'window';
  } else {
    text = sample.text;
    origin = 'whole';
  }
  if (rng.chance(0.1)) {
    text = text.replace(/\n/g, '\r\n');
    origin += '+crlf';
  }
  const initial = text;
  const steps: Step[] = [];
  const push = (label: string, changes: TextChange[], check = rng.chance(0.85)) => {
    for (const c of changes) text = applyChange(text, c);
    steps.push({ kind: 'update', label, changes, check });
  };
  const nSteps = rng.range(1, maxSteps);
  while (steps.length < nSteps) {
    const k = rng.next();
    if (k < 0.18) {
      const at = pickOffset(rng, text);
      push('insert', [{ start: at, length: 0, text: insertText(rng, samples) }]);
    } else if (k < 0.32) {
      const at = pickOffset(rng, text);
      push(
        'delete',
        [{ start: at, length: Math.min(text.length - at, rng.chance(0.7) ? rng.range(1, 4) : rng.range(1, 200)) }].map(c => ({
          ...c,
          text: '',
        })),
      );
    } else if (k < 0.44) {
      const at = pickOffset(rng, text);
      push('replace-span', [{ start: at, length: Math.min(text.length - at, rng.range(0, 30)), text: insertText(rng, samples) }]);
    } else if (k < 0.56) {
      // typing, one character (UTF-16 code unit or whole code point) per event
      let at = pickOffset(rng, text);
      const s = rng.pick(SNIPPETS.filter(x => x.length > 3));
      const units = rng.chance(0.8) ? [...s] : s.split('');
      for (const ch of units) {
        if (steps.length >= nSteps + 12) break;
        push('type', [{ start: at, length: 0, text: ch }]);
        at += ch.length;
      }
    } else if (k < 0.62) {
      // backspacing
      let at = pickOffset(rng, text);
      for (let n = rng.range(1, 8); n > 0 && at > 0; n--) {
        push('backspace', [{ start: at - 1, length: 1, text: '' }]);
        at--;
      }
    } else if (k < 0.7) {
      // a pragma line added above a loop, or one removed
      const pragmas = [...text.matchAll(/^[ \t]*(#\s*pragma[^\n]*|_Pragma\([^\n]*|\w*PRAGMA\w*|PM_\w*UNROLL\w*(\(\d*\))?)\r?\n/gm)];
      if (pragmas.length && rng.chance(0.5)) {
        const m = rng.pick(pragmas);
        push('remove-pragma', [{ start: m.index!, length: m[0].length, text: '' }]);
      } else {
        const loops = [...text.matchAll(/^[ \t]*(for|while)\b/gm)];
        const at = loops.length ? rng.pick(loops).index! : pickOffset(rng, text);
        push('add-pragma', [
          {
            start: at,
            length: 0,
            text:
              rng.pick(['#pragma unroll ', '  #pragma unroll ', '_Pragma("unroll ']) +
              rng.pick(['2', '4', '8', '1', '']) +
              rng.pick(['\n', '")\n', ' ']),
          },
        ]);
      }
    } else if (k < 0.76) {
      // a pragma's factor changed in place
      const nums = [...text.matchAll(/unroll\s+(\d+)|UNROLL\((\d+)\)/g)];
      if (!nums.length) continue;
      const m = rng.pick(nums);
      const digits = m[1] ?? m[2];
      const at = m.index! + m[0].lastIndexOf(digits);
      push('factor', [{ start: at, length: digits.length, text: String(rng.pick([1, 2, 3, 4, 8, 16, 32, 0])) }]);
    } else if (k < 0.84) {
      // several changes in one event, each relative to the text after the previous one
      const changes: TextChange[] = [];
      let t = text;
      for (let n = rng.range(2, 4); n > 0; n--) {
        const at = pickOffset(rng, t);
        const c = { start: at, length: Math.min(t.length - at, rng.range(0, 6)), text: rng.chance(0.6) ? insertText(rng, samples) : '' };
        changes.push(c);
        t = applyChange(t, c);
      }
      push('multi', changes);
    } else if (k < 0.88) {
      // line endings: a CRLF, or a line's LF turned into CRLF
      const nl = [...text.matchAll(/\n/g)];
      if (nl.length && rng.chance(0.5)) push('crlf', [{ start: rng.pick(nl).index!, length: 1, text: '\r\n' }]);
      else push('crlf', [{ start: pickOffset(rng, text), length: 0, text: '\r\n' }]);
    } else if (k < 0.92) {
      // a full-text sync (replace): the text with a few changes elsewhere
      let t = text;
      for (let n = rng.range(1, 3); n > 0; n--) {
        const at = pickOffset(rng, t);
        t = applyChange(t, { start: at, length: Math.min(t.length - at, rng.range(0, 10)), text: insertText(rng, samples) });
      }
      text = t;
      steps.push({ kind: 'replace', label: 'replace', text: t, check: rng.chance(0.85) });
    } else if (k < 0.96) {
      // a whole-line cut or duplication
      const lines = [...text.matchAll(/[^\n]*\n/g)];
      if (!lines.length) continue;
      const m = rng.pick(lines);
      if (rng.chance(0.5)) push('cut-line', [{ start: m.index!, length: m[0].length, text: '' }]);
      else push('dup-line', [{ start: m.index!, length: 0, text: m[0] }]);
    } else {
      // a big paste or a big deletion
      const at = pickOffset(rng, text);
      if (rng.chance(0.5)) push('paste', [{ start: at, length: 0, text: randomChunk(rng, rng.pick(samples).text, 3000) }]);
      else push('cut', [{ start: at, length: Math.min(text.length - at, rng.range(100, 3000)), text: '' }]);
    }
  }
  // The last step is always checked.
  if (steps.length) steps[steps.length - 1].check = true;
  return { seed, sample: sample.name, path: sample.path, macros: headers ? 'headers' : 'builtin', origin, initial, steps };
}

// ---------------------------------------------------------------- the property

export interface Failure {
  /** -1: on open; otherwise the index of the step after which the property failed. */
  step: number;
  message: string;
  /** The incremental syntax tree itself differs from a fresh parse's (both of broken code). */
  parserDivergence?: boolean;
}

export interface Checker {
  docs: CudaDocuments;
  tables: MacroTables;
}

export async function createChecker(): Promise<Checker> {
  return { docs: await CudaDocuments.create(), tables: new MacroTables() };
}

const KEY = 'fuzz://incremental';
const FRESH = 'fuzz://fresh';

function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `incremental …${a.slice(Math.max(0, i - 80), i + 80)}…\n  fresh       …${b.slice(Math.max(0, i - 80), i + 80)}…`;
}

/**
 * Runs a case; null when every checked step's analysis equals a fresh parse of the same text and
 * nothing threw. `steps` may be a subset of the case's (shrinking): changes are clamped to the text.
 */
export function runCase(ck: Checker, c: FuzzCase, steps: Step[] = c.steps): Failure | null {
  const { docs, tables } = ck;
  const tableFor = (text: string): MacroTable =>
    c.macros === 'headers' ? tables.tableFor(c.path, text, MACRO_OPTIONS).table : MacroTable.builtin;
  let text = c.initial;
  let at = -1;
  try {
    docs.open(KEY, text, c.path, tableFor(text));
    for (at = 0; at < steps.length; at++) {
      const s = steps[at];
      let directives = false;
      if (s.kind === 'update') {
        // One didChange event: the server applies its changes one by one (src/server/main.ts).
        for (const raw of s.changes) {
          const ch = clampChange(text, raw);
          directives ||= editMayChangeMacros(text, ch.start, ch.length, ch.text);
          docs.update(KEY, [ch]);
          text = applyChange(text, ch);
        }
      } else {
        directives = true;
        docs.replace(KEY, s.text);
        text = s.text;
      }
      if (docs.text(KEY) !== text) return { step: at, message: 'the document text differs from the edited text' };
      if (directives && c.macros === 'headers') docs.setMacros(KEY, tableFor(text));
      if (!s.check && at < steps.length - 1) continue;
      const analysis = docs.analysis(KEY)!;
      computeFindings(analysis); // what the server publishes as diagnostics must not throw either
      const got = JSON.stringify(analysis);
      const table = tableFor(text);
      if (docs.macros(KEY) !== table)
        return { step: at, message: 'the macro table is not the one the text calls for (an edit changed directives unnoticed)' };
      const want = JSON.stringify(docs.open(FRESH, text, c.path, table));
      if (got !== want) {
        // tree-sitter's error recovery may shape an incremental reparse of broken code differently
        // from a fresh parse: that is the parser's, not the analysis', and is counted apart.
        const divergent = docs.tree(KEY)!.rootNode.toString() !== docs.tree(FRESH)!.rootNode.toString();
        docs.close(FRESH);
        return { step: at, message: `analysis differs from a fresh parse:\n  ${firstDifference(got, want)}`, parserDivergence: divergent };
      }
      docs.close(FRESH);
    }
    return null;
  } catch (e) {
    return { step: at, message: `threw: ${e instanceof Error ? e.stack : String(e)}` };
  } finally {
    docs.close(KEY);
    docs.close(FRESH);
  }
}

/** Drops steps (halves, then one at a time) while the case still fails; cheap and usually enough. */
export function shrink(ck: Checker, c: FuzzCase, failure: Failure, budget = 400): { steps: Step[]; failure: Failure } {
  let steps = c.steps.slice(0, failure.step + 1);
  let best = failure;
  let tries = 0;
  const kind = (f: Failure) => `${f.parserDivergence ?? false}:${f.message.slice(0, 30)}`;
  for (let chunk = Math.max(1, steps.length >> 1); chunk >= 1 && tries < budget; chunk >>= 1) {
    for (let i = 0; i + chunk <= steps.length && tries < budget;) {
      const candidate = steps
        .slice(0, i)
        .concat(steps.slice(i + chunk))
        .map(s => ({ ...s, check: true }));
      tries++;
      const f = runCase(ck, c, candidate);
      if (f && kind(f) === kind(failure)) {
        steps = candidate.slice(0, f.step + 1);
        best = f;
      } else i += chunk;
    }
  }
  return { steps, failure: best };
}

/** A self-contained reproducer: paste into a test. */
export function reproducer(c: FuzzCase, steps: Step[]): string {
  const file = JSON.stringify(path.relative(REPO_ROOT, c.path));
  const lines = [
    `// seed ${c.seed} (${c.sample}, ${c.origin}, macros: ${c.macros})`,
    `const docs = await CudaDocuments.create();`,
    c.initial.length <= 1500
      ? `const initial = ${JSON.stringify(c.initial)};`
      : `const initial = generateCase(${c.seed}).initial; // test/fuzz/fuzz.ts, ${c.initial.length} chars`,
  ];
  if (c.macros === 'headers') {
    lines.push(
      `const tables = new MacroTables(); // tables.tableFor(file, text, options).table again after each edit that editMayChangeMacros`,
      `docs.open('u', initial, ${file}, tables.tableFor(${file}, initial, { includeDirs: [], systemIncludeDirs: [], defines: [], arch: 'sm_90' }).table);`,
    );
  } else lines.push(`docs.open('u', initial);`);
  for (const s of steps) {
    if (s.kind === 'update') lines.push(`docs.update('u', ${JSON.stringify(s.changes)}); // ${s.label}`);
    else lines.push(`docs.replace('u', ${JSON.stringify(s.text)});`);
  }
  lines.push(`assert.deepEqual(docs.analysis('u'), docs.analyzeOnce(docs.text('u')!, 'u'));`);
  return lines.join('\n');
}

export interface RunSummary {
  cases: number;
  steps: number;
  checks: number;
  failures: { seed: number; report: string }[];
  /** Case seeds where tree-sitter's incremental tree of broken code differs from a fresh parse's (not failures). */
  parserDivergences: number[];
  ms: number;
}

/** Runs cases seed..; `onCase` reports progress. Stops at `maxFailures`. */
export async function fuzzDocuments(opts: {
  seed: number;
  cases: number;
  maxSteps?: number;
  maxFailures?: number;
  onCase?: (i: number, summary: RunSummary) => void;
}): Promise<RunSummary> {
  const ck = await createChecker();
  const samples = loadSamples();
  const t0 = Date.now();
  const summary: RunSummary = { cases: 0, steps: 0, checks: 0, failures: [], parserDivergences: [], ms: 0 };
  for (let i = 0; i < opts.cases; i++) {
    const seed = caseSeed(opts.seed, i);
    const c = generateCase(seed, samples, opts.maxSteps);
    summary.cases++;
    summary.steps += c.steps.length;
    summary.checks += c.steps.filter(s => s.check).length;
    const f = runCase(ck, c);
    if (f?.parserDivergence) summary.parserDivergences.push(seed);
    else if (f) {
      const small = shrink(ck, c, f);
      summary.failures.push({
        seed,
        report: `case ${i} seed ${seed} (run --seed ${opts.seed}): step ${small.failure.step} of ${small.steps.length} (${
          small.failure.step >= 0 ? small.steps[small.failure.step].label : 'open'
        }): ${small.failure.message}\nreproducer:\n${reproducer(c, small.steps)}`,
      });
      if (summary.failures.length >= (opts.maxFailures ?? 5)) break;
    }
    opts.onCase?.(i, summary);
  }
  summary.ms = Date.now() - t0;
  return summary;
}
