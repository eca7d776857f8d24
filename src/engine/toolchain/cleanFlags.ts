// Walks one compile command's arguments (response files already expanded) and keeps only what the
// allow-list in flagAllowList.ts accepts, in canonical spelling; each flag left out is named in a
// warning with the reason, except those the builder replaces with its own (mode, -o, -x, -M*,
// architecture). nvcc builds its host-compiler and tool command lines as strings and runs them with
// sh, so every value that survives also holds only shell-inert characters. Never throws.
import * as path from 'path';
import { remedies } from '../base/remedies';
import {
  GLUED,
  hostOptionRefusal,
  MACRO_NAME,
  NVCC_OPTIONS,
  OptionSpec,
  PORTABLE,
  PORTABLE_KEEP,
  PTXAS_VERBOSE,
  ptxasOption,
  SAFE_PATH,
  SAFE_WORD,
} from './flagAllowList';

/** Where repository-supplied flags came from, for warnings; absent for the user's own settings. */
export interface RepoOrigin {
  db: string;
  file: string;
  /** Response files are read only from inside these folders (the build's: the database's, as named and real, and the command's). */
  rspRoots: string[];
}

export interface Cleaned {
  args: string[];
  arch: string | null;
  warnings: string[];
  headerDefines: string[];
}

/** What cleaning gathers while it walks the arguments. */
export interface Gathered {
  out: string[];
  realArchs: string[];
  virtualArchs: string[];
  /** Flags of a non-nvcc compiler left out, listed in one warning at the end. */
  dropped: Set<string>;
  warnings: string[];
  /** -G was given (dropped, with its own warning). */
  sawG: boolean;
  /** -dc was given: keep its relocatable device code as -rdc=true. */
  addRdc: boolean;
  headerDefines: string[];
  fromRepo?: RepoOrigin;
}

/** One nvcc option as written: its looked-up name, what to do with it, its value. */
interface ParsedOption {
  name: string;
  spec: OptionSpec;
  value: string | null;
}

const SOURCE_EXT = /\.(cu|cuh|cpp|cxx|cc|c|c\+\+|cp|C|ii|i)$/;
/** "NAME" or "NAME(a, b)" of a -D value, before its "=". */
const MACRO_HEAD = /^[A-Za-z_][A-Za-z0-9_]*(?:\([A-Za-z0-9_, .]*\))?$/;
const NOT_ALLOWED = 'not on the allow-list of nvcc flags that shape device code';

export function newGathered(fromRepo?: RepoOrigin): Gathered {
  return {
    out: [],
    realArchs: [],
    virtualArchs: [],
    dropped: new Set(),
    warnings: [],
    sawG: false,
    addRdc: false,
    headerDefines: [],
    fromRepo,
  };
}

export interface WalkOptions {
  /** The compiler was nvcc (else only the portable flags carry over). */
  nvcc: boolean;
  /** Resolve -I/-isystem/-include/-ccbin against the command's directory. */
  resolvePaths: boolean;
  /** The words of a response file, or null when it is not read (the reader warns). */
  readRsp?: (file: string) => string[] | null;
}

/** At most this many response files are read per command: a file that names itself cannot make the work grow without bound. */
const MAX_RESPONSE_FILES = 16;
/** …and at most this many words come from them in all. */
const MAX_RESPONSE_WORDS = 100_000;

