// Template arguments as sweep axes: `--param BODY=32,128` on `hot_loop<BODY>` (icache_cliff.cu)
// measures the instantiations the file already has, no -D. The matching helpers; a real static
// sweep with nvcc; the GPU runner on recorded H100 outputs (program and ncu answered from the
// recordings, as in sweepGpu.test.ts), where `{BODY}` in the program arguments gets each
// point's value; the CLI's usage errors.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, lineOf, REPO_ROOT, SAMPLES } from './helpers';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { parseNvidiaSmiXml } from '../../src/engine/toolchain/gpu';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';
import { runSweep, SweepOptions } from '../../src/engine/sweep/sweep';
import { defineArgs, resolveSpace, substituteArgs, templateArgs } from '../../src/engine/sweep/space';
import { isInstantiation, normalizeTemplateValue, notInstantiatedMessage, templateArgsOf } from '../../src/engine/sweep/template';
import { main } from '../../src/cli/main';
import { UnrollFactors } from '../../src/engine/variants/factors';

const REC = path.join(REPO_ROOT, 'test', 'fixtures', 'gpu', 'h100');
const rec = (f: string) => fs.readFileSync(path.join(REC, f), 'utf8');
const CACHE = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-sweep-tpl-'));
const FILE = path.join(SAMPLES, 'icache_cliff.cu');
const TEXT = fs.readFileSync(FILE, 'utf8');
const LOOP = lineOf(TEXT, 'for (int u = 0; u < BODY; ++u)');
const mangled = (body: number) => `_Z8hot_loopILi${body}EEvPKmPmi`;

