// The SASS listing as a document: one text for the editor's virtual document and for
// `unroll-lens sass --listing`, with the maps the editor navigates by. The normalised form is for
// comparing two builds: addresses dropped, labels and registers renumbered in order of use and
// reuse flags removed, so a diff shows what nvcc changed rather than what the allocator renamed.
import * as path from 'path';
import type { SassListingData, SassListingResult } from '../../schema/sassListing';

export interface RenderOptions {
  /** Normalised for comparing (see the file header). */
  normalise?: boolean;
  /** The source file's text, for the line shown in each group header. */
  sourceText?: string | null;
}

const hex4 = (n: number) => '0x' + n.toString(16).padStart(4, '0');

/** Registers renumbered in order of first use, per register file; labels in order of definition. */
export class Normaliser {
  private readonly regs = new Map<string, Map<string, string>>();
  private readonly labels = new Map<string, string>();

  label(name: string): string {
    let n = this.labels.get(name);
    if (n === undefined) {
      n = `.L${this.labels.size}`;
      this.labels.set(name, n);
    }
    return n;
  }

  instruction(text: string): string {
    return text
      .replace(/\.reuse\b/g, '')
      .replace(/\.L_x_\d+/g, l => this.label(l))
      .replace(/\b(UR|R|UP|P|B)(\d+)\b/g, (whole, file: string) => {
        let m = this.regs.get(file);
        if (!m) this.regs.set(file, (m = new Map()));
        let n = m.get(whole);
        if (n === undefined) {
          n = `${file.toLowerCase()}${m.size}`;
          m.set(whole, n);
        }
        return n;
      });
  }
}

function opcodeSummary(opcodes: Record<string, number>): string {
  return Object.entries(opcodes)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([op, n]) => `${op} ${n}`)
    .join(' · ');
}

function lineRange(lines: number[]): string {
  if (!lines.length) return '';
  const a = lines[0];
  const b = lines[lines.length - 1];
  return a === b ? `line ${a}` : `lines ${a}–${b}`;
}

function pieceLabel(p: SassListingData['loops'][number]): string {
  const u = p.unroll === null ? '×?' : `×${p.unroll}`;
  return `${p.kind === 'loop' ? 'loop' : p.perPass ? 'once per pass of the enclosing loop' : 'once'} ${u} ${p.role === 'main' ? 'main' : 'remainder'}`;
}

export function renderListing(l: SassListingData, o: RenderOptions = {}): Omit<SassListingResult, 'listing'> {
  const norm = o.normalise ? new Normaliser() : null;
  const src = o.sourceText ? o.sourceText.split(/\r?\n/) : null;
  const out: string[] = [];
  const sourceLines: (number | null)[] = [];
  const loopBodyLines: number[] = [];
  const machineLoops: SassListingResult['machineLoops'] = [];
  const push = (text: string, sourceLine: number | null = null, body = false) => {
    if (body) loopBodyLines.push(out.length);
    out.push(text);
    sourceLines.push(sourceLine);
  };
  const base = path.basename(l.file);
  push(
    `// Unroll Lens · SASS of ${l.demangled} · ${base}${l.loopLine !== null ? ` line ${l.loopLine}` : ''} · factor ${l.factor} · ${l.arch}${l.nvcc ? ` · nvcc ${l.nvcc}` : ''}`,
  );
  push(
    `// ${l.instructions.toLocaleString('en-US')} instructions · ${l.bytes.toLocaleString('en-US')} bytes${l.registers !== null ? ` · ${l.registers} registers` : ''}${norm ? ' · normalised: no addresses, registers and labels renumbered in order of use' : ''}`,
  );
  if (!norm && l.stalls) push(`// ⏱ ${l.stalls.samples.toLocaleString('en-US')} warp-stall samples from ${l.stalls.source}`);
  if (!norm && l.stallsNote) push(`// ⏱ ${l.stallsNote}`);
  if (l.loopLines) {
    const span = l.loopLines.from === l.loopLines.to ? `line ${l.loopLines.from}` : `lines ${l.loopLines.from}–${l.loopLines.to}`;
    if (!l.loops.length)
      push(
        `// the loop at ${span}: no arithmetic or memory instructions on its own lines (a loop that only holds nested loops has its work there)`,
      );
    else push(`// machine code of the loop at ${span}:`);
    for (const p of l.loops) {
      const where = norm ? '' : `  ${hex4(p.startOffset)}–${hex4(p.endOffset)}`;
      push(`//   ${p.name}  ${pieceLabel(p).padEnd(21)}${where}  ${p.instructions} instructions · ${lineRange(p.sourceLines)}`);
    }
  }
  push('');

  // Labels defined in the function, by address (the function's own symbols excluded).
  const labelsAt = new Map<number, string[]>();
  const starts = new Map(l.loops.map(p => [p.startOffset, p]));
  const ends = new Map(l.loops.map(p => [p.endOffset, p]));
  const open = new Map<string, number>();
  for (const [label, address] of Object.entries(l.labels)) {
    if (!label.startsWith('.L')) continue;
    const list = labelsAt.get(address) ?? [];
    list.push(label);
    labelsAt.set(address, list);
  }

  for (const group of l.lines) {
    let headerDone = false;
    const header = () => {
      if (headerDone) return;
      headerDone = true;
      const where = group.sourceLine !== null ? `${group.file ? path.basename(group.file) : base}:${group.sourceLine}` : '(no line info)';
      const text =
        src && group.sourceLine !== null && (!group.file || path.basename(group.file) === base)
          ? (src[group.sourceLine - 1] ?? '').trim()
          : '';
      push(`// ── ${where}${text ? `  ${text}` : ''}   [${opcodeSummary(group.opcodes)}]`, group.sourceLine, group.inLoop);
    };
    for (const ins of group.instructions) {
      const piece = starts.get(ins.offset);
      if (piece) {
        open.set(piece.name, out.length);
        push(`// ┌ ${piece.name}: ${pieceLabel(piece)} · ${lineRange(piece.sourceLines)}`);
        headerDone = false;
      }
      for (const label of labelsAt.get(ins.offset) ?? []) {
        push(`${norm ? norm.label(label) : label}:`);
        headerDone = false;
      }
      header();
      const text = norm ? norm.instruction(ins.text) : ins.text;
      const addr = norm ? '' : `/*${ins.offset.toString(16).padStart(4, '0')}*/  `;
      let line = `        ${addr}${text} ;`;
      if (!norm && ins.stall) {
        const top = ins.stall.top.map(t => `${t.reason} ${Math.round(t.share * 100)}%`).join(', ');
        line = `${line.padEnd(72)}  // ⏱ ${(ins.stall.share * 100).toFixed(1)}%${top ? ` · ${top}` : ''}`;
      }
      push(line, group.sourceLine, group.inLoop);
      const ending = ends.get(ins.offset);
      if (ending) {
        push(`// └ ${ending.name}${ending.kind === 'loop' ? ': back to the top of ' + ending.name : ''}`);
        machineLoops.push({ name: ending.name, firstLine: open.get(ending.name) ?? out.length - 1, lastLine: out.length - 1 });
        headerDone = false;
      }
    }
  }
  machineLoops.sort((a, b) => a.firstLine - b.firstLine);
  return { text: out.join('\n') + '\n', sourceLines, loopBodyLines, machineLoops };
}
