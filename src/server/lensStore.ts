// The commands of each document's latest CodeLens answers, kept by the server and handed out by
// codeLens/resolve: the answer itself carries each lens's place and a two-number key, and the
// client resolves the lenses it shows. A 5,000-line file has about 400 lenses; sent whole they
// were 86 KB on every keystroke's CodeLens request, most of its round trip (docs/measurements.md,
// issue 41).
import type { CodeLens } from 'vscode-languageserver/node';

/** The `data` of a held lens: its answer's generation and its index there. The client passes it back unread. */
interface HeldLensData {
  held: [number, number];
}

/** Answers kept per document: a resolve for the answer before the latest (in flight when it came) still finds its lens. */
const KEPT_PER_DOCUMENT = 2;

export class LensStore {
  private generation = 0;
  private readonly answers = new Map<number, { uri: string; lenses: CodeLens[] }>();
  private readonly byUri = new Map<string, number[]>();

  /** The answer to send for `lenses`: each with a command kept here, sent with its key instead. */
  hold(uri: string, lenses: CodeLens[]): CodeLens[] {
    const generation = ++this.generation;
    this.answers.set(generation, { uri, lenses });
    const kept = [...(this.byUri.get(uri) ?? []), generation];
    while (kept.length > KEPT_PER_DOCUMENT) this.answers.delete(kept.shift()!);
    this.byUri.set(uri, kept);
    return lenses.map((l, i) => (l.command ? { range: l.range, data: { held: [generation, i] } satisfies HeldLensData } : l));
  }

  /** The held lens `lens` stands for; `lens` itself when its answer is no longer kept; null when it is not a held lens. */
  resolve(lens: CodeLens): CodeLens | null {
    const held = (lens.data as Partial<HeldLensData> | undefined)?.held;
    if (!Array.isArray(held) || held.length !== 2) return null;
    return this.answers.get(held[0])?.lenses[held[1]] ?? lens;
  }

  /** The document closed: its answers go. */
  forget(uri: string): void {
    for (const g of this.byUri.get(uri) ?? []) this.answers.delete(g);
    this.byUri.delete(uri);
  }
}
