// Real projects (issue 39): their compile database found as clangd finds it, the build's response
// files read, header variants that survive sibling includes, and the translation unit and
// instantiation that answer the question. Unit tests on small trees, then the CMake fixture of
// test/fixtures/projects/cmake-lib configured with the real cmake and built with the real nvcc
// (skipped without them, outside CI), the source tree and the build folder byte-identical afterwards.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { analyze, REPO_ROOT, useCudaTools } from './helpers';
import { flagsFromCompileCommands, flagsOriginText, resolveCompileFlags, searchCompileDatabases } from '../../src/engine/toolchain/flags';
import { originalOf, planOverlay, writeOverlay } from '../../src/engine/variants/overlay';
import { unitsFromCompileCommands } from '../../src/engine/variants/translationUnit';
import { definitionsOf, externNames, instantiationIn, namesLeadingTo } from '../../src/engine/variants/unitInstantiates';
import { chooseByTripCount, tripFromArguments } from '../../src/engine/variants/tripChoice';
import { main } from '../../src/cli/main';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'projects', 'cmake-lib');

function tree(files: Record<string, string>): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-proj-')));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** Every file's hash and every link's target under `dir`: equal snapshots, an untouched tree. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(p)}`;
      else if (e.isDirectory()) walk(p);
      else out[rel] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

async function cli(args: string[], cwd: string) {
  let out = '';
  let err = '';
  const was = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
    return { code, out, err };
  } finally {
    process.chdir(was);
  }
}

const db = (dir: string, entries: { file: string; command: string }[]) =>
  JSON.stringify(entries.map(e => ({ directory: dir, file: e.file, command: e.command })));