let real: Toolchain | null = null;
let skip: string | false = false;
before(async () => {
  try {
    real = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
  if (real && !real.nvdisasm) {
    if (process.env.CI) throw new Error('nvdisasm missing: scripts/setup-cuda-tools.sh should have installed it');
    skip = 'no nvdisasm (run npm run setup:cuda-tools)';
  }
});

describe('template axes: names and values', () => {
  test('demangled template arguments, value spellings, instantiation tests, the message', () => {
    assert.deepEqual(templateArgsOf('void hot_loop<2048>(unsigned long const*, unsigned long*, int)', 'hot_loop'), ['2048']);
    assert.deepEqual(templateArgsOf('void ns::tile<8, float, foo<1, 2> >(float*)', 'tile'), ['8', 'float', 'foo<1, 2>']);
    assert.equal(templateArgsOf('void my_hot_loop<3>(int)', 'hot_loop'), null, 'a longer name is another kernel');
    assert.equal(templateArgsOf('hot_loop(int)', 'hot_loop'), null);
    assert.equal(normalizeTemplateValue('32u'), '32');
    assert.equal(normalizeTemplateValue('(int)32'), '32');
    assert.equal(normalizeTemplateValue('-4l'), '-4');
    assert.equal(normalizeTemplateValue('float'), 'float');
    const P = ['BODY'];
    assert.ok(isInstantiation('void hot_loop<32>(unsigned long const*, unsigned long*, int)', 'hot_loop', P, { BODY: '32' }));
    assert.ok(!isInstantiation('void hot_loop<320>(unsigned long const*, unsigned long*, int)', 'hot_loop', P, { BODY: '32' }));
    assert.ok(isInstantiation('void t<8u, 4>(int)', 't', ['A', 'B'], { B: '4' }), 'an unswept parameter takes any value');
    assert.ok(!isInstantiation('void t<8u, 4>(int)', 't', ['A', 'B'], { C: '4' }), 'a name that is no parameter of it');
    const fns = [128, 32, 2048].map(b => `void hot_loop<${b}>(unsigned long const*, unsigned long*, int)`).concat(['mix(int)']);
    assert.equal(
      notInstantiatedMessage('hot_loop', P, { BODY: '4096' }, fns),
      'hot_loop<4096> is not instantiated in the file: instantiations are 32, 128, 2048',
    );
    assert.match(notInstantiatedMessage('t', ['A', 'B'], { A: '3' }, ['void t<1, 2>(int)']), /^t<3, B> is not instantiated .*are 1$/);
    assert.match(notInstantiatedMessage('t', ['A'], { A: '3' }, []), /the cubin holds no instantiation of t/);
  });

  test('template parameters are no -D; {NAME} in program arguments', () => {
    assert.deepEqual(defineArgs({ BODY: '32', BLOCK: '8' }, ['BODY']), ['-DBLOCK=8']);
    assert.deepEqual(templateArgs({ BLOCK: '8' }, ['BODY'], { BODY: '32' }), { BODY: '32' });
    assert.deepEqual(templateArgs({ BODY: '128' }, ['BODY'], { BODY: '32' }), { BODY: '128' });
    assert.deepEqual(substituteArgs(['--body', '{BODY}', '--x={BLOCK}x', '{OTHER}', '{not an id}'], { BODY: '32', BLOCK: '8' }), [
      '--body',
      '32',
      '--x=8x',
      '{OTHER}',
      '{not an id}',
    ]);
  });

  test('the space: a template parameter of the kernel is a template axis, any other name a macro', async () => {
    const a = await analyze(TEXT, FILE);
    const s = resolveSpace(a, FILE, { loops: [LOOP], factors: UnrollFactors.parse('1,4'), params: { BODY: ['32', '128'], BLOCK: ['8'] } });
    assert.equal(s.kernel.name, 'hot_loop');
    assert.deepEqual(
      s.params.map(p => [p.name, p.template]),
      [
        ['BODY', true],
        ['BLOCK', false],
      ],
    );
    assert.deepEqual(s.templateParams, ['BODY']);
    assert.deepEqual(s.macroParams, ['BLOCK']);
    assert.deepEqual(s.defaults(TEXT), { BODY: '32', BLOCK: '8' });
    assert.equal(s.size, 4);
  });
});

async function options(over: Partial<SweepOptions> = {}): Promise<SweepOptions> {
  return {
    file: FILE,
    text: TEXT,
    analysis: await analyze(TEXT, FILE),
    toolchain: real!,
    arch: 'sm_90',
    flags: flagsFromSettings({}, SAMPLES),
    cacheDir: CACHE,
    kernel: 'hot_loop',
    loops: [LOOP],
    factors: UnrollFactors.parse('1,4'),
    params: { BODY: ['32', '128'] },
    now: () => new Date('2026-11-23T10:00:00Z'),
    ...over,
  };
}

describe('static sweep of hot_loop<BODY> with nvcc (loop u: 1, 4 × BODY 32, 128)', () => {
  test('each point measures its instantiation; no -D; different code, different kernels', async t => {
    if (skip) return t.skip(skip);
    const nvccArgs: string[][] = [];
    const runner: ProcessRunner = (cmd, args, o) => {
      if (cmd === real!.nvcc.path) nvccArgs.push(args);
      return real!.runner(cmd, args, o);
    };
    const r = await runSweep(await options({ toolchain: { ...real!, runner } }));
    const v = (id: string) => r.variants.find(x => x.id === id)!;
    assert.deepEqual(
      r.variants.map(x => [x.id, x.status, x.kernel]),
      [
        // the file as written: at the first value of the template axis
        ['as-written', 'ok', mangled(32)],
        [`${LOOP}=1|BODY=32`, 'ok', mangled(32)],
        [`${LOOP}=1|BODY=128`, 'ok', mangled(128)],
        [`${LOOP}=4|BODY=32`, 'ok', mangled(32)],
        [`${LOOP}=4|BODY=128`, 'ok', mangled(128)],
      ],
    );
    assert.equal(v(`${LOOP}=4|BODY=128`).label, '×4 · BODY=128');
    assert.deepEqual(v(`${LOOP}=4|BODY=128`).params, { BODY: '128' });
    assert.deepEqual(r.params, { BODY: ['32', '128'] });
    // different instantiations are different code: nothing identical
    assert.ok(r.variants.every(x => x.identicalTo === null));
    // the rewrite applied to each: rolled, then ×4 (the written full unroll of BODY=32 is bigger)
    assert.equal(v(`${LOOP}=1|BODY=32`).effectiveUnroll[LOOP], 1);
    assert.equal(v(`${LOOP}=4|BODY=128`).effectiveUnroll[LOOP], 4);
    assert.equal(v('as-written').effectiveUnroll[LOOP], 32);
    assert.ok(v('as-written').kernelInstructions! > v(`${LOOP}=4|BODY=32`).kernelInstructions!);
    // BODY never reached nvcc: one build per factor set serves both instantiations
    assert.ok(nvccArgs.length > 0);
    assert.ok(
      nvccArgs.every(a => !a.some(x => x.includes('BODY'))),
      'no -DBODY',
    );
    assert.ok(nvccArgs.length <= 3, `as written, ×1 and ×4 built once each (${nvccArgs.length} builds)`);
  });

  test('full unroll of each instantiation: kernel instruction counts follow BODY', async t => {
    if (skip) return t.skip(skip);
    const r = await runSweep(await options({ factors: UnrollFactors.parse('full') }));
    const n = (b: number) => r.variants.find(x => x.id === `${LOOP}=full|BODY=${b}`)!;
    assert.equal(n(32).kernel, mangled(32));
    assert.equal(n(128).kernel, mangled(128));
    assert.ok(n(128).kernelInstructions! > 3 * n(32).kernelInstructions!, `${n(128).kernelInstructions} vs ${n(32).kernelInstructions}`);
    // full on BODY=32 is the file as written (its #pragma unroll)
    assert.equal(n(32).identicalTo, 'as-written');
  });

  test('two instantiations with the same machine code are found identical (matmul_pragma<U> once U is rewritten away)', async t => {
    if (skip) return t.skip(skip);
    const file = path.join(SAMPLES, 'matmul_unroll.cu');
    const text = fs.readFileSync(file, 'utf8');
    const a = await analyze(text, file);
    const loop = a.kernels.find(x => x.name === 'matmul_pragma')!.loops[0].line;
    const r = await runSweep(
      await options({
        file,
        text,
        analysis: a,
        kernel: 'matmul_pragma',
        loops: [loop],
        factors: UnrollFactors.parse('1'),
        params: { U: ['2', '16'] },
      }),
    );
    // `#pragma unroll U` is the only use of U: with the pragma rewritten to 1 both are the same code
    // (nvdisasm's cubin-wide label numbers do not make them differ)
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.identicalTo]),
      [
        ['as-written', 'ok', null],
        [`${loop}=1|U=2`, 'ok', null],
        [`${loop}=1|U=16`, 'ok', `${loop}=1|U=2`],
      ],
    );
    assert.notEqual(r.variants[1].kernel, r.variants[2].kernel);
  });

  test('a value with no instantiation fails that point, naming the ones there are', async t => {
    if (skip) return t.skip(skip);
    const r = await runSweep(await options({ factors: UnrollFactors.parse('1'), params: { BODY: ['32', '4096'] } }));
    const bad = r.variants.find(x => x.id === `${LOOP}=1|BODY=4096`)!;
    assert.equal(bad.status, 'compile');
    assert.equal(
      bad.message,
      'hot_loop<4096> is not instantiated in the file: instantiations are 32, 64, 128, 256, 384, 512, 768, 1024, 2048',
    );
    assert.equal(bad.kernel, null);
    assert.equal(r.variants.find(x => x.id === `${LOOP}=1|BODY=32`)!.status, 'ok');
    assert.equal(r.complete, true);
  });
});

