// Property tests of the compiler-flag allow-list (issue 23): random flag lists from a grammar of
// nvcc spellings, hostile ones included (paths, `=`, commas, glued values, -Xcompiler/-Xptxas
// groups, @files, quotes, shell syntax). For every list: cleaning never throws and is
// deterministic; every surviving argument is in the allow-list grammar (checked here by a walker of
// its own); no surviving argument or -Xcompiler/-Xptxas item can name an output file, a plugin or
// a program; and cleaning the cleaned list again changes nothing (the canonical spelling reads back
// as itself).
//
// fast-check draws the lists (a failure prints the seed, the path and the shrunk list).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import fc from 'fast-check';
import { flagsFromCompileCommands, flagsFromSettings, CompileFlags } from '../../src/engine/toolchain/flags';
import { hostOptionRefusal, MACRO_NAME, NVCC_OPTIONS, ptxasOption, SAFE_PATH, SAFE_WORD } from '../../src/engine/toolchain/flagAllowList';
import { propertyRuns } from './propertyRuns';

type Gen<T> = fc.Arbitrary<T>;
const pick = <T>(...xs: T[]): Gen<T> => fc.constantFrom(...xs);
const oneOf = <T>(...gs: Gen<T>[]): Gen<T> => fc.oneof(...gs);
const listOf = <T>(g: Gen<T>, max: number): Gen<T[]> => fc.array(g, { maxLength: max });
/** Each property has 60 s: a few seconds of runs and shrinking, so anything near it is a hang. */
const params = (numRuns: number, seed: number) => propertyRuns(numRuns, seed, 60_000, 'PROPERTY_SEED');

// ---- the grammar of flag lists --------------------------------------------------------------------

const CANARY = '/tmp/ul-fuzz-canary';
const value: Gen<string> = pick(
  CANARY,
  `${CANARY}/x.so`,
  '../x',
  'inc',
  'a b',
  '$(touch x)',
  '`id`',
  "a'b",
  'a"b',
  '/dev/zero',
  'C:\\x',
  '~/.bashrc',
  '',
  '=',
  ',',
  `@${CANARY}`,
  '3',
  '0',
  '64',
  'true',
  'false',
  'c++17',
  'c++99',
  'sm_90',
  'compute_80',
  'arch=compute_90,code=sm_90',
  'per-thread',
  'X=1',
  'Y',
  'X=a;b',
  '-o',
  '-O3',
  'ca',
);
const nvccName: Gen<string> = oneOf(
  pick(...NVCC_OPTIONS.keys()),
  pick('-Wall', '-fPIC', '--bogus', '-idirafter', '-iquote', '-imacros', '-Xcompiler-fPIC', '-ofile', '-isysteminc', '-m32x', '-'),
);
const hostItem: Gen<string> = oneOf(
  pick('-O2', '-O', '-Ofast', '-fPIC', '-fno-strict-aliasing', '-Wall', '-Wno-unused', '-Werror=format', '-march=native', '-std=c++17'),
  pick('-DX=1', '-UY', '-g3', '-pthread', '-fopenmp', '-mavx2', '-fvisibility=hidden', '/O2', '/EHsc'),
  pick('-o', `-o${CANARY}`, CANARY, `-fopt-info-all=${CANARY}`, '-fdump-tree-all', `-fplugin=${CANARY}.so`, `-B${CANARY}`),
  pick(`-specs=${CANARY}`, '-wrapper', '-save-temps', '-MF', `-Wl`, `-Wa`, `-Wp`, `@${CANARY}`, '-x', 'c++', `-include`, `-I${CANARY}`),
  pick('-fprofile-generate', '-fstack-usage', '-fcallgraph-info', '-frecord-gcc-switches', '-flto', `-iplugindir=${CANARY}`, '-dumpdir'),
  pick('', '$(id)', '-Wall;id', '-D`id`'),
);
const ptxasItem: Gen<string> = oneOf(
  pick('-v', '-O3', '-O9', '--opt-level=2', '--maxrregcount=32', '--maxrregcount', '32', '-dlcm=ca', '-dlcm=zz', '--warn-on-spills'),
  pick('-warn-spills', '--allow-expensive-optimizations=true', '--fmad=false', '-lineinfo', '--bogus', '-g', '--device-debug'),
  pick('-o', CANARY, `--output-file=${CANARY}`, `--options-file=${CANARY}`, `-optf`, `@${CANARY}`, '--input-as-string=x', '-e', 'main'),
);
const group = (items: Gen<string>): Gen<string> => fc.tuple(listOf(items, 4), pick(',', ',', ',,')).map(([xs, sep]) => xs.join(sep));
const XCOMPILER = pick('-Xcompiler', '--compiler-options');
const XPTXAS = pick('-Xptxas', '--ptxas-options');
const flag: Gen<string[]> = oneOf<string[]>(
  nvccName.map(n => [n]), // alone
  fc.tuple(nvccName, value), // separate value
  fc.tuple(nvccName, value).map(([n, v]) => [`${n}=${v}`]), // = value
  fc.tuple(pick('-I', '-D', '-U', '-O', '-L', '-l', '-o', '-G', '-isystem', '-x'), value).map(([n, v]) => [`${n}${v}`]), // glued
  fc.tuple(XCOMPILER, group(hostItem)),
  fc.tuple(XCOMPILER, group(hostItem)).map(([n, g]) => [`${n}=${g}`]),
  fc.tuple(XPTXAS, group(ptxasItem)),
  fc.tuple(XPTXAS, group(ptxasItem)).map(([n, g]) => [`${n}=${g}`]),
  pick('-Xfatbin', '-Xcicc', '-Xnvvm', '-Xcudafe', '-Xlinker', '-Xnvlink').map(n => [n, `--create=${CANARY}`]),
  pick('self.rsp', 'evil.rsp', 'missing.rsp', CANARY).map(f => [`@${f}`]),
  fc.tuple(pick('-optf', '--options-file'), pick('self.rsp', 'evil.rsp', `${CANARY}`)),
  pick('k.cu', 'other.cpp', CANARY, '-', '').map(f => [f]),
);
const flagList: Gen<string[]> = listOf(flag, 12).map(flags => flags.flat());

