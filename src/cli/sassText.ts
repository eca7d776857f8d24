// `unroll-lens sass` as text: the kernel table, a loop's factor table, its instruction-cache lines.
import { VariantIcache, factorLabel, icacheCell, warpsLabel, type FileSassReport, type LoopReport } from '../engine';
import type { ToolTimeouts } from './gpuOptions';

export function pad(s: string, n: number, right = false): string {
  return s.length >= n ? s : right ? ' '.repeat(n - s.length) + s : s + ' '.repeat(n - s.length);
}

export function renderFile(r: FileSassReport): string {
  const lines = [`nvcc ${r.nvcc} · ${r.arch} · counts from ${r.disassembler}${r.cached ? ' (cached)' : ''}`];
  lines.push(
    `${pad('kernel', 60)} ${pad('instr', 7, true)} ${pad('bytes', 8, true)} ${pad('regs', 5, true)} ${pad('spill st/ld', 12, true)} ${pad('stack', 6, true)} ${pad('local ld/st', 12, true)}`,
  );
  for (const k of r.kernels) {
    // Local memory beside the spills: a rolled loop indexing a small array puts it on the stack with no spill.
    const local = k.localLoads === null || k.localLoads === undefined ? '-' : `${k.localLoads}/${k.localStores ?? 0}`;
    lines.push(
      `${pad(k.demangled.length > 60 ? k.demangled.slice(0, 59) + '…' : k.demangled, 60)} ${pad(String(k.instructions), 7, true)} ${pad(String(k.bytes), 8, true)} ${pad(String(k.registers), 5, true)} ${pad(`${k.spillStores}/${k.spillLoads}`, 12, true)} ${pad(`${k.stackBytes}`, 6, true)} ${pad(local, 12, true)}`,
    );
  }
  if (r.limitation && r.loops.length) lines.push(`note: ${r.limitation}`);
  return lines.join('\n') + '\n';
}

/** The function the rows measure: its demangled name, and which of several instantiations it is. */
function loopHeading(r: LoopReport): string {
  const i = r.instantiation;
  if (!i) return r.kernel;
  return i.of > 1
    ? i.trips !== undefined
      ? `${i.demangled} (of ${i.of} functions holding it: the note below says why this one; --kernel picks another)`
      : `${i.demangled} (of ${i.of} functions holding it: the one with most of its code over the variants; --kernel picks another)`
    : i.demangled;
}

/** The remainder nvcc emitted beside the main loop: "loop ×1 + 2 straight", "none", or "" when unknown. */
function remainderLabel(r: { loops: number[]; straight: number } | null | undefined): string {
  if (!r) return '';
  const parts = r.loops.map(c => `loop ×${c}`);
  if (r.straight) parts.push(`${r.straight} straight`);
  return parts.join(' + ') || 'none';
}

/** LDL/STL instructions in the loop's machine code, "1/0"; "-" when not measured. */
function localCell(v: { localLoads?: number | null; localStores?: number | null }): string {
  return v.localLoads === null || v.localLoads === undefined ? '-' : `${v.localLoads}/${v.localStores ?? 0}`;
}

export function renderLoop(r: LoopReport, icache: (VariantIcache | null)[] = []): string {
  const lines = [`\nloop at line ${r.line} in ${loopHeading(r)} (as written: ${factorLabel(r.written)})`];
  const remainderWidth = Math.max(9, ...r.variants.map(v => remainderLabel(v.remainder).length));
  lines.push(
    `${pad('factor', 10)} ${pad('status', 8)} ${pad('kernel instr', 13, true)} ${pad('loop instr', 11, true)} ${pad('nvcc unroll', 12, true)} ${pad('remainder', remainderWidth)} ${pad('regs', 5, true)} ${pad('spills', 7, true)} ${pad('stack', 6, true)} ${pad('local ld/st', 12, true)}  same as`,
  );
  for (const v of r.variants) {
    const eff = v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
    lines.push(
      `${pad(String(v.factor), 10)} ${pad(v.status, 8)} ${pad(String(v.kernelInstructions ?? '-'), 13, true)} ${pad(String(v.loopInstructions ?? '-'), 11, true)} ${pad(v.status === 'ok' ? eff : '-', 12, true)} ${pad(v.status === 'ok' ? remainderLabel(v.remainder) || '-' : '-', remainderWidth)} ${pad(String(v.registers ?? '-'), 5, true)} ${pad(String(v.spillStores ?? '-'), 7, true)} ${pad(String(v.stackBytes ?? '-'), 6, true)} ${pad(localCell(v), 12, true)}  ${v.identicalTo ?? ''}`,
    );
    if (v.failure)
      for (const m of v.failure.messages.filter(x => x.severity === 'error').slice(0, 3))
        lines.push(`    ${v.failure.kind}: ${m.file ? `${m.file}:${m.line ?? ''}: ` : ''}${m.message.split('\n')[0]}`);
  }
  lines.push(...icacheLines(r, icache));
  for (const n of r.notes) lines.push(`note: ${n}`);
  if (r.limitation) lines.push(`note: ${r.limitation}`);
  return lines.join('\n') + '\n';
}

/** One line per variant with a prediction, then where warps per SM and the numbers come from (once). */
export function icacheLines(r: LoopReport, icache: (VariantIcache | null)[], arch = ''): string[] {
  const listed = r.variants.map((v, i) => ({ v, p: icache[i] })).filter(x => x.p || (x.v.status === 'ok' && x.v.icacheNone));
  const shown = listed.filter(x => x.p);
  if (!shown.length) return [];
  const tag = arch ? ` (${arch})` : '';
  const first = shown[0].p!;
  // Registers per variant can change how many blocks fit: a variant at other warps per SM says so.
  // A variant without a prediction says why instead of being left out.
  const lines = listed.map(({ v, p }) =>
    p
      ? `${pad(String(v.factor), 10)} ${icacheCell(p)}${p.warpsPerSm !== first.warpsPerSm ? ` (at ${p.warpsPerSm} warps/SM)` : ''}`
      : `${pad(String(v.factor), 10)} i-cache: no prediction: ${v.icacheNone}`,
  );
  lines.unshift(
    `instruction cache${tag}: predicted slowdown at ${warpsLabel({ warpsPerSm: first.warpsPerSm, range: first.warpsRange })} warps/SM, ${first.warpsSource}`,
  );
  // The basis of the worst prediction (its demand is that variant's); none when everything fits.
  const worst = shown.filter(x => !x.p!.fits).sort((a, b) => b.p!.predictedSlowdown.high - a.p!.predictedSlowdown.high)[0];
  if (worst) lines.push(`basis${tag} (${worst.v.factor}): ${worst.p!.basis}`);
  return lines;
}

/** nvcc's error messages for a file as written that does not compile, indented, for stderr. */
export function compileFailureDetail(r: FileSassReport, timeouts: ToolTimeouts): string {
  const msgs = r.failure?.messages.filter(m => m.severity === 'error') ?? [];
  const kind = r.failure?.kind;
  return msgs.length
    ? msgs.map(m => `  ${m.file ? `${m.file}${m.line ? `:${m.line}` : ''}: ` : ''}${m.message}`).join('\n')
    : kind === 'timeout'
      ? `  nvcc ran longer than ${timeouts.nvccMs / 1000} s (--nvcc-timeout) and was killed`
      : kind === 'cancelled'
        ? '  cancelled'
        : '  (nvcc printed no message)';
}