function result(over: Partial<ProcessResult>): ProcessResult {
  return {
    command: '',
    args: [],
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    timedOut: false,
    cancelled: false,
    durationMs: 1,
    ...over,
  };
}

describe('GPU sweep of hot_loop<BODY> on recorded H100 outputs', () => {
  test('{BODY} in the program arguments gets each point value; each point times its instantiation', async t => {
    if (skip) return t.skip(skip);
    const programs: string[][] = [];
    const profiles: string[][] = [];
    // The recorded run prints one line per body; --body N prints that one (as the program does).
    const stdoutFor = (args: string[]) => {
      const body = args[args.indexOf('--body') + 1];
      return rec('icache_cliff.stdout')
        .split('\n')
        .filter(l => l.startsWith(`kernel=hot_loop<${body}> `))
        .join('\n');
    };
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
        return real!.runner(cmd, args, o);
      if (cmd === '/fake/ncu') {
        const k = args[args.indexOf('--kernel-name') + 1] ?? '';
        const body = /ILi(\d+)E/.exec(k)?.[1] ?? /icache-b(\d+)/.exec(args.join(' '))?.[1];
        if (args[0] === '--import') return result({ stdout: rec(`icache-b${lastBody}-t128.raw.csv`) });
        profiles.push(args);
        lastBody = body!;
        // without --export ncu prints the raw page itself after the run
        const page = args.includes('--csv') && !args.includes('--export') ? rec(`icache-b${body}-t128.raw.csv`) : '';
        return result({ stdout: `${rec(`icache-b${body}-t128.ncu-stdout.txt`)}\n${page}` });
      }
      programs.push([cmd, ...args]);
      return result({ stdout: stdoutFor(args) });
    };
    let lastBody = '32';
    const toolchain: Toolchain = {
      ...real!,
      runner,
      ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
      gpus: parseNvidiaSmiXml(rec('nvidia-smi-q-x.xml')),
    };
    const r = await runSweep(
      await options({
        toolchain,
        factors: UnrollFactors.parse('1'),
        gpu: { args: ['--body', '{BODY}', '--reps', '5'], samples: 5, warmup: 0, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
      }),
    );
    assert.equal(r.static, false);
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status, v.kernel, v.message]),
      [
        ['as-written', 'ok', mangled(32), null],
        [`${LOOP}=1|BODY=32`, 'ok', mangled(32), null],
        [`${LOOP}=1|BODY=128`, 'ok', mangled(128), null],
      ],
    );
    // The plain runs: as written (first value), ×1 at 32, the as-written reference at 128, ×1 at 128.
    assert.deepEqual(
      programs.map(p => p.slice(1)),
      [
        ['--body', '32', '--reps', '5'],
        ['--body', '32', '--reps', '5'],
        ['--body', '128', '--reps', '5'],
        ['--body', '128', '--reps', '5'],
      ],
    );
    assert.equal(programs[2][0], programs[0][0], 'the reference for BODY=128 is the file as written');
    assert.notEqual(programs[3][0], programs[0][0]);
    // ncu times each point's own instantiation, with the point's arguments
    const timed = profiles.map(a => [a[a.indexOf('--kernel-name') + 1], a.slice(a.indexOf('--body'), a.indexOf('--body') + 2).join(' ')]);
    assert.deepEqual(timed, [
      [`regex:^${mangled(32)}$`, '--body 32'],
      [`regex:^${mangled(32)}$`, '--body 32'],
      [`regex:^${mangled(128)}$`, '--body 128'],
    ]);
    for (const v of r.variants) assert.ok(v.medianMs! > 0 && v.samples > 0, v.id);
    assert.ok(r.notes.some(n => n === `timed kernels: ${mangled(32)}, ${mangled(128)}`));
  });

  test("a changed checksum at BODY=128 is caught against the file as written's BODY=128 run", async t => {
    if (skip) return t.skip(skip);
    let run = 0;
    const runner: ProcessRunner = async (cmd, args, o) => {
      if (cmd === real!.nvcc.path || cmd === real!.nvdisasm?.path || cmd === real!.cuobjdump?.path || cmd === real!.cxxfilt?.path)
        return real!.runner(cmd, args, o);
      if (cmd === '/fake/ncu')
        return result({
          stdout:
            args[0] === '--import'
              ? rec('icache-b32-t128.raw.csv')
              : `${rec('icache-b32-t128.ncu-stdout.txt')}\n${args.includes('--csv') && !args.includes('--export') ? rec('icache-b32-t128.raw.csv') : ''}`,
        });
      const body = args[args.indexOf('--body') + 1];
      let line = rec('icache_cliff.stdout')
        .split('\n')
        .find(l => l.startsWith(`kernel=hot_loop<${body}> `))!;
      // the fourth plain run is ×1 at BODY=128: a different checksum than the file as written's
      if (run++ === 3) line = line.replace(/checksum=6\.240294e\+23/, 'checksum=6.240295e+23');
      return result({ stdout: line });
    };
    const toolchain: Toolchain = {
      ...real!,
      runner,
      ncu: { name: 'ncu', path: '/fake/ncu', version: '2025.3.1', source: 'setting' },
      gpus: parseNvidiaSmiXml(rec('nvidia-smi-q-x.xml')),
    };
    const r = await runSweep(
      await options({
        toolchain,
        factors: UnrollFactors.parse('1'),
        gpu: { args: ['--body', '{BODY}'], samples: 5, warmup: 0, clockControl: 'none', timeoutMs: 60_000, launcher: [] },
      }),
    );
    assert.deepEqual(
      r.variants.map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        [`${LOOP}=1|BODY=32`, 'ok'],
        [`${LOOP}=1|BODY=128`, 'correctness'],
      ],
    );
  });
});

