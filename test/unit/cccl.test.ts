// Corpus test over the CCCL headers shipped with the CUDA toolkit (CUB, Thrust, libcu++): every
// `_CCCL_PRAGMA_UNROLL*` / `_CCCL_PRAGMA_NOUNROLL` invocation that a plain text scan finds right
// before a loop must be attached to that loop by `scan`, and device functions written with the
// `_CCCL_*` qualifier macros must be found. Skipped, with the reason, where no toolkit is installed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { collectCudaFiles, scanFiles } from '../../src/engine/parse/scan';
import { MacroTables, toolkitIncludeDirs } from '../../src/engine/parse/macros';
import { findCcclInclude } from './helpers';

const PRAGMA_RE = /\b(_CCCL_PRAGMA_UNROLL_FULL\s*\(\s*\)|_CCCL_PRAGMA_NOUNROLL\s*\(\s*\)|_CCCL_PRAGMA_UNROLL\s*\([^()]*\))/;

/** Independent of the analysis: lines holding a CCCL unroll macro whose next code line starts a loop. */
export function pragmasBeforeLoops(text: string): { line: number; loopLine: number; written: string }[] {
  const lines = text.split('\n');
  const out: { line: number; loopLine: number; written: string }[] = [];
  let inComment = false;
  const code = (l: string): string => {
    // Strip comments (block comments may span lines).
    let s = '';
    let i = 0;
    while (i < l.length) {
      if (inComment) {
        const end = l.indexOf('*/', i);
        if (end === -1) return s;
        inComment = false;
        i = end + 2;
      } else if (l.startsWith('//', i)) return s;
      else if (l.startsWith('/*', i)) {
        inComment = true;
        i += 2;
      } else s += l[i++];
    }
    return s;
  };
  const codeLines = lines.map(code);
  for (let i = 0; i < codeLines.length; i++) {
    const m = PRAGMA_RE.exec(codeLines[i]);
    if (!m || /^\s*#/.test(codeLines[i])) continue;
    const rest = codeLines[i].slice(m.index + m[0].length).trim();
    let j = i;
    let next = rest;
    while (next === '' && j + 1 < codeLines.length) next = codeLines[++j].trim();
    if (/^(for|while|do)\b/.test(next)) out.push({ line: i + 1, loopLine: j + 1, written: m[0].replace(/\s+/g, '') });
  }
  return out;
}

const CCCL = findCcclInclude();

/**
 * Known misses, by file (where tree-sitter's error recovery loses a class body, so its loops are
 * not inside any function it sees). Listed so that a regression (or a fix) shows up. None now:
 * block_run_length_decode.cuh's `_CCCL_DEVICE _CCCL_FORCEINLINE BlockRunLengthDecode(…) :
 * member(…)` constructors broke its class body until qualifier macros were masked as attributes
 * (macros/mask.ts).
 */
const KNOWN_MISSES = new Map<string, number>();

describe(
  'CCCL headers of the CUDA toolkit',
  { skip: CCCL ? false : 'no CUDA toolkit with include/cccl found (nvcc, CUDA_HOME, /usr/local/cuda*)' },
  () => {
    test('every CCCL unroll macro before a loop is attached to that loop; device functions are found', async () => {
      const files = collectCudaFiles([CCCL!]);
      const t0 = performance.now();
      // As `unroll-lens scan` reads them: each file's macros from the toolkit's own headers.
      const systemIncludeDirs = toolkitIncludeDirs(null);
      const tables = new MacroTables();
      const analyses = await scanFiles(files, undefined, {
        tables,
        optionsFor: () => ({ includeDirs: [], systemIncludeDirs, defines: [], arch: 'sm_90' }),
      });
      const ms = performance.now() - t0;
      let expected = 0;
      const missing: string[] = [];
      let functions = 0;
      let loops = 0;
      let pragmas = 0;
      for (const a of analyses) {
        functions += a.kernels.length;
        for (const k of a.kernels) for (const l of k.loops) if (l.pragma) pragmas++;
        loops += a.kernels.reduce((n, k) => n + k.loops.length, 0);
        const want = pragmasBeforeLoops(fs.readFileSync(a.path, 'utf8'));
        expected += want.length;
        const byLine = new Map(a.kernels.flatMap(k => k.loops).map(l => [l.line, l]));
        for (const w of want) {
          const loop = byLine.get(w.loopLine);
          const ok =
            loop?.pragma?.form === 'macro' &&
            loop.pragma.macro?.written.replace(/\s+/g, '') === w.written &&
            loop.pragma.line === w.line &&
            loop.pragma.macro.origin.kind === 'header'; // read from compiler.h, not the built-in table
          if (!ok)
            missing.push(
              `${path.relative(CCCL!, a.path)}:${w.line} ${w.written} → loop at ${w.loopLine}: ${loop ? JSON.stringify(loop.pragma) : 'no loop found'}`,
            );
        }
      }
      console.log(
        `# CCCL ${CCCL}: ${files.length} files, ${functions} device functions, ${loops} loops, ${pragmas} pragmas; ${expected} macro pragmas before loops (text scan); ${ms.toFixed(0)} ms`,
      );
      assert.ok(expected > 100, `text scan found only ${expected} macro pragmas before loops`);
      const unexpected = missing.filter(m => !KNOWN_MISSES.has(m.split(':')[0]));
      assert.deepEqual(unexpected.slice(0, 20), [], `${unexpected.length} of ${expected} not attached`);
      for (const [file, n] of KNOWN_MISSES)
        assert.equal(missing.filter(m => m.startsWith(file + ':')).length, n, `known misses in ${file} changed: ${missing.join('\n')}`);
      assert.ok(functions > 1000, `only ${functions} device functions`);
      const names = new Set(analyses.flatMap(a => a.kernels.map(k => k.name)));
      for (const n of ['LoadDirectBlocked', 'StoreDirectBlocked']) assert.ok(names.has(n), `device function ${n} not found`);
    });
  },
);
