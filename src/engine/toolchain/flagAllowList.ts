// The allow-list of compiler flags Unroll Lens passes on from a compile database or the settings.
// A flag reaches nvcc only when it is in one of the tables below and its value matches the
// option's grammar; everything else is dropped with a reason. Flags that only choose what nvcc
// produces (mode, output, input language, dependency files, architecture) are replaced by the
// builder's own and dropped silently. The tables list flags that can change the device code
// (preprocessor, language level, optimisation, floating-point and register options) or that a
// project needs for the code to compile at all; none names a file to write, a program to run or
// a plugin to load. Host compiler options (-Xcompiler) and ptxas options (-Xptxas) have their own,
// smaller allow-lists, checked item by item after nvcc's comma split. Whatever passes is emitted in
// one canonical spelling (`name=value` in a single word), so that nvcc reads exactly what was checked.

/** Characters that mean nothing to sh, quoted or not (nvcc runs its tools through sh). */
export const SAFE_WORD = /^[A-Za-z0-9_\-+=.,:/%@]*$/;
/** Paths: nvcc double-quotes them, so a space is safe as well. */
export const SAFE_PATH = /^[A-Za-z0-9_\-+=.,:/%@ ]+$/;
export const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What cleaning does with an nvcc option. */
export type OptionKind =
  | 'replaced' // the builder sets its own (mode, output, input language, dependency files): dropped silently
  | 'refused' // dropped with the spec's reason
  | 'keep' // passed on as `name` or `name=value`
  | 'define'
  | 'undefine'
  | 'include'
  | 'isystem'
  | 'preinclude'
  | 'ccbin'
  | 'arch'
  | 'code'
  | 'gencode'
  | 'xptxas'
  | 'xcompiler'
  | 'rsp'
  | 'device-debug'
  | 'device-c'
  | 'verbose';

export interface OptionSpec {
  kind: OptionKind;
  /** Whether the option takes a value (`-x v`, `-x=v`, or glued for the short names in GLUED). */
  takesValue: boolean;
  /** For 'keep' options with a value: the values accepted. */
  value?: RegExp;
  /** For 'refused': why, for the log. */
  reason?: string;
}

export const NVCC_OPTIONS = new Map<string, OptionSpec>();
function add(spec: OptionSpec, ...names: string[]): void {
  for (const n of names) NVCC_OPTIONS.set(n, spec);
}
/** Each name in nvcc's two spellings, `-name` and `--name`. */
function both(...names: string[]): string[] {
  return names.flatMap(n => [`-${n}`, `--${n}`]);
}

const BOOL = /^(?:true|false)$/;
const COUNT = /^\d{1,6}$/;

// ---- replaced by the builder's own: silently dropped ------------------------------------------
const replaced = (takesValue: boolean): OptionSpec => ({ kind: 'replaced', takesValue });
add(replaced(true), '-o', '--output-file', '-x', '--x', '-MF', '--dependency-output', '-MT', '--dependency-target-name', '-MQ');
add(
  replaced(false),
  ...both('c', 'cubin', 'ptx', 'fatbin', 'E', 'cuda', 'optix-ir', 'ltoir', 'fdevice-syntax-only'),
  '--compile',
  '--preprocess',
  ...['-M', '-MM', '-MD', '-MMD', '-MP'],
  '--generate-dependencies',
  '--generate-nonsystem-dependencies',
  '--generate-dependencies-with-compile',
  '--generate-nonsystem-dependencies-with-compile',
  '--generate-dependency-targets',
);

