import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  findCompileCommands,
  flagsFromCompileCommands,
  flagsFromSettings,
  normaliseArch,
  resolveCompileFlags,
  splitCommandLine,
} from '../../src/engine/toolchain/flags';

const DB = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'nvcc', 'compile_commands');
const db = (name: string) => path.join(DB, name);

function tmpTree(files: Record<string, string>): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-flags-')));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

describe('splitCommandLine', () => {
  test('plain words and runs of whitespace', () => {
    assert.deepEqual(splitCommandLine('  nvcc\t-c  a.cu\n-o a.o '), ['nvcc', '-c', 'a.cu', '-o', 'a.o']);
    assert.deepEqual(splitCommandLine(''), []);
    assert.deepEqual(splitCommandLine('   '), []);
  });

  test('double quotes group and allow \\" \\\\ \\$ escapes only', () => {
    assert.deepEqual(splitCommandLine('-DNAME="a b"'), ['-DNAME=a b']);
    assert.deepEqual(splitCommandLine('"-DX=\\"y\\""'), ['-DX="y"']);
    assert.deepEqual(splitCommandLine('"a\\\\b" "c\\nd" "\\$HOME"'), ['a\\b', 'c\\nd', '$HOME']);
  });

  test('single quotes are literal, backslashes included', () => {
    assert.deepEqual(splitCommandLine(`'-DX=\\"y\\"'`), ['-DX=\\"y\\"']);
    assert.deepEqual(splitCommandLine(`'$HOME' '~' '*'`), ['$HOME', '~', '*']);
    assert.deepEqual(splitCommandLine(`-DMSG='it'\\''s'`), ["-DMSG=it's"]);
  });

  test('unquoted backslash escapes the next character; backslash-newline joins', () => {
    assert.deepEqual(splitCommandLine('-I/path\\ with\\ space -DQ=\\"v\\"'), ['-I/path with space', '-DQ="v"']);
    assert.deepEqual(splitCommandLine('nvcc \\\n -c a.cu'), ['nvcc', '-c', 'a.cu']);
    assert.deepEqual(splitCommandLine('a\\'), ['a\\']);
    assert.deepEqual(splitCommandLine('C:\\\\x\\\\y.cu'), ['C:\\x\\y.cu']);
  });

  test('empty quoted words survive; adjacent quoted parts concatenate', () => {
    assert.deepEqual(splitCommandLine(`a '' "" b`), ['a', '', '', 'b']);
    assert.deepEqual(splitCommandLine(`-D"A"'B'C`), ['-DABC']);
  });

  test('no expansion, no shell: $VAR, $(cmd), `cmd`, ; and | are plain text', () => {
    assert.deepEqual(splitCommandLine('echo $(rm -rf x) `id`;ls|cat'), ['echo', '$(rm', '-rf', 'x)', '`id`;ls|cat']);
  });

  test('unterminated quotes run to the end; non-strings give []', () => {
    assert.deepEqual(splitCommandLine('-DA="x y'), ['-DA=x y']);
    assert.deepEqual(splitCommandLine("'abc"), ['abc']);
    assert.deepEqual(splitCommandLine(undefined as unknown as string), []);
  });
});