describe('unroll-lens sweep: template axes on the command line', () => {
  async function cli(args: string[]) {
    let out = '';
    let err = '';
    const code = await main(args, { out: s => (out += s), err: s => (err += s), isTTY: false });
    return { code, out, err };
  }

  test('usage errors: shell characters in a template value, a {NAME} in --args that no --param sweeps', async () => {
    const bad = await cli(['sweep', FILE, '--static', '--param', 'BODY=32,$(id)']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--param: bad value '\$\(id\)' for BODY/);
    const typo = await cli(['sweep', FILE, '--param', 'BODY=32', '--args', '--body {BDOY}']);
    assert.equal(typo.code, 2);
    assert.match(typo.err, /--args: \{BDOY\} names no --param \(swept: BODY\)/);
    const none = await cli(['sweep', FILE, '--args', '--body {BODY}']);
    assert.equal(none.code, 2);
    assert.match(none.err, /--args: \{BODY\} names no --param: /);
  });

  test('--static --json: a template axis end to end, the missing instantiation in the result', async t => {
    if (skip) return t.skip(skip);
    process.env.XDG_CACHE_HOME = path.join(CACHE, 'cli');
    const r = await cli(['sweep', FILE, '--static', '--json', '--loops', String(LOOP), '--factors', '1', '--param', 'BODY=128,4096']);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as { variants: { id: string; status: string; message?: string; params: Record<string, string> }[] };
    assert.deepEqual(
      j.variants.map(v => [v.id, v.status]),
      [
        ['as-written', 'ok'],
        [`${LOOP}=1|BODY=128`, 'ok'],
        [`${LOOP}=1|BODY=4096`, 'compile'],
      ],
    );
    assert.match(j.variants[2].message!, /^hot_loop<4096> is not instantiated in the file: instantiations are 32, 64, 128/);
    assert.deepEqual(j.variants[1].params, { BODY: '128' });
  });
});