// ---- passed on: flags that shape the device code, or that the code needs to compile -----------
const keep = (value?: RegExp): OptionSpec => (value ? { kind: 'keep', takesValue: true, value } : { kind: 'keep', takesValue: false });
add(keep(/^(?:c|gnu)\+\+(?:03|11|14|17|20|23|26)$/), ...both('std'));
add(keep(/^[0-3]$/), '-O', '--optimize');
add(keep(/^(?:0|min|mid|max)$/), '-Ofc', '--Ofast-compile');
add(keep(/^(?:on|off)$/), ...both('dopt'));
add(
  keep(BOOL),
  ...both('ftz', 'prec-div', 'prec-sqrt', 'fmad', 'rdc', 'static-global-template-stub', 'device-entity-has-hidden-visibility'),
  '--relocatable-device-code',
  ...both('device-stack-protector'),
);
add(keep(/^\d{1,4}$/), ...both('maxrregcount'));
add(keep(/^(?:legacy|null|per-thread)$/), ...both('default-stream'));
add(keep(/^(?:64|32)$/), '-m', '--machine');
add(keep(COUNT), ...both('ftemplate-depth', 'ftemplate-backtrace-limit'), '-jtd', '--jump-table-density');
add(keep(/^[a-z][a-z-]*(?:,[a-z][a-z-]*)*$/), ...both('Werror'));
add(keep(/^[A-Za-z0-9_-]+(?:,[A-Za-z0-9_-]+)*$/), ...both('diag-error', 'diag-suppress', 'diag-warn'));
add(
  keep(),
  ...both(
    'lineinfo',
    'use_fast_math',
    'expt-relaxed-constexpr',
    'extended-lambda',
    'expt-extended-lambda',
    'm64',
    'noeh',
    'nohdinitlist',
    'nohdmoveforward',
    'allow-unsupported-compiler',
    'extra-device-vectorization',
    'keep-device-functions',
    'restrict',
    'w',
    'Wreorder',
    'Wdefault-stream-launch',
    'Wmissing-launch-bounds',
    'Wext-lambda-captures-this',
    'Wno-deprecated-declarations',
    'Wno-deprecated-gpu-targets',
  ),
  '--generate-line-info',
  '-g',
  '--debug',
  '--no-exceptions',
  '--no-host-device-initializer-list',
  '--no-host-device-move-forward',
  '--disable-warnings',
  '--no-align-double',
);
add({ kind: 'define', takesValue: true }, '-D', '--define-macro');
add({ kind: 'undefine', takesValue: true }, '-U', '--undefine-macro');
add({ kind: 'include', takesValue: true }, '-I', '--include-path');
add({ kind: 'isystem', takesValue: true }, '-isystem', '--system-include');
add({ kind: 'preinclude', takesValue: true }, '-include', '--pre-include');
add({ kind: 'ccbin', takesValue: true }, '-ccbin', '--compiler-bindir');
add({ kind: 'arch', takesValue: true }, '-arch', '--gpu-architecture');
add({ kind: 'code', takesValue: true }, '-code', '--gpu-code');
add({ kind: 'gencode', takesValue: true }, '-gencode', '--generate-code');
add({ kind: 'xptxas', takesValue: true }, '-Xptxas', '--ptxas-options');
add({ kind: 'xcompiler', takesValue: true }, '-Xcompiler', '--compiler-options');
add({ kind: 'rsp', takesValue: true }, '-optf', '--options-file');
add({ kind: 'device-debug', takesValue: false }, '-G', '--device-debug');
add({ kind: 'device-c', takesValue: false }, '-dc', '--device-c');
add({ kind: 'verbose', takesValue: false }, '-v', '--verbose', '-res-usage', '--resource-usage', '-dryrun', '--dryrun');

