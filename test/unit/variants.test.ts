// Real compiles: nvcc builds variants of the bundled samples; cuobjdump/nvdisasm (installed by
// scripts/setup-cuda-tools.sh where the toolkit lacks them) read them back. On CI these tools
// must exist (a missing one fails the test); on a developer machine without nvcc the suite skips.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { analyze, SAMPLES } from './helpers';
import { detectToolchain, Toolchain, chooseArch } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { VariantBuilder } from '../../src/engine/variants/build';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { makeVariantSource, variantSource } from '../../src/engine/variants/rewrite';
import { parseCuobjdumpSass, readCubin, instructionCountFromElf, parseNvdisasm } from '../../src/engine/sass';
import type { ProcessRunner } from '../../src/engine/toolchain/process';
import { UnrollFactors } from '../../src/engine/variants/factors';

let toolchain: Toolchain | null = null;
let skip: string | false = false;

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
  if (toolchain && (!toolchain.cuobjdump || !toolchain.nvdisasm)) {
    if (process.env.CI) throw new Error('cuobjdump/nvdisasm missing: scripts/setup-cuda-tools.sh should have installed them');
    skip = 'no cuobjdump/nvdisasm (run npm run setup:cuda-tools)';
  }
});

function setup(cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cache-')), runner?: ProcessRunner) {
  const t = toolchain!;
  const flags = flagsFromSettings({}, SAMPLES);
  const { arch } = chooseArch('sm_90', null, []);
  const builder = new VariantBuilder({ nvcc: t.nvcc, arch, flags, cacheDir, runner: runner ?? t.runner });
  return { builder, inspector: new VariantInspector({ toolchain: { ...t, runner: runner ?? t.runner }, builder, arch }), cacheDir };
}

async function sample(name: string) {
  const file = path.join(SAMPLES, name);
  const text = fs.readFileSync(file, 'utf8');
  return { file, text, analysis: await analyze(text, file) };
}