/** Cleans `args` (the compiler itself already taken off), expanding response files where an option may stand. */
export function cleanArgList(argsIn: string[], dir: string, o: WalkOptions, g: Gathered): Cleaned {
  const args = Array.isArray(argsIn) ? [...argsIn] : [];
  const rsp: { files: number; words: number; overflowed?: boolean } = { files: 0, words: 0 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a !== 'string' || a === '') continue;
    if (a.startsWith('@') && a.length > 1) {
      spliceResponseFiles(args, i, [a.slice(1)], o, rsp, g);
      continue;
    }
    // Positional: the input file(s), or something we cannot place.
    if (!a.startsWith('-') || a === '-') {
      if (!SOURCE_EXT.test(a)) reject(g, a, 'an argument that is not an option nor a source file');
      continue;
    }
    if (takeClangSpelling(a, g)) continue;
    const opt = lookUpOption(a);
    if (!opt) {
      if (o.nvcc) reject(g, a, SAFE_WORD.test(a) ? NOT_ALLOWED : whyUnsafe(a, SAFE_WORD));
      else g.dropped.add(a);
      continue;
    }
    let raw = [a];
    if (opt.spec.takesValue && opt.value === null) {
      const next = separateValue(args, i, opt.name);
      if (next === null) {
        reject(g, a, opt.name === '-O' || opt.name === '--optimize' ? 'it needs a level (0 to 3)' : 'it needs a value');
        continue;
      }
      opt.value = next;
      raw = [a, next];
      i++;
    }
    if (opt.spec.kind === 'rsp') {
      spliceResponseFiles(args, i, splitList(opt.value ?? ''), o, rsp, g);
      continue;
    }
    if (!o.nvcc && !(PORTABLE.has(opt.spec.kind) || PORTABLE_KEEP.has(opt.name))) {
      g.dropped.add(raw.join(' '));
      continue;
    }
    applyOption(opt, raw.join(' '), g, dir, o.resolvePaths);
  }
  return finish(g);
}

/** Puts the words of `files` right after args[i], within the budget of MAX_RESPONSE_FILES / MAX_RESPONSE_WORDS. */
function spliceResponseFiles(
  args: string[],
  i: number,
  files: string[],
  o: WalkOptions,
  rsp: { files: number; words: number; overflowed?: boolean },
  g: Gathered,
): void {
  const words: string[] = [];
  for (const f of files) {
    if (!o.readRsp) continue;
    if (rsp.files >= MAX_RESPONSE_FILES || rsp.words >= MAX_RESPONSE_WORDS) {
      // Said once per command: every further @file is left out for the same reason.
      if (!rsp.overflowed)
        g.warnings.push(
          `response file ${f} not read: more than ${MAX_RESPONSE_FILES} response files or ${MAX_RESPONSE_WORDS} words in one command (does one name itself?); the remaining ones are not read either`,
        );
      rsp.overflowed = true;
      continue;
    }
    rsp.files++;
    const read = o.readRsp(f);
    if (!read) continue;
    const room = MAX_RESPONSE_WORDS - rsp.words;
    rsp.words += Math.min(read.length, room);
    for (const w of read.slice(0, room)) words.push(w);
  }
  // No spread: a response file may hold more words than a call takes arguments.
  const tail = args.splice(i + 1);
  for (const w of words) args.push(w);
  for (const w of tail) args.push(w);
}

/** Looks an argument up as "--name=value", "-name=value", "-name" (value next, if any) or glued "-Ivalue". */
function lookUpOption(a: string): ParsedOption | null {
  const exact = NVCC_OPTIONS.get(a);
  if (exact) return { name: a, spec: exact, value: null };
  const eq = a.indexOf('=');
  if (eq > 0) {
    const head = a.slice(0, eq);
    const spec = NVCC_OPTIONS.get(head);
    if (spec && spec.takesValue) return { name: head, spec, value: a.slice(eq + 1) };
  }
  const glued = GLUED.find(p => a.startsWith(p) && a.length > p.length);
  return glued ? { name: glued, spec: NVCC_OPTIONS.get(glued)!, value: a.slice(glued.length) } : null;
}

/** The value of option `name` written as the next argument; null when it is missing ("-O" takes only a digit there). */
function separateValue(argv: string[], i: number, name: string): string | null {
  if (i + 1 >= argv.length || typeof argv[i + 1] !== 'string') return null;
  if ((name === '-O' || name === '--optimize') && !/^\d$/.test(argv[i + 1])) return null;
  return argv[i + 1];
}

