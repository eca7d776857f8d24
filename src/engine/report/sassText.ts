// SASS facts as the editor shows them: the CodeLens title above a loop and the hover table of
// a loop's unroll variants (cheapest and most bloated marked).
import type { Kernel, Loop } from '../parse/model';
import type { FileSassReport, LoopInstantiation, LoopReport, LoopVariant } from '../variants/reports';
import { instantiationLabel } from '../../schema/kernelNames';
import type { SweepResult } from '../../schema/types';
import { factorLabel } from '../variants/factors';

/** What the server knows for a document's current text (see src/server/sass.ts). */
export interface SassFacts {
  file: FileSassReport | null;
  loops: Map<number, LoopReport>;
  /** Loop line → extra architecture (unrollLens.extraArchs) → its variants, in the setting's order. */
  extraArchLoops?: Map<number, Map<string, LoopReport>>;
  benches?: Map<number, SweepResult>;
}

function kernelOf(file: FileSassReport, kernelName: string | null) {
  return kernelName ? file.kernels.find(k => k.name === kernelName) : undefined;
}

/** e.g. "SASS 148 instr · 28 regs · nvcc unrolled ×4"; a call to action before any build. */
export function loopSassLensTitle(sass: SassFacts | null, _kernel: Pick<Kernel, 'name'>, loop: Pick<Loop, 'line'>): string {
  const f = sass?.file;
  if (!f) return 'SASS: build variants';
  if (f.status !== 'ok') return `SASS: file does not compile (${f.failure?.kind ?? f.status})`;
  const m = f.loops.find(l => l.line === loop.line);
  if (!m || m.loopInstructions === null)
    return f.limitation && m ? 'SASS: build variants (loop counts need nvdisasm: see hover)' : 'SASS: build variants';
  const k = kernelOf(f, m.kernel);
  const parts = [`SASS ${m.loopInstructions} instr`];
  if (k) parts.push(`${k.registers} regs`);
  if (k && (k.spillStores || k.spillLoads)) parts.push(`spills ${k.spillStores}B`);
  if (k?.stackBytes) parts.push(`stack ${k.stackBytes}B`);
  if (m.effectiveUnroll !== null)
    parts.push(m.fullyUnrolled ? `nvcc unrolled fully (×${m.effectiveUnroll})` : `nvcc unrolled ×${m.effectiveUnroll}`);
  return parts.join(' · ');
}

function cell(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : String(v);
}

/**
 * The stack frame and the loop's local loads/stores: "16 B · 0 LDL / 1 STL". A rolled loop that
 * indexes a small array moves it to the stack without any spill, so this stands beside spills.
 */
function localMemory(v: LoopVariant): string {
  if (v.stackBytes === null || v.stackBytes === undefined) return '–';
  const traffic = v.localLoads === null || v.localLoads === undefined ? '' : ` · ${v.localLoads} LDL / ${v.localStores ?? 0} STL`;
  return v.stackBytes || v.localLoads || v.localStores ? `${v.stackBytes} B${traffic}` : '0';
}

function variantRow(v: LoopVariant, best: LoopVariant | null, worst: LoopVariant | null): string {
  const mark = (s: string) => (v === best ? `**${s}**` : v === worst ? `*${s}*` : s);
  const eff = v.status !== 'ok' ? v.status : v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
  const bytes = v.kernelBytes === null ? '–' : `${(v.kernelBytes / 1024).toFixed(1)} KiB`;
  const spills = v.spillStores === null ? '–' : v.spillStores ? `${v.spillStores} B` : '0';
  const same = v.identicalTo !== null ? `= ${v.identicalTo}` : '';
  return `| ${mark(String(v.factor))} | ${mark(cell(v.kernelInstructions))} | ${bytes} | ${cell(v.loopInstructions)} | ${cell(v.registers)} | ${spills} | ${localMemory(v)} | ${eff} | ${same} |`;
}

/** Fewest and most kernel instructions among a report's ok variants (the hover marks them). */
function extremes(r: LoopReport): { best: LoopVariant | null; worst: LoopVariant | null } {
  const ok = r.variants.filter(v => v.status === 'ok' && v.kernelInstructions !== null);
  return {
    best: ok.length ? ok.reduce((a, b) => (b.kernelInstructions! < a.kernelInstructions! ? b : a)) : null,
    worst: ok.length ? ok.reduce((a, b) => (b.kernelInstructions! > a.kernelInstructions! ? b : a)) : null,
  };
}

/**
 * One table for several architectures: a row per factor (in the first report's order, then any
 * factor only another one has), per architecture its kernel SASS (marked), loop SASS, registers
 * (with spills) and nvcc's unroll. A factor an architecture did not build shows dashes.
 */
