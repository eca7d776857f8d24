// A sweep's note on which template instantiation its rows measured. The names themselves
// (instantiationLabel, showInstantiations) are in src/schema/kernelNames.ts: the panel uses them too.
import { instantiationLabel } from '../../schema/kernelNames';

/**
 * A sweep's note on which instantiation its rows measure, when several functions hold the swept
 * loops' code; null when one does (its name is in every row). `choices`: one per group of
 * template values, the first the file as written's.
 */
export function instantiationNote(
  choices: readonly { demangled: string; of: number }[],
  templateSwept: boolean,
  filtered: boolean,
): string | null {
  const several = choices.filter(c => c.of > 1);
  if (!several.length) return null;
  if (templateSwept)
    return (
      'each row measures the instantiation its template values name (instantiation column); ' +
      several
        .map(c => `for ${instantiationLabel(c.demangled)}, ${c.of} functions matched and the one with most of the loops' code was kept`)
        .join('; ')
    );
  const c = several[0];
  return (
    `${c.of} instantiations hold the swept loops' code: every row measures ${instantiationLabel(c.demangled)}, ` +
    `the one with most of it in the sweep's first builds (the file as written and its rolled build${filtered ? ', among those the kernel filter names' : ''}); ` +
    'sweep its template parameter (--param NAME=V1,V2) to measure the others'
  );
}
