// One small command-line parser for every subcommand, and the help text built from the same
// option table. Not util.parseArgs: its strict mode refuses an option value that starts with a
// dash given as the next word, and `bench --args "--size 2048"` must keep working.
import { CliIO, EXIT, UsageError } from './io';
import { describeValue, EnumDecl, NumberDecl, SettingDecl, settingProblem, StringDecl } from '../settings';
import { UnrollFactors, UnrollFactorsError } from '../engine';
import { RANGES, rangeProblem } from '../schema/ranges';

export interface OptionSpec {
  /**
   * `string` takes a value (`--loop 51` or `--loop=51`); `boolean` is a switch (`--json`); `list`
   * takes a value and may be repeated, every value kept in order (`--param A=1 --param B=2`).
   */
  type: 'string' | 'boolean' | 'list';
  /** Placeholder in the help: `--loop LINE`. */
  value?: string;
  help: string;
  /** The setting this option overrides for one run: the help shows its default. */
  setting?: SettingDecl;
  /** Default as the help shows it, when the setting's own value does not say it well. */
  default?: string;
  /** Another name taking the same value: sweep's `--loops` is also `--loop`, as bench spells it. */
  alias?: string;
}

/** Long option name without the dashes → spec. */
export type OptionTable = Record<string, OptionSpec>;
type OptionValues<O extends OptionTable> = {
  [K in keyof O]?: O[K]['type'] extends 'boolean' ? true : O[K]['type'] extends 'list' ? string[] : string;
};

export interface ParsedArgs<O extends OptionTable> {
  options: OptionValues<O>;
  positionals: string[];
}

export interface CommandDef<O extends OptionTable, A = ParsedArgs<O>> {
  name: string;
  /** One line for `unroll-lens --help`. */
  summary: string;
  /** What follows the command name in its usage line: `<file> --loop LINE[,LINE…] [options]`. */
  synopsis: string;
  /** Paragraphs for `unroll-lens <command> --help` (already wrapped). */
  description: string;
  options: O;
  /** Every code `run` can return or an error of it maps to, and when. */
  exitCodes: [number, string][];
  /**
   * The run's settings from the words, every default filled in and every value checked, before
   * anything is read or built: the one place a flag becomes a value (and what the test of the
   * help's defaults compares). Without it, `run` takes the parsed words.
   */
  argsOf?(args: ParsedArgs<O>): A;
  run(args: A, io: CliIO): Promise<number>;
}

/** A subcommand as the command table in main.ts holds it. */
export interface CliCommand {
  name: string;
  summary: string;
  synopsis: string;
  options: OptionTable;
  help(): string;
  /** Parses `argv` (the words after the command name) and runs; `--help` prints the help and returns 0. */
  main(argv: string[], io: CliIO): Promise<number>;
  /** The settings a run of `argv` would use (the command's argsOf), or null for a command without one. */
  argsOf(argv: string[]): unknown;
}

export function defineCommand<const O extends OptionTable, A = ParsedArgs<O>>(def: CommandDef<O, A>): CliCommand {
  const argsOf = (parsed: ParsedArgs<O>): A => (def.argsOf ? def.argsOf(parsed) : (parsed as A));
  return {
    name: def.name,
    summary: def.summary,
    synopsis: def.synopsis,
    options: def.options,
    help: () => commandHelp(def),
    main: async (argv, io) => {
      const parsed = parseCommandLine(def.name, def.options, argv);
      if (parsed === 'help') {
        io.out(commandHelp(def));
        return EXIT.ok;
      }
      return def.run(argsOf(parsed), io);
    },
    argsOf: argv => {
      const parsed = parseCommandLine(def.name, def.options, argv);
      return parsed === 'help' || !def.argsOf ? null : def.argsOf(parsed);
    },
  };
}

/**
 * `--opt value`, `--opt=value`, switches, `--` (everything after it is a file), `-h`/`--help`.
 * A value is taken as the next word even when it starts with a dash. Repeating an option keeps
 * the last value, except a `list` option, which keeps them all. Returns 'help' when -h/--help
 * appears as an option (not as a value).
 */
export function parseCommandLine<O extends OptionTable>(command: string, options: O, argv: string[]): ParsedArgs<O> | 'help' {
  const values: Record<string, string | true | string[]> = {};
  const set = (name: string, spec: OptionSpec, value: string) => {
    values[name] = spec.type === 'list' ? [...((values[name] as string[] | undefined) ?? []), value] : value;
  };
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h' || a === '--help') return 'help';
    if (!a.startsWith('-') || a === '-') {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const written = eq < 0 ? a : a.slice(0, eq);
    const given = written.startsWith('--') ? written.slice(2) : '';
    const name = Object.keys(options).find(k => options[k].alias === given) ?? given;
    const spec = name && Object.prototype.hasOwnProperty.call(options, name) ? options[name] : undefined;
    if (!spec) throw new UsageError(`unknown option '${written}' for ${command}`);
    if (spec.type === 'boolean') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      values[name] = true;
    } else if (eq >= 0) {
      set(name, spec, a.slice(eq + 1));
    } else {
      if (i + 1 >= argv.length) throw new UsageError(`--${name} needs a value${spec.value ? ` (${spec.value})` : ''}`);
      set(name, spec, argv[++i]);
    }
  }
  return { options: values as OptionValues<O>, positionals };
}

