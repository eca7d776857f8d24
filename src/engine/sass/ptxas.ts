// Reader for `ptxas -v` (nvcc -Xptxas -v) output, e.g. (CUDA 13.0):
//
//   ptxas warning : Registers are spilled to local memory in function '_Z…', 252 bytes spill stores, …
//   ptxas info    : 0 bytes gmem                                    <- one per ptxas run (per arch)
//   ptxas info    : Compiling entry function '_Z6linearILi0ELi4EEvPKfS1_S1_Pf' for 'sm_90'
//   ptxas info    : Function properties for _Z6linearILi0ELi4EEvPKfS1_S1_Pf
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 36 registers, used 1 barriers, 2048 bytes smem
//   ptxas info    : Compile time = 603.732 ms
//   ptxas info    : Function properties for _Z6helperPKfi            <- a device function: no
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads   "Compiling entry" line
//
// The `Used …` line's parts and their order differ between versions and architectures
// ("Used 10 registers, 360 bytes cmem[0]", "Used 24 registers, used 0 barriers, 480 bytes
// cumulative stack size, 372 bytes cmem[0]", "… 32+0 bytes lmem, 4+16 bytes smem" in very old
// ones), so each comma-separated part is read on its own by its words.
//
// A device function's block names no architecture: it gets the architecture of the entry
// functions compiled in the same ptxas run (the lines between two `bytes gmem` lines).
// Older ptxas versions print a callee's `Function properties` block between an entry's
// `Compiling entry function` line and its own `Function properties` line; the `Used` line that
// follows belongs to the entry, which is handled by matching names.
import type { ResourceField, ResourceUsage } from './model';
import { emptyResourceUsage, sortReported } from './model';
import { forEachLine } from './text';

export interface PtxasFunctionUsage extends ResourceUsage {
  /** "sm_90" from `Compiling entry function '…' for 'sm_90'` (or the run's entries). */
  arch?: string;
  /** From `Compile time = N ms`. */
  compileTimeMs?: number;
  /** True for `__global__` functions (`Compiling entry function`). */
  entry: boolean;
}

interface PtxasFunctionBlock extends PtxasFunctionUsage {
  name: string;
  /** 0-based index of the ptxas run (the `bytes gmem` line) the block belongs to. */
  run: number;
}

export interface PtxasLog {
  /** Every function block in order (a function compiled for two archs appears twice). */
  functions: PtxasFunctionBlock[];
  /** `N bytes gmem` of each ptxas run, in order. */
  gmemBytes: number[];
  /** The text after `ptxas warning :`. */
  warnings: string[];
  /** The text after `ptxas error :` / `ptxas fatal :`. */
  errors: string[];
}

/** Parses a whole ptxas -v log. Never throws; unknown lines are ignored. */
export function parsePtxasLog(stderr: string): PtxasLog {
  const log: PtxasLog = { functions: [], gmemBytes: [], warnings: [], errors: [] };
  if (typeof stderr !== 'string' || stderr.length === 0) return log;
  let run = 0;
  let sawGmem = false;
  let current: PtxasFunctionBlock | null = null;
  let pendingEntry: PtxasFunctionBlock | null = null; // "Compiling entry" seen, properties not yet

  const newBlock = (name: string, entry: boolean, arch?: string): PtxasFunctionBlock => {
    const b: PtxasFunctionBlock = { ...emptyResourceUsage(), name, entry, run };
    if (arch !== undefined) b.arch = arch;
    log.functions.push(b);
    return b;
  };

  forEachLine(stderr, raw => {
    const line = raw.trim();
    if (line.length === 0) return;
    if (line.startsWith('ptxas')) {
      const colon = line.indexOf(':');
      if (colon < 0) return;
      const kind = line.substring(5, colon).trim().toLowerCase();
      const body = line.substring(colon + 1).trim();
      // "ptxas warning : …", also "ptxas /tmp/x.ptx, line 5; warning : …".
      if (kind.endsWith('warning')) {
        log.warnings.push(body);
        return;
      }
      if (kind.endsWith('error') || kind.endsWith('fatal')) {
        log.errors.push(body);
        return;
      }
      if (kind !== 'info') return;

      if (body.endsWith('bytes gmem')) {
        if (sawGmem) run++;
        sawGmem = true;
        const n = leadingNumber(body);
        if (n !== null) log.gmemBytes[run] = n;
        current = null;
        pendingEntry = null;
        return;
      }
      if (body.startsWith('Compiling entry function')) {
        const names = quoted(body);
        if (names.length === 0) return;
        current = newBlock(names[0], true, names[1]);
        pendingEntry = current;
        return;
      }
      if (body.startsWith('Function properties for')) {
        const name = body.substring('Function properties for'.length).trim();
        if (name.length === 0) return;
        if (pendingEntry && pendingEntry.name === name) {
          current = pendingEntry;
          pendingEntry = null;
        } else {
          current = newBlock(name, false);
        }
        return;
      }
      if (/^used\s/i.test(body)) {
        const target = pendingEntry ?? current;
        if (target) applyParts(target, body.substring(4));
        return;
      }
      if (body.startsWith('Compile time')) {
        const eq = body.indexOf('=');
        const target = pendingEntry ?? current;
        if (eq > 0 && target) {
          const v = parseFloat(body.substring(eq + 1));
          if (Number.isFinite(v)) target.compileTimeMs = v;
        }
        pendingEntry = null;
      }
      return;
    }
    // The indented "N bytes stack frame, N bytes spill stores, N bytes spill loads" line.
    if (line.indexOf('bytes stack frame') >= 0 && current) applyParts(current, line);
  });

  for (const b of log.functions) sortReported(b);
  // Device functions: take the architecture of the entries of the same run.
  const runArch = new Map<number, string>();
  for (const b of log.functions) if (b.arch !== undefined && !runArch.has(b.run)) runArch.set(b.run, b.arch);
  for (const b of log.functions) {
    if (b.arch === undefined) {
      const a = runArch.get(b.run);
      if (a !== undefined) b.arch = a;
    }
  }
  return log;
}