describe('flagsFromCompileCommands', () => {
  test('CMake entry: drops compiler, -c, -o, -x cu, the input; arch from --generate-code', () => {
    const f = flagsFromCompileCommands(db('cmake.json'), '/src/a.cu')!;
    assert.ok(f);
    assert.deepEqual(f.args, ['-DFOO', '-I/x/include', '-isystem', '/y', '-O3', '-std=c++17']);
    assert.equal(f.arch, 'sm_80');
    assert.equal(f.directory, '/src/build');
    assert.equal(f.source, `compile_commands.json (${db('cmake.json')})`);
    assert.deepEqual(f.warnings, []);
  });

  test('CMake entry with ccache, dependency flags, sm_90a, relaxed constexpr', () => {
    const f = flagsFromCompileCommands(db('cmake.json'), '/src/b.cu')!;
    assert.deepEqual(f.args, [
      '-DKERNEL_EXPORTS',
      '-I/src/include',
      '-I/src/build/generated',
      '-O3',
      '-DNDEBUG',
      '-Xcompiler',
      '-fPIC',
      '--expt-relaxed-constexpr',
      '-std=c++17',
    ]);
    assert.equal(f.arch, 'sm_90a');
  });

  test('-G is dropped with a warning; -g/-O0 kept; -Xptxas -v dropped; -dc becomes -rdc=true', () => {
    const f = flagsFromCompileCommands(db('cmake.json'), '/src/debug.cu')!;
    assert.deepEqual(f.args, ['-I/src/include', '-g', '-O0', '-std=c++17', '-Xcompiler', '-fPIC', '-rdc=true']);
    assert.equal(f.arch, 'sm_86');
    assert.equal(f.warnings.length, 1);
    assert.match(f.warnings[0], /dropped -G/);
  });

  test('make-style entry: relative file and -I resolved against directory; first real sm_ of several -gencode', () => {
    const f = flagsFromCompileCommands(db('make.json'), '/proj/samples/vecadd/vecadd.cu')!;
    // -ccbin is never taken from a compile database (it names the program nvcc runs).
    assert.match(f.warnings.join('\n'), /dropped "-ccbin g\+\+" \(from .*make\.json.*\): the host compiler is never taken/);
    assert.deepEqual(f.args, [
      '-m64',
      '-O3',
      '-lineinfo',
      '-I/proj/common/inc',
      '-I/proj/samples/vecadd/include',
      '-DUSE_X=1',
      '-Xcompiler',
      '-Wall,-Wextra',
      '-Xptxas',
      '--warn-on-spills',
      '-maxrregcount=64',
    ]);
    assert.equal(f.arch, 'sm_70');
    assert.equal(f.directory, '/proj/samples/vecadd');
  });

  test('-arch=native: no arch', () => {
    const f = flagsFromCompileCommands(db('make.json'), '/proj/samples/native/k.cu')!;
    assert.deepEqual(f.args, ['-O2']);
    assert.equal(f.arch, null);
  });

  test('-arch sm_80 (separate), --gpu-architecture=compute_90, -arch=compute_75 -code=sm_75,sm_86; -oFILE, --output-file', () => {
    const k = flagsFromCompileCommands(db('make.json'), '/proj/samples/archs/k.cu')!;
    assert.deepEqual([k.args, k.arch], [[], 'sm_80']);
    const j = flagsFromCompileCommands(db('make.json'), '/proj/samples/archs/j.cu')!;
    assert.deepEqual([j.args, j.arch], [[], 'sm_90']);
    const h = flagsFromCompileCommands(db('make.json'), '/proj/samples/archs/h.cu')!;
    assert.deepEqual([h.args, h.arch], [[], 'sm_75']);
  });

  test('a clang++ CUDA entry keeps only the portable flags, and says so', () => {
    const f = flagsFromCompileCommands(db('make.json'), '/proj/samples/clang/c.cu')!;
    assert.deepEqual(f.args, ['-I/proj/samples/clang/inc', '-DCLANG_BUILD', '-std=c++20']);
    assert.equal(f.arch, 'sm_89');
    assert.match(f.warnings.join('\n'), /uses \/usr\/bin\/clang\+\+, not nvcc/);
    assert.match(f.warnings.join('\n'), /-fgpu-rdc/);
  });

  test('quoting in "command" survives into single arguments', () => {
    // Defines with spaces or quotes go to the generated header (nvcc would hand them to sh).
    const q = flagsFromCompileCommands(db('quoting.json'), '/q/q.cu')!;
    assert.deepEqual(q.args, ['-I/path with space', '-I/quoted dir', '-DEMPTY=']);
    assert.deepEqual(q.headerDefines, ['#define NAME a b', '#define X \\"y\\"', '#define PATH "/opt/my dir"']);
    const r = flagsFromCompileCommands(db('quoting.json'), '/q/r.cu')!;
    assert.deepEqual(r.args, []);
    assert.deepEqual(r.headerDefines, ["#define MSG it's", '#define TAB x\\ty']);
  });

  test('"arguments" wins over "command"; "command" used when alone', () => {
    const a = flagsFromCompileCommands(db('arguments.json'), '/args/a.cu')!;
    assert.deepEqual(a.args, ['-DFROM_ARGUMENTS']);
    assert.deepEqual(a.headerDefines, ['#define SPACE a b']);
    const b = flagsFromCompileCommands(db('arguments.json'), '/args/b.cu')!;
    assert.deepEqual(b.args, ['-DFROM_COMMAND']);
  });

  test('missing entry, entries without a command, malformed or non-array JSON, missing file: null', () => {
    assert.equal(flagsFromCompileCommands(db('cmake.json'), '/src/nothere.cu'), null);
    assert.equal(flagsFromCompileCommands(db('arguments.json'), '/args/nocommand.cu'), null);
    assert.equal(flagsFromCompileCommands(db('arguments.json'), '/args/badargs.cu'), null);
    assert.equal(flagsFromCompileCommands(db('malformed.json'), '/m/m.cu'), null);
    assert.equal(flagsFromCompileCommands(db('not_array.json'), '/m/m.cu'), null);
    assert.equal(flagsFromCompileCommands(db('does-not-exist.json'), '/m/m.cu'), null);
    assert.equal(flagsFromCompileCommands(undefined as unknown as string, undefined as unknown as string), null);
  });

  test('response files: @file (nested) and --options-file, read relative to a relative directory', () => {
    const dbPath = path.join(DB, 'rsp', 'compile_commands.json');
    const build = path.join(DB, 'rsp', 'build');
    const f = flagsFromCompileCommands(dbPath, path.join(DB, 'rsp', 'k.cu'))!;
    assert.ok(f);
    assert.equal(f.directory, build);
    assert.deepEqual(f.args, [
      '-DFROM_RSP',
      `-I${path.join(DB, 'rsp', 'inc')}`,
      '-DNESTED',
      '-I/abs/cmake include',
      '-isystem',
      path.join(DB, 'rsp', 'third_party'),
      '-O3',
    ]);
    assert.deepEqual(f.headerDefines, ['#define QUOTED a b']);
    assert.equal(f.arch, 'sm_90');
  });

  test('an unreadable response file is reported, the rest kept', () => {
    const f = flagsFromCompileCommands(path.join(DB, 'rsp', 'compile_commands.json'), path.join(DB, 'rsp', 'm.cu'))!;
    assert.deepEqual(f.args, ['-DAFTER']);
    assert.match(f.warnings.join('\n'), /missing\.rsp could not be read/);
  });

  test('matches through symlinks (realpath of both sides)', () => {
    const dir = tmpTree({ 'real/k.cu': '', 'compile_commands.json': '' });
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'link'));
    fs.writeFileSync(
      path.join(dir, 'compile_commands.json'),
      JSON.stringify([{ directory: path.join(dir, 'link'), command: 'nvcc -DVIA_LINK -c k.cu -o k.o', file: 'k.cu' }]),
    );
    const f = flagsFromCompileCommands(path.join(dir, 'compile_commands.json'), path.join(dir, 'real', 'k.cu'))!;
    assert.deepEqual(f.args, ['-DVIA_LINK']);
  });

  test('a rewritten database is read again (cache keyed on mtime and size)', () => {
    const dir = tmpTree({ 'k.cu': '' });
    const p = path.join(dir, 'compile_commands.json');
    fs.writeFileSync(p, JSON.stringify([{ directory: dir, command: 'nvcc -DONE -c k.cu', file: 'k.cu' }]));
    assert.deepEqual(flagsFromCompileCommands(p, path.join(dir, 'k.cu'))!.args, ['-DONE']);
    fs.writeFileSync(p, JSON.stringify([{ directory: dir, command: 'nvcc -DTWO_X -c k.cu', file: 'k.cu' }]));
    fs.utimesSync(p, new Date(), new Date(Date.now() + 5000));
    assert.deepEqual(flagsFromCompileCommands(p, path.join(dir, 'k.cu'))!.args, ['-DTWO_X']);
  });
});

