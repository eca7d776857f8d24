// SASS facts as the editor shows them: the CodeLens title above a loop and the hover table of
// a loop's unroll variants (cheapest and most bloated marked).
import type { Kernel, Loop } from '../parse/model';
import type { FileSassReport, LoopReport, LoopVariant } from '../variants/inspect';
import type { BenchReport } from '../profile/bench';
import { factorLabel } from '../variants/rewrite';

/** What the server knows for a document's current text (see src/server/sass.ts). */
export interface SassFacts {
  file: FileSassReport | null;
  loops: Map<number, LoopReport>;
  benches?: Map<number, BenchReport>;
}

function kernelOf(file: FileSassReport, kernelName: string | null) {
  return kernelName ? file.kernels.find(k => k.name === kernelName) : undefined;
}

/** e.g. "SASS 148 instr · 28 regs · nvcc unrolled ×4"; a call to action before any build. */
export function loopSassLensTitle(sass: SassFacts | null, _kernel: Kernel, loop: Loop): string {
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
  if (m.effectiveUnroll !== null)
    parts.push(m.fullyUnrolled ? `nvcc unrolled fully (×${m.effectiveUnroll})` : `nvcc unrolled ×${m.effectiveUnroll}`);
  return parts.join(' · ');
}

function cell(v: number | null | undefined): string {
  return v === null || v === undefined ? '–' : String(v);
}

function variantRow(v: LoopVariant, best: LoopVariant | null, worst: LoopVariant | null): string {
  const mark = (s: string) => (v === best ? `**${s}**` : v === worst ? `*${s}*` : s);
  const eff = v.status !== 'ok' ? v.status : v.effectiveUnroll === null ? '?' : `×${v.effectiveUnroll}${v.fullyUnrolled ? ' (full)' : ''}`;
  const bytes = v.kernelBytes === null ? '–' : `${(v.kernelBytes / 1024).toFixed(1)} KiB`;
  const spills = v.spillStores === null ? '–' : v.spillStores ? `${v.spillStores} B` : '0';
  const same = v.identicalTo !== null ? `= ${v.identicalTo}` : '';
  return `| ${mark(String(v.factor))} | ${mark(cell(v.kernelInstructions))} | ${bytes} | ${cell(v.loopInstructions)} | ${cell(v.registers)} | ${spills} | ${eff} | ${same} |`;
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
    if (f.limitation && m.loopInstructions === null && !sass.loops.get(loop.line)?.limitation) parts.push(`- ${f.limitation}`);
  } else if (f && f.status !== 'ok') {
    parts.push(`**SASS**: the file does not compile (${f.failure?.kind ?? f.status}); see the Problems panel.`);
  }
  const r = sass.loops.get(loop.line);
  if (r) {
    const ok = r.variants.filter(v => v.status === 'ok' && v.kernelInstructions !== null);
    const best = ok.length ? ok.reduce((a, b) => (b.kernelInstructions! < a.kernelInstructions! ? b : a)) : null;
    const worst = ok.length ? ok.reduce((a, b) => (b.kernelInstructions! > a.kernelInstructions! ? b : a)) : null;
    parts.push(
      `**Unroll variants** of this loop (kernel \`${r.variants.find(v => v.kernel)?.kernel ?? r.kernel}\`, as written: ${factorLabel(r.written)}); **bold** = fewest instructions, *italic* = most:`,
    );
    parts.push(
      [
        '| factor | kernel SASS | bytes | loop SASS | regs | spills | nvcc unroll | same code as |',
        '|---|---|---|---|---|---|---|---|',
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