// ---- refused, with the reason the log gives -----------------------------------------------------
const refuse = (takesValue: boolean, reason: string): OptionSpec => ({ kind: 'refused', takesValue, reason });
const WRITES = 'it makes nvcc write files of its own choosing';
add(refuse(true, WRITES), ...both('keep-dir', 'time', 'fdevice-time-trace'), '-odir', '--output-directory');
add(refuse(false, WRITES), ...both('keep', 'save-temps'), '-objtemp', '--objdir-as-tempdir');
const LINK = 'a link or run option: Unroll Lens compiles one file and links nothing';
add(
  refuse(true, LINK),
  ...['-l', '--library', '-L', '--library-path', '-Xlinker', '--linker-options', '-Xnvlink', '--nvlink-options'],
  ...['-Xarchive', '--archive-options', '-arbin', '--archiver-binary', '-hls', '--host-linker-script'],
  ...both('run-args', 'cudart', 'cudadevrt'),
);
add(
  refuse(false, LINK),
  ...both('dlink', 'link', 'lib', 'run', 'shared', 'nodlink', 'forward-unknown-to-host-linker'),
  '--device-link',
  '-r',
  '--relocatable-link',
  '--no-device-link',
  '-aug-hls',
  '--augment-host-linker-script',
  ...both('lto', 'dlto', 'gen-opt-lto'),
  '--dlink-time-opt',
);
add(
  refuse(true, 'it passes options to a CUDA tool whose options Unroll Lens does not check'),
  ...['-Xcudafe', '-Xcicc', '-Xfatbin', '-Xnvvm'],
);
// CMake adds these to every CUDA command. They would hand options nvcc does not know to the host
// compiler; no unknown option survives cleaning, so dropping them changes nothing and says nothing.
add(replaced(false), ...both('forward-unknown-to-host-compiler', 'forward-unknown-opts'));
add(refuse(true, 'it makes nvcc load libdevice from a folder of the compile command'), '-ldir', '--libdevice-directory');
add(refuse(true, 'it names GPU entry points for a link'), '-e', '--entries');

/** nvcc options that may be written glued to their value (-DFOO, -I/x, -O3). */
export const GLUED = ['-D', '-U', '-I', '-O', '-L', '-l'];

/** Options a non-nvcc compiler line (clang CUDA, g++) shares with nvcc; the rest is not carried over. */
export const PORTABLE = new Set<OptionKind>(['include', 'isystem', 'preinclude', 'define', 'undefine', 'arch']);
export const PORTABLE_KEEP = new Set(['-std', '--std', '-O', '--optimize']);

// ---- -Xcompiler: host compiler options ------------------------------------------------------------
// Only options that change how the host compiler reads or optimises the code; none names a file,
// a program, a plugin or another tool's options (-o, -MF, -B, -wrapper, -fplugin, -specs,
// -fdump-*, -fopt-info*, -fprofile-*, -fstack-usage, -save-temps, -Wl,/-Wa,/-Wp,, -x, @file are all
// absent). Each item stands alone: none takes the next item as its value.

/** -f options accepted as -fNAME and -fno-NAME. */
const HOST_F = new Set([
  'PIC',
  'pic',
  'PIE',
  'pie',
  'strict-aliasing',
  'exceptions',
  'non-call-exceptions',
  'rtti',
  'fast-math',
  'math-errno',
  'finite-math-only',
  'associative-math',
  'reciprocal-math',
  'signed-zeros',
  'trapping-math',
  'rounding-math',
  'cx-limited-range',
  'omit-frame-pointer',
  'permissive',
  'common',
  'visibility-inlines-hidden',
  'stack-protector',
  'stack-protector-strong',
  'stack-protector-all',
  'stack-clash-protection',
  'plt',
  'semantic-interposition',
  'function-sections',
  'data-sections',
  'builtin',
  'signed-char',
  'unsigned-char',
  'wrapv',
  'strict-overflow',
  'gnu-unique',
  'concepts',
  'coroutines',
  'sized-deallocation',
  'char8_t',
  'openmp',
  'openmp-simd',
  'unroll-loops',
  'tree-vectorize',
  'inline',
  'inline-functions',
  'elide-constructors',
  'threadsafe-statics',
  'operator-names',
  'gnu-keywords',
  'ms-extensions',
  'asynchronous-unwind-tables',
  'unwind-tables',
  'strict-enums',
  'delete-null-pointer-checks',
  'diagnostics-show-option',
  'cf-protection',
  'var-tracking',
]);
const HOST_PATTERNS: RegExp[] = [
  /^-O(?:[0-3sgz]|fast)?$/,
  /^-std=(?:c|gnu)\+\+(?:98|03|0x|11|1y|14|1z|17|2a|20|2b|23|2c|26)$/,
  /^-f(?:visibility=(?:default|hidden|internal|protected)|(?:abi-version|max-errors|template-depth|constexpr-depth|constexpr-loop-limit|constexpr-ops-limit)=\d{1,9}|diagnostics-color=(?:auto|always|never)|cf-protection=(?:full|branch|return|none|check)|tls-model=[a-z-]+|fp-contract=(?:fast|on|off))$/,
  // Warnings: -Wall, -Wno-unused, -Werror=format, -Wframe-larger-than=4096; not -Wl, -Wa, -Wp (two letters at least).
  /^-W(?:no-)?(?:error=)?[a-z][a-z0-9+-]+(?:=[a-z0-9-]+)?$/,
  /^-W(?:error)?$/,
  // Machine options: -m64, -mavx2, -mno-red-zone; -march=, -mtune= … with a plain value.
  /^-m(?:no-)?[a-z0-9][a-z0-9.-]*$/,
  /^-m(?:arch|tune|cpu|fpmath|abi|cmodel|prefer-vector-width|stackrealign|tls-dialect)=[A-Za-z0-9_.+-]+$/,
  /^-g(?:[0-3]|gdb|dwarf(?:-[2-5])?)?$/,
  /^-D[A-Za-z_][A-Za-z0-9_]*(?:=[A-Za-z0-9_.+\-:%]*)?$/,
  /^-U[A-Za-z_][A-Za-z0-9_]*$/,
  /^-(?:pthread|fopenmp|w|pedantic|pedantic-errors|ansi|pipe)$/,
];
/** MSVC's spellings (cl.exe is the host compiler only on Windows; gcc would read them as input files). */
const MSVC_PATTERN =
  /^[/-](?:O[12bdgistxy]+|EH[asc]+-?|M[DT]d?|W[0-4]|Wall|WX-?|w[de]\d{4}|wd\d{4}|bigobj|Zc:[A-Za-z_]+-?|std:c\+\+(?:14|17|20|latest)|permissive-?|utf-8|GR-?|fp:(?:fast|precise|strict)|arch:[A-Z0-9]+|openmp|nologo)$/;