// ---- an independent walker of the allow-list grammar ------------------------------------------------

/** Options whose canonical form is two words (the value next). */
const TWO_WORD = new Set(['-isystem', '-include', '-ccbin', '-Xcompiler', '-Xptxas']);

/** Throws unless `args` is a sequence of canonical allow-listed flags. */
function assertInGrammar(args: string[], allowCcbin: boolean): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (TWO_WORD.has(a)) {
      const v = args[++i];
      assert.ok(v !== undefined, `${a} without its value`);
      if (a === '-isystem' || a === '-include') assert.match(v, SAFE_PATH);
      else if (a === '-ccbin') assert.ok(allowCcbin && SAFE_WORD.test(v) && v !== '', `-ccbin ${v}`);
      else if (a === '-Xcompiler') for (const item of v.split(',')) assert.equal(hostOptionRefusal(item), null, `host item ${item}`);
      else for (const item of v.split(',')) assert.deepEqual(ptxasOption(item), { ok: item }, `ptxas item ${item}`);
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^-D([^=]*)(?:=(.*))?$/.exec(a))) {
      assert.match(m[1], MACRO_NAME);
      assert.match(m[2] ?? '', SAFE_WORD);
    } else if ((m = /^-U(.*)$/.exec(a))) assert.match(m[1], MACRO_NAME);
    else if ((m = /^-I(.+)$/.exec(a))) assert.match(m[1], SAFE_PATH);
    else if (/^-O[0-3]$/.test(a) || a === '-rdc=true') continue;
    else {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a : a.slice(0, eq);
      const spec = NVCC_OPTIONS.get(name);
      assert.ok(spec && spec.kind === 'keep', `${a} is not an allow-listed nvcc flag`);
      if (spec.value) assert.ok(eq > 0 && spec.value.test(a.slice(eq + 1)), `${a}: value outside ${spec.value}`);
      else assert.equal(eq, -1, `${a} takes no value`);
    }
  }
}

/** An oracle of its own: nothing that can name a file to write, a plugin, a program or another tool's options. */
const NAMES_A_FILE =
  /^(?:-o|--output|-MF|-odir|--output-directory|-keep$|--keep$|-keep-dir|--keep-dir|-time|--time|-fdevice-time-trace|-save-temps|--save-temps|-optf|--options-file|@|-Xfatbin|-Xcicc|-Xnvvm|-Xcudafe|-Xlinker|-Xnvlink|-l(?!ineinfo)|-L|-ldir|-fplugin|-B|-specs|--specs|-wrapper|-fopt-info|-fdump|-fprofile|-fstack-usage|-fcallgraph|-frecord|-flto|-iplugindir|-dumpdir|-W[lap](?:,|$)|-x$|-include$|-I|--create|--input-as-string|-forward-unknown)/;

function assertNamesNoFile(args: string[]): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    assert.match(a, SAFE_PATH, `${a} holds characters a shell would read`);
    if (a === '-Xcompiler' || a === '-Xptxas') {
      for (const item of args[++i].split(',')) {
        assert.ok(item.startsWith('-'), `${a} item ${JSON.stringify(item)} is not an option (a file name for the tool)`);
        assert.doesNotMatch(item, NAMES_A_FILE, `${a} item ${item}`);
      }
    } else if (a === '-isystem' || a === '-include' || a === '-ccbin') i++;
    else if (!/^-I/.test(a)) assert.doesNotMatch(a, NAMES_A_FILE);
  }
}

