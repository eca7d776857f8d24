// A project's run launches instantiations of the loop's kernel template that other units of the
// project built (a header included by several .cu files): they hold the loop too, but the SASS
// side reads one unit only. They are recognised by their mangled name: the same kernel template,
// other template arguments.
import { instantiationLabel } from '../../../schema/kernelNames';

/**
 * The kernel template a mangled kernel name instantiates, as a key equal for every instantiation
 * of it (`_Z8rows_dotILi2ELi4EEvPKfPfi` and `_Z8rows_dotILi32ELi1EEvPKfPfi` → `rows_dot`), or null
 * when the name is not a function template's or is spelled in a way this reader does not follow
 * (substitutions, class-template scopes, operators): those get no other instantiation, rather
 * than a wrong one. nvcc's per-unit namespace of internal-linkage kernels (`_INTERNAL_<hash>…`,
 * with separate compilation) differs between units and matches any.
 */
export function kernelTemplateKey(mangled: string): string | null {
  const m = /^_Z(L?)(N?)/.exec(mangled);
  if (!m) return null;
  let i = m[0].length;
  const nested = m[2] === 'N';
  if (nested) while ('rVK'.includes(mangled[i] ?? '#')) i++;
  const parts: string[] = [];
  for (;;) {
    const len = /^\d+/.exec(mangled.slice(i));
    if (!len) return null;
    i += len[0].length;
    const id = mangled.slice(i, i + Number(len[0]));
    if (id.length !== Number(len[0])) return null;
    i += id.length;
    parts.push(id.startsWith('_INTERNAL_') ? '(unit)' : id);
    if (mangled[i] === 'I') return parts.join('::');
    // I after a scope is the function's own template arguments: a kernel is never a member of a
    // class template. A name followed by anything but another name (E ends the nested name, else
    // a parameter list begins) is not a function template.
    if (!nested || !/^\d/.test(mangled.slice(i))) return null;
  }
}

/** The keys of the kernel templates behind `kernels` (those the reader follows). */
export function templateKeysOf(kernels: string[]): string[] {
  return [...new Set(kernels.map(kernelTemplateKey).filter((k): k is string => k !== null))];
}

/** Launched kernels not yet timed that instantiate one of the templates `keys` names. */
export function moreOfSameTemplate(keys: readonly string[], timed: readonly string[], launched: Iterable<string>): string[] {
  if (!keys.length) return [];
  const more: string[] = [];
  for (const name of launched) {
    if (timed.includes(name) || more.includes(name)) continue;
    const key = kernelTemplateKey(name);
    if (key !== null && keys.includes(key)) more.push(name);
  }
  return more;
}

/** What the rows of kernels from other units are, and why their SASS columns are empty. */
export function otherUnitsNote(kernels: string[], demangled: Record<string, string> | undefined): string {
  const n = kernels.length;
  return (
    `${n} instantiation${n > 1 ? 's' : ''} of the loop's kernel built by other units of the project ran and ${n > 1 ? 'are' : 'is'} timed ` +
    `(${kernels.map(k => instantiationLabel(demangled?.[k] ?? k)).join(', ')}): recognised by name, ` +
    `${n > 1 ? 'their' : 'its'} SASS is unknown (the SASS side builds one unit: --tu picks it)`
  );
}