// ---------------------------------------------------------------------------------------------
// Values checked against the setting an option stands for, so the CLI and the editor accept the same.

function invalid(name: string, decl: SettingDecl, text: string): UsageError {
  return new UsageError(`--${name} takes ${describeValue(decl)}, not '${text}'`);
}

/**
 * `--samples 40` → 40, checked like unrollLens.profile.samples; absent → the setting's default.
 * One spelling: decimal digits (and a decimal fraction where the setting takes one), nothing
 * Number() would also take (`0x10`, `1e3`, `+5`, ` 40`), as for line numbers.
 */
export function numberOption(name: string, text: string | undefined, decl: NumberDecl): number {
  if (text === undefined) return decl.default;
  const n = (decl.type === 'integer' ? /^\d+$/ : /^\d+(\.\d+)?$/).test(text) ? Number(text) : NaN;
  if (settingProblem(decl, n)) throw invalid(name, decl, text);
  return n;
}

export function enumOption<E extends string>(name: string, text: string | undefined, decl: EnumDecl<E>): E {
  if (text === undefined) return decl.default;
  if (settingProblem(decl, text)) throw invalid(name, decl, text);
  return text as E;
}

export function stringOption(name: string, text: string | undefined, decl: StringDecl): string {
  if (text === undefined) return decl.default;
  if (settingProblem(decl, text)) throw invalid(name, decl, text);
  return text;
}

/**
 * `--loop 40` or `--loops 40,52`: decimal line numbers from 1 to RANGES.sourceLine.max (not `1e3`,
 * `0x28` or `4.0`, which Number() would take), at least one.
 */
export function lineListOption(name: string, text: string): number[] {
  const parts = text.split(',').map(s => s.trim());
  const bad = parts.find(p => !/^\d+$/.test(p) || rangeProblem(RANGES.sourceLine, Number(p)));
  if (bad !== undefined)
    throw new UsageError(
      `--${name} takes 1-based line numbers (integers from 1 to ${RANGES.sourceLine.max}), comma-separated: --${name} 40 or --${name} 40,52; not '${bad}'`,
    );
  return parts.map(Number);
}

/** `--factors 1,4,full`, parsed once here; absent: the unrollLens.unrollFactors default. Each factor is checked like the setting's. */
export function factorsOption(text: string | undefined): UnrollFactors {
  if (text === undefined) return UnrollFactors.DEFAULT;
  try {
    return UnrollFactors.parse(text);
  } catch (e) {
    if (!(e instanceof UnrollFactorsError)) throw e;
    throw new UsageError(`--factors: ${e.message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Help

const WIDTH = 100;

/** `prefix` then `text` word-wrapped at `width`; continuation lines are indented to the end of `prefix`. */
function hanging(prefix: string, text: string, width = WIDTH): string {
  const lines: string[] = [];
  let line = prefix;
  let empty = true;
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(prefix.length) + word;
    } else {
      line += (empty ? '' : ' ') + word;
    }
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}

function defaultText(name: string, spec: OptionSpec): string | null {
  if (spec.default !== undefined) return spec.default;
  if (!spec.setting) return null;
  const d = spec.setting.default;
  const text = Array.isArray(d) ? d.join(',') : String(d);
  // An empty default is a setting's "nothing given": a help line saying `(default: )` says nothing.
  if (text === '') throw new Error(`--${name}: its setting's default is empty, so the option needs its own default text`);
  return text;
}

/** Two columns: the names (`--loop LINE`) and the help, wrapped under its column. */
export function optionRows(rows: [string, string][]): string {
  const col = Math.max(...rows.map(([n]) => n.length)) + 2;
  return rows.map(([n, h]) => hanging(`  ${n.padEnd(col)}`, h)).join('\n');
}

function commandHelp<O extends OptionTable, A>(def: CommandDef<O, A>): string {
  const rows: [string, string][] = Object.entries(def.options).map(([name, spec]) => {
    const d = defaultText(name, spec);
    const repeat = spec.type === 'list' ? ' (repeatable)' : '';
    const names = `--${name}${spec.alias ? `, --${spec.alias}` : ''}`;
    return [`${names}${spec.value ? ` ${spec.value}` : ''}`, `${spec.help}${repeat}${d !== null ? ` (default: ${d})` : ''}`];
  });
  rows.push(['-h, --help', 'this help']);
  return [
    `Usage: unroll-lens ${def.name} ${def.synopsis}`,
    '',
    def.description,
    '',
    'Options:',
    optionRows(rows),
    '',
    'Exit codes:',
    ...[...def.exitCodes, [EXIT.internal, 'internal error: a bug in Unroll Lens (stack trace on stderr)'] as const]
      .sort((a, b) => a[0] - b[0])
      .map(([code, meaning]) => hanging(`  ${String(code).padEnd(5)}`, meaning)),
    '',
  ].join('\n');
}