// ---- the properties -------------------------------------------------------------------------------

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-fuzz-')));
fs.writeFileSync(path.join(root, 'self.rsp'), '-DSELF @self.rsp -optf self.rsp');
fs.writeFileSync(path.join(root, 'evil.rsp'), `-Xcompiler -o${CANARY} "-Xfatbin" --create=${CANARY} -Xptxas=--output-file=${CANARY} -O3`);
fs.writeFileSync(path.join(root, 'k.cu'), '');

function checkCleaned(f: CompileFlags, again: () => CompileFlags, allowCcbin: boolean): void {
  assert.ok(Array.isArray(f.args) && f.args.every(a => typeof a === 'string'));
  assertInGrammar(f.args, allowCcbin);
  assertNamesNoFile(f.args);
  assert.deepEqual(again(), f, 'the same input gives the same result');
  const twice = flagsFromSettings({ nvccArgs: f.args }, root);
  assert.deepEqual(twice.args, f.args, 'the canonical spelling reads back as itself');
  assert.deepEqual(
    twice.warnings.filter(w => /dropped/.test(w)),
    [],
  );
}

describe('flag allow-list properties (fast-check flag lists)', () => {
  test('settings: 2,500 lists — never throws, deterministic, only allow-listed canonical flags, none names a file, a fixpoint', () => {
    fc.assert(
      fc.property(flagList, argv => {
        const run = () => flagsFromSettings({ nvccArgs: argv, includePaths: argv.slice(0, 2), defines: argv.slice(2, 4) }, root);
        checkCleaned(run(), run, true);
      }),
      params(2500, 0x23f1a9),
    );
  });

  test('compile_commands.json: 1,000 quoted command lines (shell quoting, response files inside the folder) — the same properties, no -ccbin', () => {
    const quotes: ((w: string) => string)[] = [
      w => w,
      w => `'${w.replace(/'/g, `'\\''`)}'`,
      w => `"${w.replace(/(["\\$`])/g, '\\$1')}"`,
      w => w.replace(/([^A-Za-z0-9_\-=.,/@:])/g, '\\$1'),
    ];
    // Each word with a quoting style of its own (an index, so the counterexample prints readably).
    const command: Gen<string> = listOf(flag, 12)
      .chain(flags => fc.tuple(...flags.flat().map(w => fc.tuple(fc.constant(w), fc.nat(quotes.length - 1)))))
      .map(ws => ['nvcc', ...ws.map(([w, q]) => quotes[q](w)), '-c', 'k.cu', '-o', 'k.o'].join(' '));
    let n = 0;
    fc.assert(
      fc.property(command, cmd => {
        const db = path.join(root, `cc${n++}.json`);
        fs.writeFileSync(db, JSON.stringify([{ directory: root, file: 'k.cu', command: cmd }]));
        try {
          const f = flagsFromCompileCommands(db, path.join(root, 'k.cu'));
          assert.ok(f, 'an entry for k.cu');
          checkCleaned(f, () => flagsFromCompileCommands(db, path.join(root, 'k.cu'))!, false);
        } finally {
          fs.rmSync(db);
        }
      }),
      params(1000, 0x5eed23),
    );
  });

  test('-Xcompiler and -Xptxas groups: 500 lists of items — kept items are exactly the allowed ones, in order', () => {
    fc.assert(
      fc.property(listOf(hostItem, 6), listOf(ptxasItem, 6), (host, ptx) => {
        const f = flagsFromSettings({ nvccArgs: ['-Xcompiler', host.join(','), '-Xptxas', ptx.join(',')] }, root);
        const wantHost = host.filter(i => i !== '' && SAFE_WORD.test(i) && hostOptionRefusal(i) === null);
        const wantPtx = ptx
          .filter(i => i !== '' && i !== '-v' && SAFE_WORD.test(i))
          .map(i => ptxasOption(i))
          .flatMap(o => ('ok' in o ? [o.ok] : []));
        // An item with a comma of its own never occurs here: nvcc would split it too.
        assert.deepEqual(f.args, [
          ...(wantHost.length ? ['-Xcompiler', wantHost.join(',')] : []),
          ...(wantPtx.length ? ['-Xptxas', wantPtx.join(',')] : []),
        ]);
        // One warning per group with refused items, naming each of them.
        const refusedHost = host.filter(i => i !== '' && !wantHost.includes(i));
        const refusedPtx = ptx.filter(i => i !== '' && i !== '-v' && !(SAFE_WORD.test(i) && 'ok' in ptxasOption(i)));
        const warned = f.warnings.filter(w => /dropped/.test(w));
        assert.equal(warned.length, (refusedHost.length ? 1 : 0) + (refusedPtx.length ? 1 : 0), warned.join('\n'));
        for (const i of [...refusedHost, ...refusedPtx])
          assert.ok(
            warned.some(w => w.includes(i)),
            `${i} named in ${warned.join('\n')}`,
          );
      }),
      params(500, 0x7a11),
    );
  });
});
