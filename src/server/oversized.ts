// A document over the source cap (the CLI's too, MAX_SOURCE_BYTES) is not analysed: a parse of
// tens of megabytes would hold the server for seconds on every keystroke. It is said once, as a
// warning and as the file's one diagnostic, never left silent (issue 37).
import { Diagnostic, DiagnosticSeverity } from 'vscode-languageserver/node';
import { MAX_SOURCE_BYTES } from '../schema/ranges';

const MIB = 1024 * 1024;

/** The text's size in bytes when it is over the cap, else null (the byte count is taken only near it). */
export function oversizedBytes(text: { length: number; toString(): string }): number | null {
  // UTF-8 takes at most 3 bytes for a UTF-16 unit: shorter texts cannot be over.
  if (text.length * 3 <= MAX_SOURCE_BYTES) return null;
  const bytes = Buffer.byteLength(text.toString(), 'utf8');
  return bytes > MAX_SOURCE_BYTES ? bytes : null;
}

export function oversizedText(bytes: number): string {
  return (
    `Unroll Lens does not analyse this file: it is ${(bytes / MIB).toFixed(1)} MiB, over the ${MAX_SOURCE_BYTES / MIB} MiB ` +
    'it reads (no CodeLens, hover or diagnostics for it; it is analysed again once it is smaller)'
  );
}

export function oversizedDiagnostic(bytes: number): Diagnostic {
  return {
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    severity: DiagnosticSeverity.Warning,
    source: 'unroll-lens',
    message: oversizedText(bytes),
  };
}