/** Does what the option's kind says: pass it on canonically (paths made absolute), note an arch, or leave it out. */
function applyOption(opt: ParsedOption, flag: string, g: Gathered, dir: string, resolvePaths: boolean): void {
  const { name, spec } = opt;
  const value = opt.value ?? '';
  const abs = (p: string) => (resolvePaths ? path.resolve(dir, p) : p);
  switch (spec.kind) {
    case 'replaced':
    case 'rsp': // already expanded by the caller; a leftover means it could not be read
      break;
    case 'refused':
      reject(g, flag, spec.reason ?? NOT_ALLOWED);
      break;
    case 'keep':
      keepOption(opt, flag, g);
      break;
    case 'define':
      takeDefine(value, flag, g);
      break;
    case 'undefine':
      if (!MACRO_NAME.test(value)) reject(g, flag, 'it is not a macro name');
      else {
        g.out.push(`-U${value}`);
        forgetHeaderDefine(g, value); // the header is read after all -U: a later -U must still win
      }
      break;
    case 'include':
      for (const p of splitList(value)) {
        // Glued, "-I=x" reads back (to nvcc and to us) as the include path "x", not "=x".
        if (abs(p).startsWith('=')) reject(g, flag, 'an include path beginning with "=" is ambiguous: nvcc reads -I=x as the path x');
        else if (safePath(p, flag, g)) g.out.push(`-I${abs(p)}`);
      }
      break;
    case 'isystem':
      for (const p of splitList(value)) if (safePath(p, flag, g)) g.out.push('-isystem', abs(p));
      break;
    case 'preinclude':
      if (safePath(value, flag, g)) g.out.push('-include', resolvePaths && !path.isAbsolute(value) ? path.resolve(dir, value) : value);
      break;
    case 'ccbin':
      takeCcbin(value, flag, g, dir, resolvePaths);
      break;
    case 'arch':
    case 'code':
      for (const v of splitList(value)) noteArch(v, g.realArchs, g.virtualArchs);
      break;
    case 'gencode':
      noteGencode(value, g.realArchs, g.virtualArchs);
      break;
    case 'xptxas':
      takePtxasOptions(value, flag, g);
      break;
    case 'xcompiler':
      takeHostOptions(value, flag, g);
      break;
    case 'device-debug':
      g.sawG = true;
      break;
    case 'device-c':
      g.addRdc = true;
      break;
    case 'verbose':
      if (name === '-res-usage' || name === '--resource-usage') g.dropped.add(name);
      break;
  }
}

/** An allow-listed nvcc flag: `name`, `name=value`, or `-O<level>`, when the value is one the option takes. */
function keepOption(opt: ParsedOption, flag: string, g: Gathered): void {
  const { name, spec, value } = opt;
  if (!spec.value) {
    g.out.push(name);
    return;
  }
  if (value === null || !spec.value.test(value)) {
    reject(
      g,
      flag,
      value && !SAFE_WORD.test(value) ? whyUnsafe(value, SAFE_WORD) : `${JSON.stringify(value ?? '')} is not a value ${name} takes`,
    );
    return;
  }
  g.out.push(name === '-O' ? `-O${value}` : `${name}=${value}`);
}

function takeCcbin(v: string, flag: string, g: Gathered, dir: string, resolvePaths: boolean): void {
  // -ccbin names the program nvcc runs (through sh): a repository never chooses it.
  if (g.fromRepo) {
    reject(g, flag, `the host compiler is never taken from compile_commands.json (${remedies().hostCompiler})`);
    return;
  }
  if (!SAFE_WORD.test(v) || v === '') {
    reject(g, flag, whyUnsafe(v, SAFE_WORD));
    return;
  }
  g.out.push('-ccbin', resolvePaths && /[/\\]/.test(v) ? path.resolve(dir, v) : v);
}