describe('variants compiled with nvcc (golden)', () => {
  test('per-kernel instruction counts: ELF .text size / 16 == cuobjdump -sass == nvdisasm, every sample', async t => {
    if (skip) return t.skip(skip);
    const { builder } = setup();
    const files = fs
      .readdirSync(SAMPLES)
      .filter(f => f.endsWith('.cu'))
      .sort();
    const reqs = await Promise.all(
      files.map(async f => {
        const s = await sample(f);
        return { key: f, source: makeVariantSource(s.text, s.analysis, new Map(), s.file), originalPath: s.file };
      }),
    );
    const results = await builder.buildAll(reqs);
    let kernels = 0;
    for (const r of results) {
      assert.equal(r.status, 'ok', `${r.key}: ${r.messages.map(m => m.message).join('\n')}`);
      const elf = readCubin(fs.readFileSync(r.outputPath!));
      const cuob = parseCuobjdumpSass((await toolchain!.runner(toolchain!.cuobjdump!.path, ['-sass', r.outputPath!])).stdout);
      const nvd = parseNvdisasm((await toolchain!.runner(toolchain!.nvdisasm!.path, ['-c', '-gi', r.outputPath!])).stdout);
      assert.ok(elf.textSections.length > 0, r.key);
      for (const s of elf.textSections) {
        const a = cuob.functions.find(f => f.name === s.kernel);
        const b = nvd.functions.find(f => f.name === s.kernel);
        assert.ok(a && b, `${r.key}: ${s.kernel} missing from a listing`);
        assert.equal(a!.instructions.length, instructionCountFromElf(s.size), `${r.key} ${s.kernel}: cuobjdump vs ELF`);
        assert.equal(b!.instructions.length, a!.instructions.length, `${r.key} ${s.kernel}: nvdisasm vs cuobjdump`);
        kernels++;
      }
    }
    assert.ok(kernels >= 30, `only ${kernels} kernels compared`);
  });

  // Hand-checked in the nvdisasm -c -gi listings (FFMA per trip of the loop ending in the
  // backward `@P1 BRA`): as written the main loop holds 16 FFMA (remainder loops ×4 and ×1);
  // unroll 4 holds 4 FFMA and 8 LDG, unroll 1 one FFMA; `#pragma unroll` on this runtime trip
  // count gives the same code as unroll 4.
  test('matmul_basic k loop: effective unroll per factor, identical variants, notes', async t => {
    if (skip) return t.skip(skip);
    const { inspector, builder } = setup();
    const s = await sample('matmul_unroll.cu');
    const line = s.analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    const r = await inspector.inspectLoop(s.file, s.text, s.analysis, line, UnrollFactors.of(['default', 1, 2, 4, 8, 16, 'full']));
    assert.deepEqual(
      r.variants.map(v => [v.factor, v.status, v.effectiveUnroll]),
      [
        ['default', 'ok', 16],
        [1, 'ok', 1],
        [2, 'ok', 2],
        [4, 'ok', 4],
        [8, 'ok', 8],
        [16, 'ok', 16],
        ['full', 'ok', 4],
      ],
    );
    assert.deepEqual(
      r.variants.map(v => v.identicalTo),
      [null, null, null, null, null, null, 4],
    );
    assert.ok(r.variants.every(v => v.kernel === '_Z12matmul_basicPKfS0_Pfi'));
    const instr = r.variants.map(v => v.kernelInstructions!);
    assert.ok(instr[1] < instr[2] && instr[2] < instr[4] && instr[4] < instr[5], `code grows with the factor: ${instr}`);
    assert.ok(
      r.notes.some(n => /full unroll requested but the trip count is not a compile-time constant/.test(n)),
      r.notes.join('\n'),
    );
    assert.equal(r.limitation, null);
    // unchanged re-run: nothing compiles
    const compiles = builder.compiles;
    const again = await inspector.inspectLoop(s.file, s.text, s.analysis, line, UnrollFactors.of(['default', 1, 2, 4, 8, 16, 'full']));
    assert.equal(builder.compiles, compiles);
    assert.ok(again.variants.every(v => v.cached));
    assert.deepEqual(
      again.variants.map(v => v.effectiveUnroll),
      r.variants.map(v => v.effectiveUnroll),
    );
  });

  test('a constant 5-trip shuffle loop: fully unrolled by default; unroll 1 keeps one copy', async t => {
    if (skip) return t.skip(skip);
    const { inspector } = setup();
    const s = await sample('matvec.cu');
    const k = s.analysis.kernels.find(x => x.name === 'matvec_warp_per_row')!;
    const loop = k.loops.find(l => l.tripCount === 5)!;
    const r = await inspector.inspectLoop(s.file, s.text, s.analysis, loop.line, UnrollFactors.of(['default', 1, 'full']));
    assert.deepEqual(
      r.variants.map(v => [v.factor, v.effectiveUnroll, v.fullyUnrolled]),
      [
        ['default', 5, true],
        [1, 1, false],
        ['full', 5, true],
      ],
    );
    assert.equal(r.variants[2].identicalTo, 'default');
  });

  test('file as written: kernels with demangled names, resources, per-loop effective unroll', async t => {
    if (skip) return t.skip(skip);
    const { inspector } = setup();
    const s = await sample('matmul_unroll.cu');
    const r = await inspector.inspectFile(s.file, s.text, s.analysis);
    assert.equal(r.status, 'ok');
    assert.equal(r.disassembler, 'nvdisasm');
    const basic = r.kernels.find(k => k.name === '_Z12matmul_basicPKfS0_Pfi')!;
    assert.equal(basic.demangled, 'matmul_basic(float const*, float const*, float*, int)');
    assert.ok(basic.registers > 0 && basic.instructions > 0 && basic.bytes === basic.instructions * 16);
    assert.ok((basic.classes.FP32 ?? 0) >= 16);
    assert.ok(r.kernels.some(k => k.demangled === 'void matmul_pragma<16>(float const*, float const*, float*, int)'));
    const basicLoop = r.loops.find(l => l.kernel === basic.name)!;
    assert.equal(basicLoop.effectiveUnroll, 16);
  });

  test('nvcc errors point at the original file and line; other variants still build', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-broken-'));
    const file = path.join(dir, 'broken.cu');
    const text =
      '__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; ++i) a[i] = 0;\n}\n__global__ void bad() { undefined_name = 1; }\n';
    fs.writeFileSync(file, text);
    const { builder } = setup();
    const a = await analyze(text, file);
    const good = {
      key: 'good',
      source: makeVariantSource(
        '__global__ void k(float* a) { a[0] = 1; }\n',
        await analyze('__global__ void k(float* a) { a[0] = 1; }\n'),
        new Map(),
        file,
      ),
      originalPath: file,
    };
    const [broken, ok] = await builder.buildAll([
      { key: 'broken', source: makeVariantSource(text, a, new Map([[2, 4]]), file), originalPath: file },
      good,
    ]);
    assert.equal(broken.status, 'failed');
    assert.equal(broken.failureKind, 'source');
    const err = broken.messages.find(m => m.severity === 'error')!;
    assert.equal(err.file, file);
    assert.equal(err.line, 4);
    assert.match(err.message, /undefined_name/);
    assert.equal(ok.status, 'ok');
  });

  test('cancel mid-build: variants report cancelled and no nvcc is left running', async t => {
    if (skip) return t.skip(skip);
    const { builder, cacheDir } = setup();
    const s = await sample('linear_small.cu'); // ~30 s compile: plenty of time to cancel
    const ac = new AbortController();
    const p = builder.buildAll([{ key: 'slow', source: makeVariantSource(s.text, s.analysis, new Map(), s.file), originalPath: s.file }], {
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(), 1500);
    const [r] = await p;
    assert.equal(r.status, 'cancelled');
    await new Promise(res => setTimeout(res, 500));
    const ps = (await toolchain!.runner('ps', ['-eo', 'pid,args'])).stdout
      .split('\n')
      // Only this test's builds: other checkouts may be compiling at the same time.
      .filter(l => /cicc|ptxas|cudafe|nvcc/.test(l) && l.includes(cacheDir));
    assert.deepEqual(ps, []);
  });

  test('program mode: a project compile command template builds the variant (no shell)', async t => {
    if (skip) return t.skip(skip);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-prog-'));
    const file = path.join(dir, 'p.cu');
    const text =
      '#include <cstdio>\n__global__ void k(int* a) { for (int i = 0; i < 4; ++i) a[i] = i; }\nint main() { printf("checksum=1\\n"); return 0; }\n';
    fs.writeFileSync(file, text);
    const a = await analyze(text, file);
    const b = new VariantBuilder({
      mode: 'program',
      nvcc: toolchain!.nvcc,
      arch: 'sm_90',
      flags: flagsFromSettings({}, dir),
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cache-')),
      compileTemplate: [toolchain!.nvcc.path, '-arch={arch}', '-I', '{dir}', '-o', '{output}', '{source}'],
    });
    const [r] = await b.buildAll([{ key: 'u2', source: makeVariantSource(text, a, new Map([[2, 2]]), file), originalPath: file }]);
    assert.equal(r.status, 'ok', r.messages.map(m => m.message).join('\n'));
    assert.ok(fs.statSync(r.outputPath!).mode & 0o111, 'an executable');
    assert.equal(path.basename(r.outputPath!), 'variant');
    const run = await toolchain!.runner(r.outputPath!, []);
    assert.match(run.stdout, /checksum=1/);
  });

  test('a variant whose nvcc fails (simulated) does not stop the others', async t => {
    if (skip) return t.skip(skip);
    const real = toolchain!.runner;
    const failing: ProcessRunner = async (cmd, args, o) => {
      const src = args[args.length - 1];
      if (cmd === toolchain!.nvcc.path && fs.readFileSync(src, 'utf8').includes('unroll 8')) {
        return {
          command: cmd,
          args,
          exitCode: 1,
          signal: null,
          stdout: '',
          stderr: 'ptxas fatal   : Memory allocation failure\n',
          timedOut: false,
          cancelled: false,
          durationMs: 1,
        };
      }
      return real(cmd, args, o);
    };
    const { inspector } = setup(undefined, failing);
    const s = await sample('matmul_unroll.cu');
    const line = s.analysis.kernels.find(k => k.name === 'matmul_basic')!.loops[0].line;
    const r = await inspector.inspectLoop(s.file, s.text, s.analysis, line, UnrollFactors.of([1, 4, 8, 16]));
    assert.deepEqual(
      r.variants.map(v => [v.factor, v.status]),
      [
        [1, 'ok'],
        [4, 'ok'],
        [8, 'failed'],
        [16, 'ok'],
      ],
    );
    assert.equal(r.variants[2].failure?.kind, 'ptxas');
    assert.equal(r.variants[3].effectiveUnroll, 16);
  });
});

