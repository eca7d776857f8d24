// The build cache must never answer for a build that would now come out differently: headers nvcc
// read are checked on lookup, damaged outputs are rebuilt, and failures of the machine (signals,
// memory, timeouts) are not stored. Real nvcc where the result matters; a fake one for failures.
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { detectToolchain, Toolchain } from '../../src/engine/toolchain/toolchain';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import { BuildRequest, VariantBuilder } from '../../src/engine/variants/build';
import { parseDepFile } from '../../src/engine/variants/depFile';
import { VariantInspector } from '../../src/engine/variants/inspect';
import { readCubin } from '../../src/engine/sass';
import type { ProcessResult, ProcessRunner } from '../../src/engine/toolchain/process';

let toolchain: Toolchain | null = null;
let skip: string | false = false;

before(async () => {
  try {
    toolchain = await detectToolchain({ probeGpu: false });
  } catch (e) {
    if (process.env.CI) throw e;
    skip = `no nvcc: ${(e as Error).message}`;
  }
});

const KERNEL = `#include "cfg.h"
__global__ void k(float *p) {
#pragma unroll
  for (int i = 0; i < N; i++) p[i * threadIdx.x] += 1.0f;
}
`;

function project(n: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachetest-'));
  fs.writeFileSync(path.join(dir, 'cfg.h'), `#define N ${n}\n`);
  fs.writeFileSync(path.join(dir, 'k.cu'), KERNEL);
  const req: BuildRequest = { key: 'k', source: KERNEL, originalPath: path.join(dir, 'k.cu') };
  return { dir, req, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachetest-c-')) };
}

function builder(dir: string, cacheDir: string, runner?: ProcessRunner) {
  const t = toolchain!;
  return new VariantBuilder({ nvcc: t.nvcc, arch: 'sm_90', flags: flagsFromSettings({}, dir), cacheDir, runner: runner ?? t.runner });
}

function textBytes(cubin: string): number {
  return readCubin(fs.readFileSync(cubin)).textSections.reduce((s, x) => s + x.size, 0);
}

function storedEntries(cacheDir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(d, e.name));
      else if (e.name === 'result.json') out.push(path.join(d, e.name));
    }
  };
  walk(cacheDir);
  return out;
}

describe('build cache', () => {
  test('a changed included header is a miss, and the rebuild has the new code', async t => {
    if (skip) return t.skip(skip);
    const { dir, req, cacheDir } = project(8);
    const b = builder(dir, cacheDir);
    const [first] = await b.buildAll([req]);
    assert.equal(first.status, 'ok', JSON.stringify(first.messages));
    const small = textBytes(first.outputPath!);
    // result.json is sealed (cacheEntry.ts): the entry's own record is its body.
    const sealed = JSON.parse(fs.readFileSync(storedEntries(cacheDir)[0], 'utf8')) as { body: string };
    const stored = JSON.parse(sealed.body) as { cache: { deps: { path: string }[] } };
    assert.ok(
      stored.cache.deps.some(d => d.path === path.join(dir, 'cfg.h')),
      'the entry lists the header nvcc read',
    );
    const [again] = await b.buildAll([req]);
    assert.equal(again.cached, true, 'unchanged: a hit');
    fs.writeFileSync(path.join(dir, 'cfg.h'), '#define N 256\n');
    const [changed] = await b.buildAll([req]);
    assert.equal(changed.cached, false, 'the header changed: the cached answer must not come back');
    assert.equal(b.compiles, 2);
    assert.ok(
      textBytes(changed.outputPath!) > small * 4,
      `256 unrolled adds must be larger than 8 (${textBytes(changed.outputPath!)} vs ${small})`,
    );
    // A fresh builder (another session) sees the same.
    const [later] = await builder(dir, cacheDir).buildAll([req]);
    assert.equal(later.cached, true);
    assert.equal(textBytes(later.outputPath!), textBytes(changed.outputPath!));
  });

  test('a truncated or garbled cached cubin is rebuilt, not read', async t => {
    if (skip) return t.skip(skip);
    const { dir, req, cacheDir } = project(8);
    const b = builder(dir, cacheDir);
    const [first] = await b.buildAll([req]);
    assert.equal(first.status, 'ok');
    const good = fs.readFileSync(first.outputPath!);
    const text = textBytes(first.outputPath!);
    fs.truncateSync(first.outputPath!, Math.floor(good.length / 2));
    const [afterTruncate] = await b.buildAll([req]);
    assert.equal(afterTruncate.cached, false);
    assert.equal(b.compiles, 2);
    assert.equal(textBytes(afterTruncate.outputPath!), text);
    // Same size, different bytes: caught by the hash.
    const garbled = Buffer.from(good);
    garbled.fill(0, 64, 128);
    fs.writeFileSync(afterTruncate.outputPath!, garbled);
    const [afterGarble] = await b.buildAll([req]);
    assert.equal(afterGarble.cached, false);
    assert.equal(b.compiles, 3);
    // (Not byte-identical: -lineinfo records the build folder's name.)
    assert.equal(textBytes(afterGarble.outputPath!), text);
  });

  test('a deterministic compile error is cached; nvcc killed by a signal, OOM, timeout or a spawn failure is not', async t => {
    if (skip) return t.skip(skip);
    const { dir, cacheDir } = project(8);
    const broken: BuildRequest = {
      key: 'broken',
      source: '__global__ void k() { this is not C++; }\n',
      originalPath: path.join(dir, 'k.cu'),
    };
    const real = builder(dir, cacheDir);
    const [err] = await real.buildAll([broken]);
    assert.equal(err.status, 'failed');
    assert.equal(err.failureKind, 'source');
    const [errAgain] = await real.buildAll([broken]);
    assert.equal(errAgain.cached, true, 'a source error stays an error until something changes');

    const outcomes: Partial<ProcessResult>[] = [
      { exitCode: null, signal: 'SIGKILL', stderr: '' },
      { exitCode: 1, signal: null, stderr: "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n" },
      { exitCode: 255, signal: null, stderr: 'ptxas fatal   : Memory allocation failure\n' },
      { exitCode: null, signal: 'SIGTERM', stderr: '', timedOut: true },
      { exitCode: null, signal: null, stderr: '', spawnError: 'EAGAIN' },
    ];
    for (const outcome of outcomes) {
      const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachetest-f-'));
      let calls = 0;
      const fake: ProcessRunner = async (command, args) => {
        calls++;
        return {
          command,
          args,
          exitCode: 1,
          signal: null,
          stdout: '',
          stderr: '',
          timedOut: false,
          cancelled: false,
          durationMs: 1,
          ...outcome,
        };
      };
      const b = builder(dir, cache, fake);
      const req: BuildRequest = { key: 'k', source: KERNEL, originalPath: path.join(dir, 'k.cu') };
      const [r1] = await b.buildAll([req]);
      assert.notEqual(r1.status, 'ok');
      const [r2] = await b.buildAll([req]);
      assert.equal(r2.cached, false, JSON.stringify(outcome));
      assert.equal(calls, 2, `tried again after ${JSON.stringify(outcome)}`);
      assert.deepEqual(storedEntries(cache), []);
    }
  });

  test('parseDepFile: continuations, escaped spaces, $$, relative paths', () => {
    const text = 'out.cubin : a.cu \\\n    /usr/include/x.h \\\n    my\\ dir/h.h price$$.h\n';
    assert.deepEqual(parseDepFile(text, '/w'), ['/w/a.cu', '/usr/include/x.h', '/w/my dir/h.h', '/w/price$.h']);
    assert.deepEqual(parseDepFile('', '/w'), []);
  });
});