/** -Xptxas a,b: each item on the ptxas allow-list (canonical spelling) is kept, the others named in one warning; -v is the builder's own. */
function takePtxasOptions(value: string, flag: string, g: Gathered): void {
  const kept: string[] = [];
  const refused: string[] = [];
  for (const item of splitList(value)) {
    if (PTXAS_VERBOSE.has(item)) continue;
    const r = SAFE_WORD.test(item) ? ptxasOption(item) : { refused: whyUnsafe(item, SAFE_WORD) };
    if ('ok' in r) kept.push(r.ok);
    else refused.push(r.refused);
  }
  if (refused.length) reject(g, flag, refused.join('; '));
  if (kept.length) g.out.push('-Xptxas', kept.join(','));
}

/**
 * -Xcompiler a,b: nvcc splits the value at every comma and pastes the items into the host
 * compiler's sh command line; each item on the host allow-list is kept. None of those takes the
 * next item as a value, so leaving one item out cannot change how the others are read.
 */
function takeHostOptions(value: string, flag: string, g: Gathered): void {
  const kept: string[] = [];
  const refused: string[] = [];
  // nvcc pastes the value unquoted into a sh command line, so a space splits it as a comma would.
  for (const item of value.split(/[,\s]+/)) {
    if (item === '') continue;
    const why = SAFE_WORD.test(item) ? hostOptionRefusal(item) : whyUnsafe(item, SAFE_WORD);
    if (why === null) kept.push(item);
    else refused.push(why);
  }
  if (refused.length) reject(g, flag, refused.join('; '));
  if (kept.length) g.out.push('-Xcompiler', kept.join(','));
}

/** The closing warnings, -rdc=true for -dc, and the arch: the first real one (sm_), else the first virtual one. */
function finish(g: Gathered): Cleaned {
  const { out, warnings } = g;
  if (g.sawG) warnings.push('dropped -G (device debug): it turns off device optimisation, so the SASS would not show what unrolling does');
  if (g.addRdc && !out.some(x => /^-(?:-relocatable-device-code|rdc)(?:=|$)/.test(x))) out.push('-rdc=true');
  if (g.dropped.size) warnings.push(`dropped ${[...g.dropped].join(', ')}`);
  let arch: string | null = null;
  for (const c of [...g.realArchs, ...g.virtualArchs]) {
    arch = normaliseArch(c);
    if (arch) break;
  }
  return { args: out, arch, warnings, headerDefines: g.headerDefines };
}

