// Plain-language notes on a loop's variants: requested factors nvcc ignored or capped.
import type { Loop } from '../parse/model';
import { factorLabel } from './factors';
import type { LoopVariant } from './reports';
import { ONE_CALL_SITE } from './loopCopies';

/** Requested factors nvcc ignored (identical code) or capped (fewer copies than asked). */
export function explainVariants(variants: LoopVariant[], loop: Loop): string[] {
  const notes: string[] = [];
  const trip = typeof loop.tripCount === 'number' ? loop.tripCount : null;
  for (const v of variants) {
    if (v.status !== 'ok') continue;
    // A count the two machine-code readings do not back is no count: say why, claim nothing about the request.
    if (v.effectiveUnroll === null && v.unrollUnknown) notes.push(`${factorLabel(v.factor)}: applied unroll unknown: ${v.unrollUnknown}`);
    const asked = typeof v.factor === 'number' ? v.factor : null;
    const honoured = (asked !== null && v.effectiveUnroll === asked) || (v.factor === 'full' && v.fullyUnrolled);
    if (v.identicalTo !== null && v.identicalTo !== v.factor) {
      const same = `same code as ${factorLabel(v.identicalTo)}`;
      if (v.factor === 'full' && !v.fullyUnrolled) {
        notes.push(
          `full unroll requested but the trip count is not a compile-time constant: ${same}${v.effectiveUnroll ? ` (×${v.effectiveUnroll})` : ''}`,
        );
      } else if (honoured) {
        notes.push(
          `${factorLabel(v.factor)}: ${same} (nvcc already ${asked === null ? 'unrolls it completely' : `unrolls ×${asked}`} there)`,
        );
      } else {
        notes.push(`${factorLabel(v.factor)} ignored by nvcc: ${same}`);
      }
      continue;
    }
    if (asked !== null && v.effectiveUnroll !== null && !honoured) {
      if (trip !== null && asked >= trip && v.fullyUnrolled) continue; // asked for ≥ trips: a full unroll is right
      if (v.fullyUnrolled) notes.push(`${factorLabel(v.factor)} requested, nvcc unrolled the loop completely (×${v.effectiveUnroll})`);
      else if (v.effectiveUnroll === 1 && asked > 1)
        notes.push(`${factorLabel(v.factor)} ignored by nvcc: its machine loop holds one iteration per pass (×1)`);
      else if (v.unrollReadings && v.unrollReadings.steps !== v.effectiveUnroll)
        // Capped only when both readings say so: the body's count alone is said as such.
        notes.push(
          `${factorLabel(v.factor)} requested, the machine loop's body holds ×${v.effectiveUnroll} (not confirmed by its induction steps: ${v.unrollReadings.stepsBasis})`,
        );
      else
        notes.push(
          `${factorLabel(v.factor)} requested, nvcc unrolled ×${v.effectiveUnroll}${v.effectiveUnroll < asked ? ' (capped)' : ''}`,
        );
    }
    if (v.factor === 'full' && !v.fullyUnrolled && v.effectiveUnroll !== null) {
      notes.push(`full unroll requested, but a loop remains (×${v.effectiveUnroll} per machine-code iteration)`);
    }
  }
  const copies = copiesNote(variants);
  if (copies) notes.push(copies);
  return notes;
}

/**
 * The loop's code appears more than once in the kernel (inlined at several call sites): where,
 * and what each copy holds, so a loop count that adds them up is read as such.
 */
/** Copies at one call site: how many, and each variant's copies (equal ones once, with their count). */
function oneSiteNote(withCopies: LoopVariant[]): string {
  const n = Math.max(...withCopies.map(v => v.loopCopies!.length));
  const per = withCopies
    .map(v => {
      const shown = [
        ...new Set(v.loopCopies!.map(c => `${c.instructions}${c.effectiveUnroll === null ? '' : ` (×${c.effectiveUnroll})`}`)),
      ];
      return `${factorLabel(v.factor)}: ${shown.length === 1 ? `${v.loopCopies!.length} × ${shown[0]}` : v.loopCopies!.map(c => c.instructions).join(' + ')}`;
    })
    .join('; ');
  return (
    `the loop's code appears ${n} times at one call site (the rolled build has ${n} machine loops: a loop around it, in its own function or a caller it is inlined in, was unrolled); ` +
    `loop instr counts every copy and the remainder column none of them (${per})`
  );
}

function copiesNote(variants: LoopVariant[]): string | null {
  const withCopies = variants.filter(v => v.status === 'ok' && v.loopCopies && v.loopCopies.length > 1);
  if (!withCopies.length) return null;
  if (withCopies.every(v => v.loopCopies!.every(c => c.place.startsWith(ONE_CALL_SITE)))) return oneSiteNote(withCopies);
  const places = [...new Set(withCopies.flatMap(v => v.loopCopies!.map(c => c.place)))];
  const per = withCopies
    .map(
      v =>
        `${factorLabel(v.factor)}: ${v.loopCopies!.map(c => `${c.instructions}${c.effectiveUnroll === null ? '' : ` (×${c.effectiveUnroll})`}`).join(' + ')}`,
    )
    .join('; ');
  return `the loop's code appears ${places.length} times in the kernel (${places.join('; ')}): loop instr counts every copy (${per})`;
}