describe('findCompileCommands', () => {
  test('nearest first, checking build/ and out/ at each level, stopping at the workspace root', () => {
    const dir = tmpTree({
      'ws/src/deep/k.cu': '',
      'ws/build/compile_commands.json': '[]',
      'compile_commands.json': '[]', // above the root: never found
    });
    const ws = path.join(dir, 'ws');
    assert.equal(findCompileCommands(path.join(ws, 'src/deep/k.cu'), [ws]), path.join(ws, 'build', 'compile_commands.json'));
    fs.mkdirSync(path.join(ws, 'src', 'out'));
    fs.writeFileSync(path.join(ws, 'src', 'out', 'compile_commands.json'), '[]');
    assert.equal(findCompileCommands(path.join(ws, 'src/deep/k.cu'), [ws]), path.join(ws, 'src', 'out', 'compile_commands.json'));
    fs.writeFileSync(path.join(ws, 'src', 'deep', 'compile_commands.json'), '[]');
    assert.equal(findCompileCommands(path.join(ws, 'src/deep/k.cu'), [ws]), path.join(ws, 'src', 'deep', 'compile_commands.json'));
  });

  test("none found; outside every root only the file's own folder is searched", () => {
    const dir = tmpTree({ 'ws/a/k.cu': '', 'other/x.cu': '', 'compile_commands.json': '[]' });
    assert.equal(findCompileCommands(path.join(dir, 'ws/a/k.cu'), [path.join(dir, 'ws')]), null);
    assert.equal(findCompileCommands(path.join(dir, 'other/x.cu'), [path.join(dir, 'ws')]), null);
    assert.equal(findCompileCommands(path.join(dir, 'k.cu'), []), path.join(dir, 'compile_commands.json'));
  });

  test('the deepest of nested roots bounds the walk', () => {
    const dir = tmpTree({ 'outer/inner/k.cu': '', 'outer/compile_commands.json': '[]' });
    const outer = path.join(dir, 'outer');
    const inner = path.join(outer, 'inner');
    assert.equal(findCompileCommands(path.join(inner, 'k.cu'), [outer, inner]), null);
    assert.equal(findCompileCommands(path.join(inner, 'k.cu'), [outer]), path.join(outer, 'compile_commands.json'));
  });
});

