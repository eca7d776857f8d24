// Scanning files and folders for CUDA sources: what `unroll-lens scan` and the workspace use.
import * as fs from 'fs';
import * as path from 'path';
import type { FileAnalysis, Kernel, Loop, ManualUnroll, PragmaMacroUse, UnrollPragma } from './model';
import { CudaDocuments } from './documents';
import { mayHoldDeviceCode } from './libraryMacros';
import { MacroTables, PreprocessOptions } from './macros';

export const CUDA_EXTENSIONS = ['.cu', '.cuh'];

/** Headers a directory scan includes only when they hold device code (C++ headers without it are not ours). */
export const HEADER_EXTENSIONS = ['.h', '.hpp', '.inl'];

/** Whether a header's text holds device code: `__device__`/`__global__` or a library qualifier macro. */
export function headerHoldsDeviceCode(file: string): boolean {
  try {
    return mayHoldDeviceCode(fs.readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
}

export class ScanInputError extends Error {}

/**
 * Expands files and directories (recursively, skipping node_modules and dot-folders) into .cu/.cuh
 * files and the .h/.hpp/.inl headers that hold device code. Files named explicitly are kept as given.
 */
export function collectCudaFiles(inputs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      throw new ScanInputError(`cannot read directory ${dir}: ${(e as Error).message}`);
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(p);
      } else if (e.isFile() && CUDA_EXTENSIONS.includes(path.extname(e.name))) {
        out.push(p);
      } else if (e.isFile() && HEADER_EXTENSIONS.includes(path.extname(e.name)) && headerHoldsDeviceCode(p)) {
        out.push(p);
      }
    }
  };
  for (const input of inputs) {
    let st: fs.Stats;
    try {
      st = fs.statSync(input);
    } catch {
      throw new ScanInputError(`no such file or directory: ${input}`);
    }
    if (st.isDirectory()) walk(input);
    else {
      try {
        fs.accessSync(input, fs.constants.R_OK);
      } catch {
        throw new ScanInputError(`cannot read file: ${input}`);
      }
      out.push(input);
    }
  }
  return out;
}

/** Where a scan reads each file's macros from (its headers); without it, the built-in table alone. */
export interface ScanMacros {
  tables: MacroTables;
  optionsFor(file: string): PreprocessOptions;
}

export async function scanFiles(files: string[], docs?: CudaDocuments, macros?: ScanMacros): Promise<FileAnalysis[]> {
  const d = docs ?? (await CudaDocuments.create());
  return files.map(f => {
    let text: string;
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch (e) {
      throw new ScanInputError(`cannot read file: ${f} (${(e as Error).message})`);
    }
    return d.analyzeOnce(text, f, macros?.tables.tableFor(f, text, macros.optionsFor(f)).table);
  });
}

// ---------------------------------------------------------------------------------------------
// The `scan --json` contract (docs/cli.md). Projected explicitly so internal fields never leak.

interface PragmaJson {
  kind: UnrollPragma['kind'];
  factor: number | null;
  text: string;
  line: number;
  /** Only for a library macro: `{name, written, library, expandsTo}` (built-in table). */
  macro?: PragmaMacroUse;
  /** The preprocessor branch the attachment holds in. */
  condition?: string;
}

export interface ScanJson {
  files: {
    path: string;
    kernels: {
      name: string;
      qualifier: Kernel['qualifier'];
      line: number;
      loops: {
        line: number;
        kind: Loop['kind'];
        depth: number;
        pragma: null | PragmaJson;
        /** Pragmas of the other branches of a conditional before the loop. */
        alternativePragmas?: PragmaJson[];
        /** An unknown macro written right before the loop (its pragma is unknown). */
        unknownMacro?: string;
        tripCount: Loop['tripCount'];
      }[];
      manualUnrolls: Pick<ManualUnroll, 'line' | 'endLine' | 'pattern' | 'factor' | 'vectorType'>[];
    }[];
  }[];
}

function pragmaJson(p: UnrollPragma): PragmaJson {
  return {
    kind: p.kind,
    factor: p.factor,
    text: p.text,
    line: p.line,
    ...(p.macro ? { macro: { ...p.macro } } : {}),
    ...(p.condition ? { condition: p.condition } : {}),
  };
}

export function toScanJson(files: FileAnalysis[]): ScanJson {
  return {
    files: files.map(f => ({
      path: f.path,
      kernels: f.kernels.map(k => ({
        name: k.name,
        qualifier: k.qualifier,
        line: k.line,
        loops: k.loops.map(l => ({
          line: l.line,
          kind: l.kind,
          depth: l.depth,
          pragma: l.pragma ? pragmaJson(l.pragma) : null,
          ...(l.alternativePragmas ? { alternativePragmas: l.alternativePragmas.map(pragmaJson) } : {}),
          ...(l.unknownMacro ? { unknownMacro: l.unknownMacro } : {}),
          tripCount: l.tripCount,
        })),
        manualUnrolls: k.manualUnrolls.map(m => ({
          line: m.line,
          endLine: m.endLine,
          pattern: m.pattern,
          factor: m.factor,
          ...(m.vectorType ? { vectorType: m.vectorType } : {}),
        })),
      })),
    })),
  };
}