/** "sm_90", "compute_90", "lto_90", "90", "9.0" → "sm_90" (suffixes a/f kept); native/all/unknown → null. */
export function normaliseArch(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  const s = value
    .trim()
    .toLowerCase()
    .replace(/^["']|["']$/g, '');
  let m = /^(?:sm|compute|lto)_(\d+)([af]?)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  m = /^(\d{2,3})([af]?)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  m = /^(\d{1,2})\.(\d)$/.exec(s);
  if (m) return `sm_${m[1]}${m[2]}`;
  return null;
}

/** clang CUDA spellings: the arch is noted, the rest dropped. False when `a` is none of them. */
function takeClangSpelling(a: string, g: Gathered): boolean {
  const m = /^--(?:cuda-gpu-arch|offload-arch)=(.+)$/.exec(a);
  if (m) {
    noteArch(m[1], g.realArchs, g.virtualArchs);
    return true;
  }
  if (/^--cuda-path=/.test(a) || /^-fgpu-|^-fcuda-/.test(a)) {
    g.dropped.add(a);
    return true;
  }
  return false;
}

/** Why `v` fails `re`, naming the first character that does. */
export function whyUnsafe(v: string, re: RegExp): string {
  if (v === '') return 'its value is empty';
  const bad = [...v].find(c => !re.test(c));
  const shown =
    bad === undefined
      ? ''
      : bad === '\n'
        ? 'a newline'
        : bad === ' '
          ? 'a space'
          : bad.charCodeAt(0) < 0x20
            ? 'a control character'
            : `"${bad}"`;
  return `its value contains ${shown}, which nvcc would hand to sh (values may hold only letters, digits and _ - + = . , : / % @${re === SAFE_PATH ? ' and spaces' : ''})`;
}

function forgetHeaderDefine(g: Gathered, name: string): void {
  g.headerDefines = g.headerDefines.filter(d => !d.startsWith(`#define ${name} `) && !d.startsWith(`#define ${name}(`));
}

/** Records a dropped flag and why, naming where it came from. */
function reject(g: Gathered, flag: string, why: string): void {
  const from = g.fromRepo ? ` (from ${g.fromRepo.db}, entry for ${g.fromRepo.file})` : '';
  g.warnings.push(`dropped ${JSON.stringify(flag)}${from}: ${why}`);
}

function safePath(p: string, flag: string, g: Gathered): boolean {
  if (SAFE_PATH.test(p)) return true;
  reject(g, flag, whyUnsafe(p, SAFE_PATH));
  return false;
}

/**
 * A -D value: on the command line (as -DNAME=VALUE) when every character is shell-safe;
 * otherwise (quoted strings such as -DVERSION="1.2", spaces, function-like macros) as a #define
 * in the generated header, which no shell reads. Dropped: $ and ` (see below), a newline, or a
 * trailing backslash (it would join the next #define).
 */
function takeDefine(value: string, flag: string, g: Gathered): void {
  const eq = value.indexOf('=');
  const head = eq < 0 ? value : value.slice(0, eq);
  const body = eq < 0 ? '1' : value.slice(eq + 1);
  if (MACRO_NAME.test(head) && SAFE_WORD.test(body)) {
    g.out.push(`-D${value}`);
    forgetHeaderDefine(g, head); // the last -D of a name wins, as on a command line
    return;
  }
  if (!MACRO_HEAD.test(head)) return reject(g, flag, `"${head}" is not a macro name`);
  // Harmless in a header, but $ and ` mean nothing in C and are how a command substitution would be
  // smuggled in: dropped, so that the log says so.
  const subst = /[$`]/.exec(body);
  if (subst) return reject(g, flag, `its value contains "${subst[0]}" (shell command substitution), which nvcc would hand to sh`);
  if (/[\r\n\0]/.test(body) || body.endsWith('\\')) return reject(g, flag, 'its value holds a newline or ends in a backslash');
  g.headerDefines.push(`#define ${head} ${body}`);
}

/** nvcc list values: "a,b" (commas inside brackets do not split). */
function splitList(v: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of v) {
    if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      if (cur) out.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur) out.push(cur);
  return out;
}

function noteArch(v: string, real: string[], virt: string[]): void {
  const s = v.trim().replace(/^["'[]+|["'\]]+$/g, '');
  if (/^sm_/i.test(s) || /^lto_/i.test(s)) real.push(s);
  else if (/^compute_/i.test(s)) virt.push(s);
  // native / all / all-major: no arch to report
}

/** "arch=compute_80,code=[compute_80,sm_80]" / "arch=compute_90,code=sm_90" / "code=\"sm_90,compute_90\"". */
function noteGencode(v: string, real: string[], virt: string[]): void {
  const s = v.replace(/["']/g, '');
  const archM = /(?:^|,)arch=([^,\]]+)/.exec(s);
  const codeM = /(?:^|,)code=(\[[^\]]*\]|.*)$/.exec(s);
  if (codeM) {
    const codes = codeM[1]
      .replace(/^\[|\]$/g, '')
      .split(',')
      .map(x => x.trim())
      .filter(x => x && !x.startsWith('arch='));
    for (const c of codes) if (/^sm_/i.test(c)) real.push(c);
  }
  if (archM) virt.push(archM[1].trim());
}