// A shadow copy re-encoded from the decoded text changed what nvcc compiled: invalid bytes in a
// string literal, an error in the file, became U+FFFD and the copy compiled.
describe('variants of a file that is not all UTF-8 (nvcc)', () => {
  const src = (literal: Buffer) =>
    Buffer.concat([
      Buffer.from('// caf'),
      Buffer.from([0xe9]),
      Buffer.from(' (Latin-1)\n__global__ void k(float* a, int n) {\n  const char* s = "'),
      literal,
      Buffer.from('";\n#pragma unroll 4\n  for (int i = 0; i < n; ++i) a[i] = s[i % 3];\n}\n'),
    ]);

  test("nvcc's verdict on the file and on its as-written variant agree; variants compile the file's bytes", async t => {
    if (skip) return t.skip(skip);
    const { builder } = setup();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-bytes-nvcc-'));
    const cases = [
      { name: 'bad-literal.cu', bytes: src(Buffer.from([0x6e, 0x61, 0xef, 0x76, 0x65])), ok: false }, // "na\xefve": nvcc rejects it
      { name: 'bad-comment.cu', bytes: src(Buffer.from('abc')), ok: true }, // only the comment is not UTF-8
    ];
    for (const c of cases) {
      const file = path.join(dir, c.name);
      fs.writeFileSync(file, c.bytes);
      const direct = await toolchain!.runner(toolchain!.nvcc.path, [
        '-arch=sm_90',
        '-cubin',
        '-o',
        path.join(dir, `${c.name}.cubin`),
        file,
      ]);
      assert.equal(direct.exitCode === 0, c.ok, `${c.name}: nvcc on the file itself: ${direct.stderr}`);
      const text = fs.readFileSync(file, 'utf8');
      const a = await analyze(text, file);
      const line = a.kernels[0].loops[0].line;
      const [asWritten, unroll2] = await builder.buildAll([
        { key: 'as-written', source: variantSource(text, a, new Map(), file), originalPath: file },
        { key: `L${line}=2`, source: variantSource(text, a, new Map([[line, 2]]), file), originalPath: file },
      ]);
      assert.equal(asWritten.status, c.ok ? 'ok' : 'failed', `${c.name}: ${asWritten.messages.map(m => m.message).join('\n')}`);
      assert.equal(unroll2.status, asWritten.status, c.name);
      if (!c.ok) assert.match(asWritten.messages.map(m => m.message).join('\n'), /invalid multibyte character/);
    }
  });
});
