// When nvcc, ptxas or the host compiler rejects a compile flag, says which of the flags we passed
// it was and where it came from (compile_commands.json or the settings), so that a bad flag is a
// message the user can act on rather than an internal error. Pure string work; never throws.
import type { CompilerMessage } from './nvccErrors';
import type { CompileFlags } from './flags';

/** The option a tool's message says it rejected: "Unknown option '-bogus'" → { option: '-bogus' }. */
export function rejectedOption(message: string): { option: string; value: string | null } | null {
  if (typeof message !== 'string') return null;
  let m: RegExpExecArray | null;
  if ((m = /Unknown option '([^']+)'/.exec(message))) return { option: m[1], value: null };
  if ((m = /(?:Invalid value|Value) '([^']*)' (?:for|is not defined for) option '([^']+)'/.exec(message)))
    return { option: m[2], value: m[1] };
  if ((m = /Missing value for option '([^']+)'/.exec(message))) return { option: m[1], value: null };
  if ((m = /unrecognized command[- ]line option [‘'`"]([^’'"]+)[’'"]/.exec(message))) return { option: m[1], value: null };
  if ((m = /Unsupported gpu architecture '([^']+)'/.exec(message))) return { option: 'arch', value: m[1] };
  return null;
}

const bare = (s: string) => s.replace(/^-+/, '').replace(/=.*$/, '');

/**
 * The flag among `args` (as passed to nvcc: `-Xptxas a,b` pairs included) that `rejected` names,
 * shown as written there ("-Xptxas --bogus", "-std=c++26"); null when none of ours matches.
 */
function flagForRejection(rejected: { option: string; value: string | null }, args: string[]): string | null {
  const name = bare(rejected.option);
  const matches = (word: string) =>
    bare(word) === name && (rejected.value === null || word.endsWith(`=${rejected.value}`) || word === `${rejected.option}`);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if ((a === '-Xptxas' || a === '-Xcompiler') && i + 1 < args.length) {
      const item = args[i + 1].split(',').find(x => bare(x) === name || matches(x));
      if (item !== undefined) return `${a} ${item}`;
      i++;
      continue;
    }
    if (matches(a) || (rejected.value !== null && bare(a) === name)) return a;
  }
  return null;
}

/** The first error message that names a rejected option, with the flag of ours it is. */
export function describeRejectedFlag(messages: CompilerMessage[], flags: Pick<CompileFlags, 'args' | 'source'>): string | null {
  for (const m of messages ?? []) {
    if (m?.severity !== 'error') continue;
    const r = rejectedOption(m.message);
    if (!r) continue;
    const flag = flagForRejection(r, flags.args ?? []);
    const tool = m.tool && m.tool !== 'front-end' ? m.tool : 'nvcc';
    return flag
      ? `${tool} rejected the flag ${JSON.stringify(flag)} from ${flags.source} (${m.message}); fix or remove it there`
      : `${tool} rejected a flag: ${m.message}`;
  }
  return null;
}

/** The file as written does not compile, so nothing can be measured; `kind` is nvccErrors' failure kind. */
export class FileDoesNotCompileError extends Error {
  constructor(
    message: string,
    readonly kind: string,
  ) {
    super(message);
  }
  /** A flag nvcc or a tool rejected (kind flags or arch): the input is bad, not the program. */
  get badFlag(): boolean {
    return this.kind === 'flags' || this.kind === 'arch';
  }
}

/** The error for a file as written that failed with `failure`, naming the rejected flag when there is one. */
export function fileDoesNotCompile(
  file: string,
  failure: { kind: string; messages: CompilerMessage[] },
  flags: CompileFlags,
): FileDoesNotCompileError {
  const flag = describeRejectedFlag(failure.messages, flags);
  const first = failure.messages.find(m => m.severity === 'error');
  const detail =
    flag ??
    (first ? `${first.file ? `${first.file}${first.line ? `:${first.line}` : ''}: ` : ''}${first.message}` : 'nvcc printed no message');
  return new FileDoesNotCompileError(`${file} as written does not compile (${failure.kind}): ${detail}`, failure.kind);
}
