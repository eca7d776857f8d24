// Issue 39 part 5: `bench --build/--run` through a project's own CMake build, end to end with the
// real cmake and nvcc on test/fixtures/projects/cmake-lib (a header loop, its kernels launched by a
// C++ main through the library). The GPU is a stand-in: a launcher script runs a stand-in `ncu`
// that prints the fixture's recorded program output and the raw pages ncu printed for it on an
// H200 (test/fixtures/gpu/h200/project-rowlib, scripts/device/run-project-bench.sh). Checked:
// variants built in a copy of the tree, the run started there, every instantiation that ran a row,
// a failed build's first errors with the variant named, a variant never launched said so, and the
// source tree and its build folder byte-identical afterwards.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { main } from '../../src/cli/main';
import { REPO_ROOT, useCudaTools } from './helpers';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'projects', 'cmake-lib');
const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h200', 'project-rowlib');
const cuda = useCudaTools([]);
let skip: string | false = false;
let dir = '';
let proj = '';
const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, UL_FAKE_NCU: process.env.UL_FAKE_NCU };

/** Every file's hash under `root` (the build folder included): equal snapshots, an untouched tree. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isSymbolicLink()) out[path.relative(root, p)] = `link:${fs.readlinkSync(p)}`;
      else if (e.isDirectory()) walk(p);
      else out[path.relative(root, p)] = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

/** The stand-in ncu: the program's recorded output, then the recorded raw page of the kernel asked for (none in mode "none"). */
function fakeNcu(calls: string): string {
  return `#!${process.execPath}
const fs = require('fs');
const args = process.argv.slice(2);
if (args.includes('--version')) { console.log('NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.1.0 (build 36398880)'); process.exit(0); }
fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ cwd: process.cwd(), args }) + '\\n');
const rec = f => fs.readFileSync(${JSON.stringify(REC)} + '/' + f, 'utf8');
process.stdout.write(rec('rowapp.stdout'));
const k = args[args.indexOf('--kernel-name') + 1];
if (process.env.UL_FAKE_NCU === 'none') { console.log('==PROF== No kernels were profiled.'); process.exit(0); }
console.log('==PROF== Disconnected from process 1');
process.stdout.write(rec(k.includes('Li32ELi1E') ? 'rowdot.cuh-L20-as-written-1-0.raw.csv' : 'rowdot.cuh-L20-as-written-0-0.raw.csv'));
`;
}