describe('flagsFromSettings and resolveCompileFlags', () => {
  test('settings: defines, include paths relative to the root, nvccArgs as given (never split)', () => {
    const f = flagsFromSettings(
      {
        includePaths: ['include', '/abs/inc'],
        defines: ['A', 'B=2', 'C="x y"'],
        nvccArgs: ['-DSPACED=a b', '--expt-relaxed-constexpr', '-Xcompiler', '-fopenmp'],
        arch: 'compute_90',
      },
      '/ws',
    );
    assert.deepEqual(f.args, ['-I/ws/include', '-I/abs/inc', '-DA', '-DB=2', '--expt-relaxed-constexpr', '-Xcompiler', '-fopenmp']);
    assert.deepEqual(f.headerDefines, ['#define C "x y"', '#define SPACED a b']);
    assert.equal(f.arch, 'sm_90');
    assert.equal(f.source, 'settings');
    assert.equal(f.directory, '/ws');
  });

  test('settings: a later -U or plain -D of a name undoes its header define (the header is read after the command line)', () => {
    const f = flagsFromSettings({ nvccArgs: ['-DA="x"', '-UA', '-DB="y"', '-DB=2', '-DC="z"'] }, '/ws');
    assert.deepEqual(f.args, ['-UA', '-DB=2']);
    assert.deepEqual(f.headerDefines, ['#define C "z"']);
  });

  test('settings: arch flags and -G inside nvccArgs are taken out', () => {
    const f = flagsFromSettings({ nvccArgs: ['-arch=sm_80', '-G', '-O3'] }, '/ws');
    assert.deepEqual(f.args, ['-O3']);
    assert.equal(f.arch, 'sm_80');
    assert.match(f.warnings.join('\n'), /dropped -G/);
    assert.equal(flagsFromSettings({ nvccArgs: ['-arch=sm_80'], arch: 'sm_90' }, '/ws').arch, 'sm_90');
    assert.deepEqual(flagsFromSettings({}, '/ws'), { args: [], arch: null, source: 'settings', directory: '/ws', warnings: [] });
  });

  test('normaliseArch', () => {
    assert.deepEqual(
      ['sm_90', 'compute_90', 'SM_80', '90', '9.0', 'sm_90a', 'lto_89', 'native', 'all', '', 'bogus', null].map(v => normaliseArch(v)),
      ['sm_90', 'sm_90', 'sm_80', 'sm_90', 'sm_90', 'sm_90a', 'sm_89', null, null, null, null, null],
    );
  });

  test('compile_commands.json first, settings.nvccArgs appended; settings.arch wins', () => {
    const dir = tmpTree({ 'src/k.cu': '' });
    fs.writeFileSync(
      path.join(dir, 'compile_commands.json'),
      JSON.stringify([{ directory: dir, command: 'nvcc -Iinclude -arch=sm_80 -c src/k.cu -o k.o', file: 'src/k.cu' }]),
    );
    const f = resolveCompileFlags(path.join(dir, 'src/k.cu'), [dir], { nvccArgs: ['--extended-lambda'], includePaths: ['ignored'] });
    assert.deepEqual(f.args, [`-I${dir}/include`, '--extended-lambda']);
    assert.equal(f.arch, 'sm_80');
    assert.equal(f.source, `compile_commands.json (${path.join(dir, 'compile_commands.json')})`);
    assert.equal(resolveCompileFlags(path.join(dir, 'src/k.cu'), [dir], { arch: 'sm_90' }).arch, 'sm_90');
  });

  test('a nearer database without the file falls through to one further up, then to settings', () => {
    const dir = tmpTree({ 'src/k.cu': '', 'src/h.cuh': '' });
    fs.writeFileSync(path.join(dir, 'src', 'compile_commands.json'), '[]');
    fs.writeFileSync(
      path.join(dir, 'compile_commands.json'),
      JSON.stringify([{ directory: dir, command: 'nvcc -DTOP -c src/k.cu', file: 'src/k.cu' }]),
    );
    const k = resolveCompileFlags(path.join(dir, 'src/k.cu'), [dir], {});
    assert.deepEqual(k.args, ['-DTOP']);
    assert.match(k.warnings[0], /has no entry for/);
    const h = resolveCompileFlags(path.join(dir, 'src/h.cuh'), [dir], { defines: ['FALLBACK'] });
    assert.equal(h.source, 'settings');
    assert.deepEqual(h.args, ['-DFALLBACK']);
    assert.equal(h.directory, dir);
    assert.equal(h.warnings.length, 2);
  });

  test('a malformed database is reported and skipped', () => {
    const dir = tmpTree({ 'k.cu': '', 'compile_commands.json': '[{"oops": ' });
    const f = resolveCompileFlags(path.join(dir, 'k.cu'), [dir], { includePaths: ['inc'] });
    assert.equal(f.source, 'settings');
    assert.deepEqual(f.args, [`-I${dir}/inc`]);
    assert.match(f.warnings[0], /could not be read/);
  });

  test('bad inputs never throw', () => {
    assert.doesNotThrow(() =>
      resolveCompileFlags(undefined as unknown as string, undefined as unknown as string[], undefined as unknown as object),
    );
    assert.doesNotThrow(() =>
      flagsFromSettings({ nvccArgs: [1, null, '-O3'] as unknown as string[], includePaths: 'x' as unknown as string[] }, ''),
    );
    assert.doesNotThrow(() => findCompileCommands('', ['']));
  });
});