export function multiArchVariantTable(reports: LoopReport[]): string {
  const factors: string[] = [];
  for (const r of reports) for (const v of r.variants) if (!factors.includes(String(v.factor))) factors.push(String(v.factor));
  const marks = reports.map(extremes);
  const header = [
    'factor',
    ...reports.flatMap(r => [`${r.arch} kernel SASS`, `${r.arch} loop SASS`, `${r.arch} regs`, `${r.arch} nvcc unroll`]),
  ];
  const rows = factors.map(f => {
    const cells = reports.flatMap((r, i) => {
      const v = r.variants.find(x => String(x.factor) === f);
      if (!v) return ['–', '–', '–', '–'];
      const { best, worst } = marks[i];
      const mark = (t: string) => (v === best ? `**${t}**` : v === worst ? `*${t}*` : t);
      const eff =
        v.status !== 'ok' ? v.status : v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
      const regs = v.registers === null ? '–' : v.spillStores ? `${v.registers} (spills ${v.spillStores} B)` : String(v.registers);
      return [mark(cell(v.kernelInstructions)), cell(v.loopInstructions), regs, eff];
    });
    return `| ${f} | ${cells.join(' | ')} |`;
  });
  return [`| ${header.join(' | ')} |`, `|${'---|'.repeat(header.length)}`, ...rows].join('\n');
}

/**
 * Which function the variants table measured: `in \`chain<64>\``, and when several
 * instantiations hold the loop, that every row measures that one and why.
 */
function measuredIn(r: LoopReport): string {
  const i = r.instantiation;
  if (!i) {
    const k = r.variants.find(v => v.kernel)?.kernel;
    return `kernel \`${k ? instantiationLabel(k) : r.kernel}\``;
  }
  const name = `\`${instantiationLabel(i.demangled)}\``;
  return i.of > 1
    ? `every row in ${name}: of the ${i.of} functions holding this loop, the one with most of its code over the variants`
    : `in ${name}`;
}

/** One line per instantiation of the file as written holding the loop: its own loop count and unroll. */
function instantiationsMarkdown(list: LoopInstantiation[], shown: string | null): string {
  const unroll = (x: LoopInstantiation) =>
    x.effectiveUnroll === null
      ? ''
      : x.fullyUnrolled
        ? `; unrolled completely (×${x.effectiveUnroll})`
        : `; unrolled ×${x.effectiveUnroll}`;
  return [
    `This loop lives in ${list.length} instantiations (file as written; the line above measures the one with most of its code):`,
    ...list.map(
      x =>
        `- \`${instantiationLabel(x.demangled)}\`: ${x.loopInstructions} instructions in this loop${unroll(x)}${x.name === shown ? ' ← above' : ''}`,
    ),
  ].join('\n');
}

/** Hover section: the file-as-written facts and, when built, the table of variants. */
export function loopSassMarkdown(sass: SassFacts | null, _kernel: Kernel, loop: Loop): string | null {
  if (!sass) return null;
  const parts: string[] = [];
  const f = sass.file;
  const m = f?.loops.find(l => l.line === loop.line);
  if (f && f.status === 'ok' && m) {
    const k = kernelOf(f, m.kernel);
    parts.push(
      `**SASS as written** (${f.arch}, nvcc ${f.nvcc}): ${k ? `\`${k.demangled}\` ${k.instructions} instructions, ${k.registers} registers; ` : ''}` +
        `${cell(m.loopInstructions)} in this loop` +
        (m.effectiveUnroll !== null ? `; nvcc unrolled it ${m.fullyUnrolled ? 'completely' : `×${m.effectiveUnroll}`}` : ''),
    );
    if (m.instantiations && m.instantiations.length > 1) parts.push(instantiationsMarkdown(m.instantiations, m.kernel));
    if (f.limitation && m.loopInstructions === null && !sass.loops.get(loop.line)?.limitation) parts.push(`- ${f.limitation}`);
  } else if (f && f.status !== 'ok') {
    parts.push(`**SASS**: the file does not compile (${f.failure?.kind ?? f.status}); see the Problems panel.`);
  }
  const r = sass.loops.get(loop.line);
  const extra = [...(sass.extraArchLoops?.get(loop.line)?.values() ?? [])].filter(x => !r || x.arch !== r.arch);
  if (r && extra.length) {
    const reports = [r, ...extra];
    parts.push(
      `**Unroll variants** of this loop on ${reports.map(x => x.arch).join(', ')} (${measuredIn(r)}, as written: ${factorLabel(r.written)}); per architecture **bold** = fewest kernel instructions, *italic* = most:`,
    );
    parts.push(multiArchVariantTable(reports));
    for (const x of reports) {
      for (const n of x.notes) parts.push(`- ${x.arch}: ${n}`);
      if (x.limitation) parts.push(`- ${x.arch}: ${x.limitation}`);
    }
  } else if (r) {
    const { best, worst } = extremes(r);
    parts.push(
      `**Unroll variants** of this loop (${measuredIn(r)}, as written: ${factorLabel(r.written)}); **bold** = fewest instructions, *italic* = most:`,
    );
    parts.push(
      [
        '| factor | kernel SASS | bytes | loop SASS | regs | spills | stack · loop LDL/STL | nvcc unroll | same code as |',
        '|---|---|---|---|---|---|---|---|---|',
        ...r.variants.map(v => variantRow(v, best, worst)),
      ].join('\n'),
    );
    for (const n of r.notes) parts.push(`- ${n}`);
    if (r.limitation) parts.push(`- ${r.limitation}`);
  } else {
    parts.push('_Unroll variants not built yet: click the **SASS** CodeLens above the loop._');
  }
  return parts.join('\n\n');
}