/** Why a host compiler option (one item of an -Xcompiler list) is refused; null when it is allowed. */
export function hostOptionRefusal(item: string, platform: NodeJS.Platform = process.platform): string | null {
  if (item === '') return 'an empty item';
  const f = /^-f(?:no-)?(.+)$/.exec(item);
  if (f && HOST_F.has(f[1])) return null;
  if (HOST_PATTERNS.some(re => re.test(item))) return null;
  if (platform === 'win32' && MSVC_PATTERN.test(item)) return null;
  if (
    /^-(?:o|MF|MT|MQ|MD|MMD|B|wrapper|specs|-specs|fplugin|iplugindir|save-temps|dumpbase|dumpdir|aux-info|x)/.test(item) ||
    item.startsWith('@')
  )
    return `${item} names a file or program for the host compiler`;
  if (/^-f(?:dump|opt-info|profile|stack-usage|callgraph-info|save-optimization-record|record|debug-prefix|lto)/.test(item))
    return `${item} makes the host compiler write files`;
  if (/^-W[lap],?/.test(item) || /^-X(?:linker|assembler|preprocessor)/.test(item))
    return `${item} passes options to the linker, assembler or preprocessor`;
  if (/^-(?:I|isystem|iquote|idirafter|include|imacros|L|l)/.test(item)) return `${item} names a path for the host compiler`;
  if (!item.startsWith('-')) return `${JSON.stringify(item)} is not an option (the host compiler would read it as a file)`;
  return `${item} is not on the host compiler allow-list`;
}

// ---- -Xptxas: ptxas options -----------------------------------------------------------------------