describe('finding the compile database', () => {
  test("the file's folders up to the root, each with build*/ (build/ first) and out/; a link at the root is followed", () => {
    const dir = tree({ 'src/k/a.cu': '', 'build-rel/compile_commands.json': '[]', 'out/compile_commands.json': '[]' });
    fs.mkdirSync(path.join(dir, 'build'));
    fs.writeFileSync(path.join(dir, 'build', 'compile_commands.json'), '[]');
    const s = searchCompileDatabases(path.join(dir, 'src/k/a.cu'), [dir]);
    assert.deepEqual(
      s.found.map(f => path.relative(dir, f)),
      ['build/compile_commands.json', 'build-rel/compile_commands.json', 'out/compile_commands.json'],
    );
    assert.deepEqual(s.looked, [path.join(dir, 'src/k'), path.join(dir, 'src'), dir]);
    // A link at the root into an out-of-tree build: found first there, and not twice.
    const outside = tree({ 'compile_commands.json': '[]' });
    fs.symlinkSync(path.join(outside, 'compile_commands.json'), path.join(dir, 'compile_commands.json'));
    assert.equal(searchCompileDatabases(path.join(dir, 'src/k/a.cu'), [dir]).found[0], path.join(dir, 'compile_commands.json'));
    // A database (or its folder) named by the user comes first of all.
    const named = searchCompileDatabases(path.join(dir, 'src/k/a.cu'), [dir], outside);
    assert.equal(named.found[0], path.join(outside, 'compile_commands.json'));
    assert.equal(named.found.length, 4, 'the link to the same file is not listed twice');
  });

  test("response files inside the build's folder are read through a link at the source root; one elsewhere is not", () => {
    const build = tree({ 'CMakeFiles/lib.dir/includes_CUDA.rsp': '-I"/opt/inc" -isystem=/opt/sys -DFROM_RSP=1' });
    const src = tree({ 'k.cu': '' });
    const elsewhere = tree({ 'evil.rsp': '-DEVIL=1' });
    fs.writeFileSync(
      path.join(build, 'compile_commands.json'),
      db(build, [
        {
          file: path.join(src, 'k.cu'),
          command: `nvcc --options-file CMakeFiles/lib.dir/includes_CUDA.rsp @${path.join(elsewhere, 'evil.rsp')} -c ${path.join(src, 'k.cu')}`,
        },
      ]),
    );
    fs.symlinkSync(path.join(build, 'compile_commands.json'), path.join(src, 'compile_commands.json'));
    const f = resolveCompileFlags(path.join(src, 'k.cu'), [src], {});
    assert.ok(f.args.includes('-I/opt/inc'), f.args.join(' '));
    assert.ok(f.args.includes('-DFROM_RSP=1'), f.args.join(' '));
    assert.ok(!f.args.includes('-DEVIL=1'));
    assert.match(f.warnings.join('\n'), /evil\.rsp .* is outside the build's folders .*; not read/);
    assert.deepEqual(f.database, {
      path: path.join(src, 'compile_commands.json'),
      entry: { file: path.join(src, 'k.cu'), directory: build },
    });
    assert.equal(
      flagsOriginText(f),
      `compile flags from ${path.join(src, 'compile_commands.json')} (a link to ${path.join(build, 'compile_commands.json')}), entry for ${path.join(src, 'k.cu')} (run in ${build})`,
    );
  });

  test('none found: the flags say so and where the search looked; a database without the entry is named', () => {
    const dir = tree({ 'a/k.cu': '', 'build/compile_commands.json': db('/x', [{ file: '/x/other.cu', command: 'nvcc -c other.cu' }]) });
    const f = resolveCompileFlags(path.join(dir, 'a/k.cu'), [dir], {});
    assert.equal(f.database, null);
    assert.deepEqual(f.search?.looked, [path.join(dir, 'a'), dir]);
    const text = flagsOriginText(f, path.join(dir, 'a/k.cu'));
    assert.match(text, /^no compile_commands.json entry for .*k\.cu: looked in .*\/a, .* \(each with its build\*\/ and out\/ folders\)/);
    assert.match(text, /build\/compile_commands.json has no entry for .*k\.cu/);
  });
});

describe('header variants: the overlay shadows the header folder', () => {
  test('siblings are links into the originals, the unit a copy, the header the variant; paths map back', () => {
    const dir = tree({
      'src/k/x.cuh': 'original',
      'src/k/sibling.cuh': '#include "x.cuh"\n',
      'src/k/t.cu': '#include "sibling.cuh"\n',
      'src/k/inst/i.cu': '#include "../x.cuh"\n',
      'src/other.h': '',
    });
    const layout = planOverlay(path.join(dir, 'src/k/t.cu'), path.join(dir, 'src/k/x.cuh'), [`-I${path.join(dir, 'src')}`]);
    assert.equal(layout.root, path.join(dir, 'src'));
    const o = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-ovl-'));
    const before = snapshot(dir);
    writeOverlay(layout, o, Buffer.from('unit copy'), 'variant');
    assert.equal(fs.readFileSync(path.join(o, 'k/x.cuh'), 'utf8'), 'variant');
    assert.equal(fs.readFileSync(path.join(o, 'k/t.cu'), 'utf8'), 'unit copy');
    assert.equal(fs.readlinkSync(path.join(o, 'k/sibling.cuh')), path.join(dir, 'src/k/sibling.cuh'));
    assert.equal(fs.readlinkSync(path.join(o, 'other.h')), path.join(dir, 'src/other.h'));
    // A folder off the spine is a real folder of links: `"../x.cuh"` from inside it reaches the variant.
    assert.ok(fs.lstatSync(path.join(o, 'k/inst')).isDirectory());
    assert.equal(fs.readFileSync(path.join(o, 'k/inst', '..', 'x.cuh'), 'utf8'), 'variant');
    assert.equal(
      originalOf(path.join(o, 'k/sibling.cuh'), layout, o, path.join(dir, 'src/k/t.cu'), path.join(dir, 'src/k/x.cuh')),
      path.join(dir, 'src/k/sibling.cuh'),
    );
    assert.equal(
      originalOf(path.join(o, 'k/t.cu'), layout, o, path.join(dir, 'src/k/t.cu'), path.join(dir, 'src/k/x.cuh')),
      path.join(dir, 'src/k/t.cu'),
    );
    fs.rmSync(o, { recursive: true });
    assert.deepEqual(snapshot(dir), before, 'the project is untouched');
  });
});

describe('the translation unit and the instantiation', () => {
  test('names leading to a function: bodies of functions, classes and macros, to a fixed point', () => {
    const header = definitionsOf(`
template <int N> __launch_bounds__(threads_of(N), 1) static __global__ void kern(float *x) { for (int i = 0; i < N; ++i) x[i] = 0; }
template <int N> void launch(float *x) { kern<N><<<1, 1>>>(x); }
#define DECL_CASE(N) template void launch<N>(float *x)
struct Holder { void go(float *x) { launch<4>(x); } };
namespace ns { void unrelated() {} }
// kern in a comment: "kern" in a string
`);
    const names = namesLeadingTo(['kern'], [header]);
    assert.deepEqual([...names].sort(), ['DECL_CASE', 'Holder', 'kern', 'launch']);
    assert.equal(instantiationIn(definitionsOf('#include "h.cuh"\nDECL_CASE(8);\n'), names), 'explicit');
    assert.equal(instantiationIn(definitionsOf('void f(float *x) { launch<2>(x); }\n'), names), 'implicit');
    assert.equal(instantiationIn(definitionsOf('void f() { unrelated(); } // launch<2>\n'), names), null);
    // A case its header declares extern is instantiated elsewhere: calling it instantiates nothing here.
    const ext = definitionsOf(`${'template <int N> void launch(float *x) { kern<N><<<1, 1>>>(x); }'}
#define DECL_CASE(N) template void launch<N>(float *x)
extern DECL_CASE(4);
`);
    assert.deepEqual([...externNames([ext])].sort(), ['DECL_CASE', 'N', 'float', 'launch', 'template', 'void', 'x'].sort());
    const all = namesLeadingTo(['kern'], [ext]);
    const direct = namesLeadingTo(['kern'], [ext], externNames([ext]));
    assert.equal(instantiationIn(definitionsOf('void run(float *x) { launch<4>(x); }\n'), all, direct), null);
    assert.equal(instantiationIn(definitionsOf('DECL_CASE(4);\n'), all, direct), 'explicit');
  });

  test("a function whose `{` is written in each branch of an #if (ggml's mmf.cuh) keeps its body and the definitions after it", () => {
    const header = definitionsOf(`
template <int N> static __global__ void kern(float *x) { x[0] = N; }
template <int N> void launch(float *x, int n)
#if defined(NEW_PATH)
{ if (n) {
#else
{ if (n > 1) {
#endif
    kern<N><<<1, 1>>>(x);
  } else {
    kern<N><<<2, 1>>>(x);
  }
}
#if 0
void never() {
#else
void after(float *x) { launch<2>(x, 1); }
#endif
#define DECL_CASE(N) template void launch<N>(float *x, int n)
`);
    const names = namesLeadingTo(['kern'], [header]);
    assert.deepEqual([...names].sort(), ['DECL_CASE', 'after', 'kern', 'launch']);
    assert.equal(header.bodies.has('never'), false, 'the dead branch of #if 0 is not read');
    assert.equal(instantiationIn(definitionsOf('DECL_CASE(8);\n'), names), 'explicit');
  });

  test("cases declared extern by a macro that spells `extern` itself (ggml's EXTERN_DECL_FATTN_VEC_CASES): calling them instantiates nothing", () => {
    const header = definitionsOf(`template <int N> void launch(float *x) { kern<N><<<1, 1>>>(x); }
#define DECL_CASE(N) template void launch<N>(float *x)
#define EXTERN_DECL_CASES(N) \\
    extern DECL_CASE(N);      \\
    extern DECL_CASE(N * 2);
EXTERN_DECL_CASES(4)
`);
    assert.ok(externNames([header]).has('launch'));
    const all = namesLeadingTo(['kern'], [header]);
    const direct = namesLeadingTo(['kern'], [header], externNames([header]));
    assert.equal(instantiationIn(definitionsOf('void run(float *x) { launch<4>(x); }\n'), all, direct), null);
    assert.equal(instantiationIn(definitionsOf('DECL_CASE(4);\n'), all, direct), 'explicit');
    // a macro spelling extern that no file-scope line calls declares nothing
    const unused = definitionsOf(`template <int N> void launch(float *x) { kern<N><<<1, 1>>>(x); }
#define DECL_CASE(N) template void launch<N>(float *x)
#define EXTERN_DECL_CASES(N) extern DECL_CASE(N);
`);
    assert.equal(externNames([unused]).has('launch'), false);
  });

  test("trip counts from the instantiation's template arguments", async () => {
    const text = `template <int COLS, int W, bool B>
__global__ void k(float *x) {
  for (int c = 0; c < COLS; ++c) x[c] = 0;
  for (int w = W; w >= 0; w -= 2) x[w] = 0;
  for (int q = 0; q < COLS * W; q += 4) x[q] = 0;
  for (int r = 0; r < x[0]; ++r) x[r] = 0;
}
`;
    const a = await analyze(text, '/p/k.cuh');
    const k = a.kernels[0];
    const trip = (line: number, d: string) =>
      tripFromArguments(
        text,
        k.loops.find(l => l.line === line)!,
        k,
        d,
      );
    assert.equal(trip(3, 'void k<32, 1, true>(float*)'), 32);
    assert.equal(trip(3, 'void k<(ggml_type)2, 1, false>(float*)'), 2);
    assert.equal(trip(4, 'void k<1, 7, false>(float*)'), 4);
    assert.equal(trip(5, 'void k<8, 8, false>(float*)'), 16);
    assert.equal(trip(6, 'void k<8, 8, false>(float*)'), null, 'a run-time bound');
    assert.equal(trip(3, 'void other<8>(float*)'), null, 'another function inlining the loop: not its arguments');
  });

  test('the instantiation: one that runs the loop more than the largest factor, else said with every trip count', () => {
    const c = (demangled: string, instructions: number, trips: number | 'runtime' | null) => ({
      name: demangled,
      demangled,
      instructions,
      trips,
    });
    const many = [c('void k<1>(float*)', 500, 1), c('void k<32>(float*)', 100, 32), c('void k<3>(float*)', 50, 3)];
    const picked = chooseByTripCount(many, [1, 2, 4, 'full'])!;
    assert.equal(picked.chosen.demangled, 'void k<32>(float*)');
    assert.match(picked.note!, /runs 32 times \(more than the largest factor, 4\)/);
    const none = chooseByTripCount(many, [1, 64])!;
    assert.equal(none.chosen.demangled, 'void k<32>(float*)', 'none qualifies: the largest known count');
    assert.match(none.note!, /no instantiation is known to run the loop more than 64 times.*k<1>: 1 time; k<32>: 32 times; k<3>: 3 times/);
    assert.equal(chooseByTripCount([c('void k<1>(float*)', 5, 1)], [4])!.note, null, 'one instantiation: no note');
    // Many (ggml's mmvq.cu holds 271): grouped by trip count.
    const lots = Array.from({ length: 20 }, (_, i) => c(`void k<${i % 4}, ${i}>(float*)`, 10, i % 4 === 0 ? null : i % 4));
    assert.match(
      chooseByTripCount(lots, [8])!.note!,
      /Trip counts .*: 1 time: 5 \(k<1, 1>, …\); 2 times: 5 \(k<2, 2>, …\); 3 times: 5 .*; unknown: 5 \(k<0, 0>, …\)\./,
    );
  });
});

// ---- the CMake fixture, with the real cmake and nvcc -----------------------------------------------

const cuda = useCudaTools(['nvdisasm']);
let cmakeSkip: string | false = false;
/** The fixture configured twice: build/ inside the source, and an out-of-tree build/ beside it with a link at the source root. */
const project = { inTree: '', outOfTree: '', outBuild: '' };

function configure(): void {
  if (cuda.skip) return;
  const has = spawnSync('cmake', ['--version'], { encoding: 'utf8' });
  if (has.status !== 0) {
    if (process.env.CI) throw new Error('cmake missing: .ci/run installs it');
    cmakeSkip = 'no cmake';
    return;
  }
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cmake-')));
  project.inTree = path.join(root, 'intree');
  project.outOfTree = path.join(root, 'src');
  project.outBuild = path.join(root, 'build');
  fs.cpSync(FIXTURE, project.inTree, { recursive: true });
  fs.cpSync(FIXTURE, project.outOfTree, { recursive: true });
  const nvcc = cuda.toolchain!.nvcc.path;
  for (const [src, build] of [
    [project.inTree, path.join(project.inTree, 'build')],
    [project.outOfTree, project.outBuild],
  ]) {
    const r = spawnSync('cmake', ['-S', src, '-B', build, `-DCMAKE_CUDA_COMPILER=${nvcc}`], { encoding: 'utf8' });
    assert.equal(r.status, 0, `cmake configure failed:\n${r.stdout}\n${r.stderr}`);
  }
  fs.symlinkSync(path.join(project.outBuild, 'compile_commands.json'), path.join(project.outOfTree, 'compile_commands.json'));
}

const skipped = () => cuda.skip || cmakeSkip;

describe('a CMake project (real cmake and nvcc)', () => {
  before(configure);

  test('from the source folder: build/ found, the header built through the unit that instantiates its kernel, in the instantiation where the loop runs 32 times', async t => {
    const why = skipped();
    if (why) return t.skip(why);
    const before = snapshot(project.inTree);
    const r = await cli(['sass', 'src/kernels/rowdot.cuh', '--loop', '20', '--factors', '1,2,4', '--json'], project.inTree);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.compileFlags.database, path.join(project.inTree, 'build', 'compile_commands.json'));
    assert.equal(j.compileFlags.entry.file, path.join(project.inTree, 'src/kernels/rows_wide.cu'));
    assert.match(r.err, /building src\/kernels\/rowdot\.cuh through src\/kernels\/rows_wide\.cu/);
    // Built through the overlay although dispatch.cuh includes "rowdot.cuh" from its own folder.
    assert.deepEqual(
      j.loop.variants.map((v: { status: string; effectiveUnroll: number }) => [v.status, v.effectiveUnroll]),
      [
        ['ok', 1],
        ['ok', 2],
        ['ok', 4],
      ],
    );
    assert.match(j.loop.instantiation.demangled, /rows_dot<32, 1>/);
    assert.equal(j.loop.instantiation.trips, 32);
    assert.match(j.loop.notes.join('\n'), /rows_dot<1, 64>: 1 time; rows_dot<32, 1>: 32 times/);
    assert.deepEqual(snapshot(project.inTree), before, 'the source tree and build folder are byte-identical');
  });

  test('out-of-tree build through a link at the source root: includes_CUDA.rsp read, the loop of the wide unit', async t => {
    const why = skipped();
    if (why) return t.skip(why);
    const before = [snapshot(project.outOfTree), snapshot(project.outBuild)];
    const r = await cli(['sass', 'src/kernels/rowdot.cuh', '--loop', '20', '--factors', '1,4', '--json'], project.outOfTree);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /not read/);
    const j = JSON.parse(r.out);
    assert.equal(j.compileFlags.database, path.join(project.outOfTree, 'compile_commands.json'));
    assert.equal(j.compileFlags.entry.directory, project.outBuild);
    assert.deepEqual(
      j.loop.variants.map((v: { effectiveUnroll: number }) => v.effectiveUnroll),
      [1, 4],
    );
    // A .cu file of the project: its own entry, the flags of the build (ROWLIB_BLOCK) reach it.
    const wide = await cli(['sass', 'src/kernels/rows_small.cu'], project.outOfTree);
    assert.equal(wide.code, 0, wide.err);
    assert.match(
      wide.err,
      /compile flags from .*compile_commands\.json \(a link to .*build\/compile_commands\.json\), entry for .*rows_small\.cu/,
    );
    assert.deepEqual([snapshot(project.outOfTree), snapshot(project.outBuild)], before);
  });

  test('without the build: the compile says no database was found and where it looked', async t => {
    const why = skipped();
    if (why) return t.skip(why);
    const bare = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bare-')));
    fs.cpSync(FIXTURE, bare, { recursive: true });
    const r = await cli(['sass', 'src/kernels/rows_small.cu', '--json'], bare);
    assert.equal(r.code, 1, 'ROWLIB_BLOCK comes from the build: #error without it');
    assert.match(
      r.err,
      new RegExp(`no compile_commands.json entry for .*rows_small\\.cu: looked in ${bare}/src/kernels, ${bare}/src, ${bare} `),
    );
    assert.match(r.err, /ROWLIB_BLOCK comes from the build's compile definitions/);
  });

  test("a header's unit: those that instantiate the loop's function first, found before compiling; none names --tu", t => {
    const why = skipped();
    if (why) return t.skip(why);
    const header = path.join(project.outOfTree, 'src/kernels/rowdot.cuh');
    const units = unitsFromCompileCommands(header, [project.outOfTree], { functions: ['rows_dot'] });
    assert.deepEqual(
      units.map(u => [path.basename(u.file), u.instantiates, u.exact]),
      [
        ['rows_wide.cu', 'implicit', true],
        ['rows_small.cu', 'implicit', false],
        ['scale.cu', null, false],
      ],
    );
    // scale.cu includes the header through the build's -I (from the response file), so it is listed, last.
    assert.equal(
      flagsFromCompileCommands(
        path.join(project.outBuild, 'compile_commands.json'),
        path.join(project.outOfTree, 'src/kernels/scale.cu'),
      )!.args.includes(`-I${path.join(project.outOfTree, 'src')}`),
      true,
    );
  });
});
