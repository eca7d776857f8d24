// Each document's latest CodeLens answers, kept by the server for codeLens/resolve: the answer
// itself carries each lens's place and a two-number key, and the client resolves the lenses it
// shows. A 5,000-line file has about 400 lenses; sent whole they were 86 KB on every keystroke's
// CodeLens request, most of its round trip (docs/measurements.md, issue 41).
//
// What is kept is how to build an answer's lenses, not the lenses: kept whole for the two latest
// answers, every keystroke's 400 commands lived long enough to be copied by the server's next
// young-generation GC and promoted (3-10 ms pauses every ~40 edit + CodeLens cycles, against
// 1 ms without). A resolve builds the answer's lenses again, once for a burst of resolves.
import type { CodeLens } from 'vscode-languageserver/node';

/** The `data` of a held lens: its answer's generation and its index there. The client passes it back unread. */
interface HeldLensData {
  held: [number, number];
}

/** Answers kept per document: a resolve for the answer before the latest (in flight when it came) still finds its lens. */
const KEPT_PER_DOCUMENT = 2;

/** Builds an answer's lenses from what it was computed from (the same lenses, in the same order, each time). */
export type LensBuilder = () => CodeLens[];

function sameRange(a: CodeLens['range'], b: CodeLens['range']): boolean {
  return (
    a.start.line === b.start.line &&
    a.start.character === b.start.character &&
    a.end.line === b.end.line &&
    a.end.character === b.end.character
  );
}

export class LensStore {
  private generation = 0;
  private readonly answers = new Map<number, { uri: string; build: LensBuilder }>();
  private readonly byUri = new Map<string, number[]>();
  /** The lenses the last resolve built (one answer's), for the resolves that follow it. */
  private built: { generation: number; lenses: CodeLens[] } | null = null;

  /** The answer to send: each lens `build` gives with a command, sent with its key instead. */
  hold(uri: string, build: LensBuilder): CodeLens[] {
    const generation = ++this.generation;
    this.answers.set(generation, { uri, build });
    const kept = [...(this.byUri.get(uri) ?? []), generation];
    while (kept.length > KEPT_PER_DOCUMENT) this.answers.delete(kept.shift()!);
    this.byUri.set(uri, kept);
    if (this.built && !this.answers.has(this.built.generation)) this.built = null;
    return build().map((l, i) => (l.command ? { range: l.range, data: { held: [generation, i] } satisfies HeldLensData } : l));
  }

  /**
   * The held lens `lens` stands for; `lens` itself when its answer is no longer kept (or builds
   * another lens there now); null when it is not a held lens.
   */
  resolve(lens: CodeLens): CodeLens | null {
    const held = (lens.data as Partial<HeldLensData> | undefined)?.held;
    if (!Array.isArray(held) || held.length !== 2) return null;
    const [generation, index] = held;
    const answer = this.answers.get(generation);
    if (!answer) return lens;
    if (this.built?.generation !== generation) this.built = { generation, lenses: answer.build() };
    const full = this.built.lenses[index];
    return full?.command && sameRange(full.range, lens.range) ? full : lens;
  }

  /** The document closed: its answers go. */
  forget(uri: string): void {
    for (const g of this.byUri.get(uri) ?? []) this.answers.delete(g);
    this.byUri.delete(uri);
    if (this.built && !this.answers.has(this.built.generation)) this.built = null;
  }
}