function setUp(): void {
  if (cuda.skip) return void (skip = cuda.skip);
  if (spawnSync('cmake', ['--version']).status !== 0) {
    if (process.env.CI) throw new Error('cmake missing: .ci/run installs it');
    return void (skip = 'no cmake');
  }
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ul-projbench-')));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'ncu'), fakeNcu(path.join(dir, 'calls.txt')), { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'launch'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 });
  proj = path.join(dir, 'proj');
  fs.cpSync(FIXTURE, proj, { recursive: true });
  // the user's own configured build, as a user has it (the SASS side reads its compile_commands.json)
  const r = spawnSync('cmake', ['-S', proj, '-B', path.join(proj, 'build'), `-DCMAKE_CUDA_COMPILER=${cuda.toolchain!.nvcc.path}`], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  process.env.PATH = `${bin}:${process.env.PATH}`;
  process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
}

after(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function bench(build: string, extra: string[] = []) {
  let out = '';
  let err = '';
  const was = process.cwd();
  process.chdir(proj);
  try {
    const code = await main(
      [
        'bench',
        'src/kernels/rowdot.cuh',
        '--loop',
        '20',
        '--factors',
        '4',
        '--build',
        build,
        '--run',
        './build/rowapp 4096 25',
        '--timer',
        'ncu',
        '--clock-control',
        'none',
        '--launcher',
        path.join(dir, 'bin', 'launch'),
        '--json',
        ...extra,
      ],
      { out: s => (out += s), err: s => (err += s), isTTY: false },
    );
    return { code, out, err };
  } finally {
    process.chdir(was);
  }
}

/** The project's build, as a user types it: configure (a no-op once done) and build, from the project root. */
const cmakeBuild = () => `cmake -S . -B build -DCMAKE_CUDA_COMPILER=${cuda.toolchain!.nvcc.path} >/dev/null && cmake --build build`;

describe('bench --build/--run: a CMake project built and run by its own commands (real cmake and nvcc, stand-in GPU)', () => {
  before(setUp);

  test('variants built in a copy of the tree; every instantiation that ran is a row; the tree untouched', async t => {
    if (skip) return t.skip(skip);
    const build = cmakeBuild();
    const before = snapshot(proj);
    const r = await bench(build);
    assert.equal(r.code, 0, r.err + r.out);
    const j = JSON.parse(r.out);
    assert.deepEqual(
      j.variants.map((v: { label: string; status: string }) => [v.label, v.status]),
      [
        ['as-written', 'ok'],
        ['4', 'ok'],
      ],
    );
    // both instantiations of the unit that ran (rows_dot<1,64> and <32,1>), each a table, timed from the recorded pages
    assert.deepEqual(
      j.instantiations.map((x: { kernel: string }) => x.kernel),
      ['_Z8rows_dotILi1ELi64EEvPKfPfi', '_Z8rows_dotILi32ELi1EEvPKfPfi'],
    );
    assert.ok(j.variants.every((v: { samples: number }) => v.samples === 20));
    // the ×4 variant's machine code differs (the SASS side built it through rows_wide.cu)
    const wide = j.instantiations[1].variants;
    assert.notEqual(wide[0].kernelInstructions, wide[1].kernelInstructions);
    // ncu started the run command through the shell, in the copy's root, never in the source tree
    const calls = fs
      .readFileSync(path.join(dir, 'calls.txt'), 'utf8')
      .trim()
      .split('\n')
      .map(l => JSON.parse(l) as { cwd: string; args: string[] });
    const copy = calls[0].cwd;
    assert.ok(copy.startsWith(path.join(dir, 'cache', 'unroll-lens', 'projects')), copy);
    assert.ok(calls.every(c => c.cwd === copy && c.args.slice(-3).join(' ') === '/bin/sh -c ./build/rowapp 4096 25'));
    assert.ok(fs.existsSync(path.join(copy, 'build', 'rowapp')), 'the project was built in the copy');
    assert.match(fs.readFileSync(path.join(copy, 'src/kernels/rowdot.cuh'), 'utf8'), /#pragma unroll 4/, 'the copy holds the last variant');
    assert.match(r.err, /copied to .*projects.*--build and --run run there/);
    assert.match(r.err, /not copied: build\/ \(a CMake build folder/);
    assert.deepEqual(snapshot(proj), before, 'the source tree and its build folder are byte-identical');
  });

  test('--build-copies 2: two variants built at once, each in a copy of its own; the same rows', async t => {
    if (skip) return t.skip(skip);
    fs.rmSync(path.join(dir, 'calls.txt'), { force: true });
    const before = snapshot(proj);
    const r = await bench(cmakeBuild(), ['--build-copies', '2']);
    assert.equal(r.code, 0, r.err + r.out);
    const j = JSON.parse(r.out);
    assert.deepEqual(
      j.variants.map((v: { label: string; status: string }) => [v.label, v.status]),
      [
        ['as-written', 'ok'],
        ['4', 'ok'],
      ],
    );
    const cwds = new Set(
      fs
        .readFileSync(path.join(dir, 'calls.txt'), 'utf8')
        .trim()
        .split('\n')
        .map(l => (JSON.parse(l) as { cwd: string }).cwd),
    );
    assert.equal(cwds.size, 2, `runs in two copies: ${[...cwds].join(', ')}`);
    assert.equal((r.err.match(/copied to /g) ?? []).length, 2);
    assert.ok(
      (j.notes as string[]).some(n => /^built by the project's build command in 2 copies of /.test(n)),
      `the JSON carries the build note: ${JSON.stringify(j.notes)}`,
    );
    assert.deepEqual(snapshot(proj), before);
  });

  test("a variant whose build fails: the build's first error lines with the variant named; the others measured", async t => {
    if (skip) return t.skip(skip);
    const build = `if grep -q 'pragma unroll 4' src/kernels/rowdot.cuh; then echo 'rowdot.cuh(20): error: refused by this test' >&2; exit 3; fi; ${cmakeBuild()}`;
    const before = snapshot(proj);
    const r = await bench(build);
    assert.equal(r.code, 1, r.err + r.out);
    const j = JSON.parse(r.out);
    assert.equal(j.variants[0].status, 'ok');
    assert.equal(j.variants[1].status, 'compile');
    assert.match(
      j.variants[1].message,
      /×4: the build command failed \(exit 3\); its first errors:\nrowdot\.cuh\(20\): error: refused by this test/,
    );
    assert.deepEqual(snapshot(proj), before);
  });

  test('a run that never launches the loop\'s kernels: "built, but … launched none", not a timing', async t => {
    if (skip) return t.skip(skip);
    process.env.UL_FAKE_NCU = 'none';
    try {
      const r = await bench(cmakeBuild());
      assert.equal(r.code, 1);
      const j = JSON.parse(r.out);
      assert.ok(j.variants.every((v: { status: string }) => v.status === 'profile'));
      assert.match(j.variants[0].message, /built, but the run command launched none of the 2 kernels holding the loop/);
    } finally {
      delete process.env.UL_FAKE_NCU;
    }
  });

  test('the default timer: every instantiation the run launched is a row, the one another unit built included (records from the H200)', async t => {
    if (skip) return t.skip(skip);
    const cupti = path.join(REC, 'cupti');
    // the run: the timer records the H200 wrote for the variant the copy holds, and the program's output
    const run = path.join(dir, 'bin', 'replay-rowapp');
    fs.writeFileSync(
      run,
      `#!/bin/sh
p=$(grep 'pragma unroll' src/kernels/rowdot.cuh | tail -1 | tr -d ' ')
case "$p" in "#pragmaunroll1") v=20=1 ;; "#pragmaunroll4") v=20=4 ;; "#pragmaunroll") v=20=full ;; *) v=as-written ;; esac
cat "${cupti}/rowdot-$v-run-0.timer.jsonl" >> "$UNROLL_LENS_TIMER_OUT"
cat "${REC}/rowapp.stdout"
`,
      { mode: 0o755 },
    );
    const before = snapshot(proj);
    let out = '';
    let err = '';
    const was = process.cwd();
    process.chdir(proj);
    try {
      const code = await main(
        [
          'bench',
          'src/kernels/rowdot.cuh',
          '--loop',
          '20',
          '--factors',
          '1,2,4,full',
          '--build',
          cmakeBuild(),
          '--run',
          run,
          '--launcher',
          path.join(dir, 'bin', 'launch'),
          '--json',
        ],
        { out: s => (out += s), err: s => (err += s), isTTY: false },
      );
      assert.equal(code, 0, err + out);
    } finally {
      process.chdir(was);
    }
    const j = JSON.parse(out);
    const recorded = JSON.parse(fs.readFileSync(path.join(cupti, 'fx-cupti.json'), 'utf8'));
    const kernels = (x: { instantiations: { kernel: string }[] }) => x.instantiations.map(i => i.kernel);
    // rows_dot<2, 4> comes from rows_small.cu, a unit the SASS side never built: recognised by name
    assert.deepEqual(kernels(j), ['_Z8rows_dotILi1ELi64EEvPKfPfi', '_Z8rows_dotILi32ELi1EEvPKfPfi', '_Z8rows_dotILi2ELi4EEvPKfPfi']);
    assert.deepEqual(kernels(j), kernels(recorded), 'the rows the H200 run had');
    const small = j.instantiations[2].variants;
    assert.ok(
      small.every((v: { kernelInstructions: number | null }) => v.kernelInstructions === null),
      'its SASS is unknown, not guessed',
    );
    assert.deepEqual(
      j.instantiations.map((x: { variants: { medianMs: number }[] }) => x.variants.map(v => v.medianMs)),
      recorded.instantiations.map((x: { variants: { medianMs: number }[] }) => x.variants.map(v => v.medianMs)),
      'the medians the H200 run reported, from its records',
    );
    // the functions of the project's own executable, listed by cuobjdump on the H200: exactly these three hold the loop
    const fns = fs.readFileSync(path.join(cupti, 'fx-functions.txt'), 'utf8');
    assert.deepEqual(fns.match(/_Z8rows_dot\w+/g), [...kernels(j)].sort());
    assert.deepEqual(snapshot(proj), before);
  });

  test('usage: --build without --run, a command naming the project folder, --check alone', async t => {
    if (skip) return t.skip(skip);
    let err = '';
    const io = { out: () => undefined, err: (s: string) => (err += s), isTTY: false };
    const was = process.cwd();
    process.chdir(proj);
    try {
      assert.equal(await main(['bench', 'src/kernels/rowdot.cuh', '--loop', '20', '--build', 'make'], io), 2);
      assert.match(err, /--build and --run go together/);
      assert.equal(await main(['bench', 'src/kernels/rowdot.cuh', '--loop', '20', '--check', 'true'], io), 2);
      assert.match(err, /--check is for a project's build and run/);
      assert.equal(
        await main(
          [
            'bench',
            'src/kernels/rowdot.cuh',
            '--loop',
            '20',
            '--build',
            `cmake --build ${proj}/build`,
            '--run',
            './build/rowapp',
            '--launcher',
            path.join(dir, 'bin', 'launch'),
          ],
          io,
        ),
        2,
      );
      assert.match(err, /the build command names the project's own folder/);
      // sweep and compare take the same flags, checked the same way
      err = '';
      assert.equal(await main(['sweep', 'src/kernels/rows_wide.cu', '--run', './build/rowapp'], io), 2);
      assert.match(err, /--build and --run go together/);
      err = '';
      assert.equal(await main(['compare', 'src/kernels/scale.cu', '--kernels', 'scale', '--build', ' ', '--run', 'x'], io), 2);
      assert.match(err, /--build needs a command/);
    } finally {
      process.chdir(was);
    }
  });
});
