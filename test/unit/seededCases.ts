// Seeded random cases for property tests (fast-check is not installed in this checkout, and no
// dependency may be added here): a small PRNG, the generators the property tests need, and a
// runner that names the seed and case of a failure so it can be replayed with UNROLL_LENS_SEED.
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  /** mulberry32: uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  bool(p = 0.5): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }
  bytes(maxLength: number): Buffer {
    const b = Buffer.alloc(this.int(0, maxLength));
    for (let i = 0; i < b.length; i++) b[i] = this.int(0, 255);
    return b;
  }
  /** Printable ASCII. */
  ascii(maxLength: number): string {
    let s = '';
    for (let n = this.int(0, maxLength); n > 0; n--) s += String.fromCharCode(this.int(0x20, 0x7e));
    return s;
  }
  array<T>(maxLength: number, item: () => T, minLength = 0): T[] {
    return Array.from({ length: this.int(minLength, maxLength) }, item);
  }
}

/** Runs `property` on `runs` cases, each with its own seeded Rng; a failure names the seed that replays it. */
export function forAllCases(
  runs: number,
  property: (rng: Rng, index: number) => void,
  baseSeed = Number(process.env.UNROLL_LENS_SEED ?? 0x5eed),
): void {
  for (let i = 0; i < runs; i++) {
    const seed = (baseSeed + i * 0x9e3779b1) >>> 0;
    try {
      property(new Rng(seed), i);
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      err.message = `case ${i} (seed ${seed}): ${err.message}`;
      throw err;
    }
  }
}
