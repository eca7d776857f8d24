// Hashes of machine code: equal hashes mean the same code, so variants that nvcc compiled to
// identical kernels are shown as such and the bench measures them once.
import * as crypto from 'crypto';
import * as fs from 'fs';
import type { SassFunction } from '../sass';
import { readCubin } from '../sass';

/** The kernel's instructions as nvdisasm listed them, branch labels renumbered per function. */
export function codeHash(fn: SassFunction): string {
  const h = crypto.createHash('sha1');
  // nvdisasm numbers branch labels (.L_x_12) across the whole cubin: renumbered per function in
  // order of use, so the same code in two functions (template instantiations) hashes the same.
  const labels = new Map<string, string>();
  const label = (l: string) => labels.get(l) ?? (labels.set(l, `.L${labels.size}`), labels.get(l)!);
  for (const ins of fn.instructions) {
    const operands = ins.operands.replace(/\.L_x_\d+/g, label);
    h.update(`${ins.predicate ?? ''} ${ins.opcode}.${ins.modifiers.join('.')} ${operands}\n`);
  }
  return h.digest('hex');
}

/** Every code section of the cubin, by kernel name: the same hash means the same machine code throughout. */
export function machineCodeHash(cubin: string): string | null {
  try {
    const buf = fs.readFileSync(cubin);
    const h = crypto.createHash('sha256');
    const sections = [...readCubin(buf).textSections].sort((a, b) => (a.kernel < b.kernel ? -1 : a.kernel > b.kernel ? 1 : 0));
    for (const s of sections) h.update(`${s.kernel}\0`).update(buf.subarray(s.offset, s.offset + s.size));
    return sections.length ? h.digest('hex') : null;
  } catch {
    return null;
  }
}

/** Without a disassembler: the kernel's machine code bytes from the cubin. */
export function hashFile(outputPath: string, kernel: string): string | null {
  const buf = fs.readFileSync(outputPath);
  const s = readCubin(buf).textSections.find(x => x.kernel === kernel);
  return s
    ? crypto
        .createHash('sha1')
        .update(buf.subarray(s.offset, s.offset + s.size))
        .digest('hex')
    : null;
}