/**
 * Resource usage per function name. With `arch`, only blocks compiled for that architecture;
 * otherwise, when a function was compiled for several architectures, the first block wins
 * (use parsePtxasLog for all of them).
 */
export function parsePtxasVerbose(stderr: string, opts: { arch?: string } = {}): Map<string, PtxasFunctionUsage> {
  const out = new Map<string, PtxasFunctionUsage>();
  for (const b of parsePtxasLog(stderr).functions) {
    if (opts.arch !== undefined && b.arch !== opts.arch) continue;
    if (out.has(b.name)) continue;
    const { name: _name, run: _run, ...usage } = b;
    out.set(b.name, usage);
  }
  return out;
}

/** The strings between single quotes, in order. */
function quoted(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    const a = s.indexOf("'", i);
    if (a < 0) break;
    const b = s.indexOf("'", a + 1);
    if (b < 0) break;
    out.push(s.substring(a + 1, b));
    i = b + 1;
  }
  return out;
}

function leadingNumber(s: string): number | null {
  const m = /^(\d+)/.exec(s);
  return m ? Number(m[1]) : null;
}

function mark(u: ResourceUsage, f: ResourceField): void {
  if (!u.reported.includes(f)) u.reported.push(f);
}

/** Applies "36 registers, used 1 barriers, 2048 bytes smem, 4+16 bytes cmem[2]" style parts. */
function applyParts(u: ResourceUsage, text: string): void {
  for (const rawPart of text.split(',')) {
    let part = rawPart.trim();
    if (/^used\s/i.test(part)) part = part.substring(4).trim();
    const m = /^(\d+)(?:\s*\+\s*(\d+))?\s+(.+)$/.exec(part);
    if (!m) continue;
    const value = Number(m[1]) + (m[2] !== undefined ? Number(m[2]) : 0);
    const words = m[3].trim().toLowerCase();
    if (words.startsWith('register')) {
      u.registers = value;
      mark(u, 'registers');
    } else if (words.startsWith('barrier')) {
      u.barriers = value;
      mark(u, 'barriers');
    } else if (words.startsWith('texture')) {
      u.textures = value;
    } else if (words.startsWith('sampler')) {
      u.samplers = value;
    } else if (words.startsWith('surface')) {
      u.surfaces = value;
    } else if (words.startsWith('bytes')) {
      const what = words.substring(5).trim();
      if (what === 'smem') {
        u.sharedBytes = value;
        mark(u, 'sharedBytes');
      } else if (what === 'lmem') {
        u.localBytes = value;
        mark(u, 'localBytes');
      } else if (what.startsWith('cmem')) {
        const bm = /^cmem\s*\[\s*(\d+)\s*\]/.exec(what);
        const bank = bm ? Number(bm[1]) : 0;
        u.constantBanks ??= {};
        u.constantBanks[bank] = value;
        u.constantBytes = Object.values(u.constantBanks).reduce((s, v) => s + v, 0);
        mark(u, 'constantBytes');
      } else if (what.startsWith('cumulative stack')) {
        u.cumulativeStackBytes = value;
      } else if (what.startsWith('stack')) {
        u.stackBytes = value;
        mark(u, 'stackBytes');
      } else if (what.startsWith('spill stores')) {
        u.spillStoreBytes = value;
        mark(u, 'spillStoreBytes');
      } else if (what.startsWith('spill loads')) {
        u.spillLoadBytes = value;
        mark(u, 'spillLoadBytes');
      }
    }
  }
}
