// A fake nvcc and a project for cache tests: fast and deterministic (the cubin's bytes follow
// the source, the registers come from a REGS comment), so many cases run in seconds.
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { flagsFromSettings } from '../../src/engine/toolchain/flags';
import type { ProcessRunner } from '../../src/engine/toolchain/process';
import { BuildRequest, VariantBuilder } from '../../src/engine/variants/build';

/** Fake nvcc: writes the cubin (its bytes follow the source) and the -MD list, reports registers from a REGS comment. */
export const fakeNvcc: ProcessRunner = async (command, args) => {
  const out = args[args.indexOf('-o') + 1];
  const depFile = args[args.indexOf('-MF') + 1];
  const src = args[args.length - 1];
  const text = fs.readFileSync(src, 'utf8');
  const regs = /REGS (\d+)/.exec(text)?.[1] ?? '8';
  const header = path.join(path.dirname(/#include "(.*)"/.exec(text)?.[1] ?? src), 'cfg.h');
  fs.writeFileSync(out, `FAKE-CUBIN ${crypto.createHash('sha256').update(text).digest('hex')}`);
  fs.writeFileSync(depFile, `${out}: ${src} ${header}\n`);
  const stderr = `ptxas info    : Used ${regs} registers, 360 bytes cmem[0]\n`;
  return { command, args, exitCode: 0, signal: null, stdout: '', stderr, timedOut: false, cancelled: false, durationMs: 1 };
};

export function fakeProject(root: string, regs = 8) {
  const dir = fs.mkdtempSync(path.join(root, 'proj-'));
  fs.writeFileSync(path.join(dir, 'cfg.h'), '#define N 4\n');
  const source = `#include "${path.join(dir, 'cfg.h')}"\n// REGS ${regs}\n__global__ void k(float *p) { p[0] = N; }\n`;
  fs.writeFileSync(path.join(dir, 'k.cu'), source);
  const req: BuildRequest = { key: `k${regs}`, source, originalPath: path.join(dir, 'k.cu') };
  return { dir, req };
}

export function fakeBuilder(projectDir: string, cacheDir: string, cacheMaxBytes = 0): VariantBuilder {
  return new VariantBuilder({
    nvcc: { name: 'nvcc', path: '/opt/fake-cuda/bin/nvcc', version: '13.0', source: 'setting' },
    arch: 'sm_90',
    flags: flagsFromSettings({}, projectDir),
    cacheDir,
    cacheMaxBytes,
    runner: fakeNvcc,
    concurrency: 2,
  });
}