interface PtxasSpec {
  /** Canonical long name. */
  name: string;
  value?: RegExp;
}
const PTXAS = new Map<string, PtxasSpec>();
function ptxas(spec: PtxasSpec, ...aliases: string[]): void {
  for (const a of [spec.name, ...aliases]) PTXAS.set(a, spec);
}
const REG_LIMIT = /^(?:archmax|archmin|\d{1,4})$/;
ptxas({ name: '--allow-expensive-optimizations', value: BOOL }, '-allow-expensive-optimizations');
ptxas({ name: '--def-load-cache', value: /^(?:ca|cg|cs|lu|cv)$/ }, '-dlcm');
ptxas({ name: '--def-store-cache', value: /^(?:wb|cg|cs|wt)$/ }, '-dscm');
ptxas({ name: '--force-load-cache', value: /^(?:ca|cg|cs|lu|cv)$/ }, '-flcm');
ptxas({ name: '--force-store-cache', value: /^(?:wb|cg|cs|wt)$/ }, '-fscm');
ptxas({ name: '--maxrregcount', value: REG_LIMIT }, '-maxrregcount');
ptxas({ name: '--device-function-maxrregcount', value: REG_LIMIT }, '-func-maxrregcount');
ptxas({ name: '--device-stack-protector', value: BOOL }, '-device-stack-protector');
ptxas({ name: '--fmad', value: BOOL }, '-fmad');
ptxas({ name: '--minnctapersm', value: /^\d{1,4}$/ }, '-minnctapersm');
ptxas({ name: '--opt-level', value: /^[0-4]$/ }, '-O');
ptxas({ name: '--Ofast-compile', value: /^(?:0|min|mid|max)$/ }, '-Ofc');
ptxas({ name: '--position-independent-code', value: BOOL }, '-pic');
ptxas({ name: '--register-usage-level', value: /^(?:\d|10)$/ }, '-regUsageLevel');
for (const [long, short] of [
  ['--disable-optimizer-constants', '-disable-optimizer-consts'],
  ['--disable-warnings', '-w'],
  ['--dont-merge-basicblocks', '-no-bb-merge'],
  ['--generate-line-info', '-lineinfo'],
  ['--legacy-bar-warp-wide-behavior', '-legacy-bar-warp-wide-behavior'],
  ['--optimize-float-atomics', '-opt-fp-atomics'],
  ['--override-directive-values', '-override-directive-values'],
  ['--return-at-end', '-ret-end'],
  ['--sp-bounds-check', '-sp-bounds-check'],
  ['--suppress-async-bulk-multicast-advisory-warning', '-suppress-async-bulk-multicast-advisory-warning'],
  ['--suppress-double-demote-warning', '-suppress-double-demote-warning'],
  ['--suppress-sparse-mma-advisory-info', '-suppress-sparse-mma-advisory-info'],
  ['--suppress-stack-size-warning', '-suppress-stack-size-warning'],
  ['--suppress-debug-info', '-suppress-debug-info'],
  ['--warn-on-double-precision-use', '-warn-double-usage'],
  ['--warn-on-local-memory-usage', '-warn-lmem-usage'],
  ['--warn-on-spills', '-warn-spills'],
  ['--warning-as-error', '-Werror'],
  ['--make-errors-visible-at-exit', '-make-errors-visible-at-exit'],
])
  ptxas({ name: long }, short);

/** ptxas's verbose flag: the builder passes its own -Xptxas -v, so a repeat is dropped silently. */
export const PTXAS_VERBOSE = new Set(['-v', '--verbose']);

/**
 * One ptxas option (an item of an -Xptxas list) in canonical form (`--name` or `--name=value`),
 * or why it is refused. Values must be written in the same item (`--maxrregcount=32`, `-O3`):
 * nvcc's comma split would otherwise hand ptxas a bare word it reads as an input file.
 */
export function ptxasOption(item: string): { ok: string } | { refused: string } {
  const eq = item.indexOf('=');
  let name = eq < 0 ? item : item.slice(0, eq);
  let value: string | null = eq < 0 ? null : item.slice(eq + 1);
  if (value === null && /^-O\d+$/.test(item)) {
    name = '-O';
    value = item.slice(2);
  }
  if (item.startsWith('@') || /^--?(?:o|output-file|optf|options-file)$/.test(name)) return { refused: `${item} names a file for ptxas` };
  const spec = PTXAS.get(name);
  if (!spec) return { refused: `${item} is not on the ptxas allow-list` };
  if (!spec.value) return value === null ? { ok: spec.name } : { refused: `${name} takes no value` };
  if (value === null) return { refused: `${name} needs its value in the same item (${spec.name}=…)` };
  if (!spec.value.test(value)) return { refused: `${JSON.stringify(value)} is not a value ${name} takes` };
  return { ok: `${spec.name}=${value}` };
}