describe('disassembly cache', () => {
  test('a damaged cached listing is disassembled again; a different disassembler is a miss', async t => {
    if (skip) return t.skip(skip);
    const { dir, req, cacheDir } = project(8);
    const b = builder(dir, cacheDir);
    const [r] = await b.buildAll([req]);
    let runs = 0;
    const counting: ProcessRunner = (command, args, o) => {
      if (/nvdisasm|cuobjdump/.test(path.basename(command))) runs++;
      return toolchain!.runner(command, args, o);
    };
    const inspector = (tc: Toolchain) => new VariantInspector({ toolchain: { ...tc, runner: counting }, builder: b, arch: 'sm_90' });
    const first = await inspector(toolchain!).disassemble(r.outputPath!);
    assert.ok(first.listing && first.listing.functions.length > 0);
    assert.equal(runs, 1);
    await inspector(toolchain!).disassemble(r.outputPath!);
    assert.equal(runs, 1, 'an intact listing is reused');
    // The listing lives beside the entry (the caller holds a leased link to its cubin).
    const entry = b.cache.entryOf(r.outputPath!);
    const listing = fs.readdirSync(entry).find(n => /^(nvdisasm-c-gi|cuobjdump-sass)-[0-9a-f]{16}\.txt$/.test(n))!;
    const file = path.join(entry, listing);
    fs.truncateSync(file, Math.floor(fs.statSync(file).size / 3));
    const again = await inspector(toolchain!).disassemble(r.outputPath!);
    assert.equal(runs, 2, 'a truncated listing is not trusted');
    assert.equal(again.listing!.functions[0].instructions.length, first.listing!.functions[0].instructions.length);
    const tool = toolchain!.nvdisasm ? 'nvdisasm' : 'cuobjdump';
    const upgraded: Toolchain = { ...toolchain!, [tool]: { ...toolchain![tool]!, version: 'other' } };
    await inspector(upgraded).disassemble(r.outputPath!);
    assert.equal(runs, 3, 'another disassembler version does not reuse the listing');
  });
});

describe('cache key', () => {
  test('a patch release of nvcc, cicc or ptxas installed over the same path (same "13.0") is a different key', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cachetest-tk-'));
    for (const f of ['bin/nvcc', 'bin/ptxas', 'nvvm/bin/cicc']) {
      fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      fs.writeFileSync(path.join(root, f), 'v1');
    }
    const make = () =>
      new VariantBuilder({
        nvcc: { name: 'nvcc', path: path.join(root, 'bin/nvcc'), version: '13.0', source: 'PATH' },
        arch: 'sm_90',
        flags: flagsFromSettings({}, root),
        cacheDir: root,
      });
    const req: BuildRequest = { key: 'k', source: KERNEL, originalPath: path.join(root, 'k.cu') };
    const before = make().hashOf(req);
    assert.equal(make().hashOf(req), before, 'stable while nothing changes');
    fs.writeFileSync(path.join(root, 'nvvm/bin/cicc'), 'v2 (longer)');
    assert.notEqual(make().hashOf(req), before);
  });
});
