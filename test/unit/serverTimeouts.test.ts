// The editor's tool time limits (issue 10): unrollLens.toolchain.nvccTimeoutSeconds and
// disassemblerTimeoutSeconds hold every build the server starts (through the toolchain's runner);
// a hanging nvcc or nvdisasm is killed at the setting, and the log, a warning and the file's
// diagnostics say which tool timed out after how long on which file, and which setting raises it.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import type { Connection } from 'vscode-languageserver/node';
import { DEFAULT_SETTINGS, Settings } from '../../src/settings';
import { ServerToolchain } from '../../src/server/toolchain';
import { VariantService } from '../../src/server/variants';
import { DocumentFactsStore } from '../../src/server/facts';
import { analyze } from './helpers';

const SRC = `__global__ void scale(float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] *= 2.0f;
}
`;
const HANG = (name: string) =>
  `#!/bin/sh\ncase "$1" in --version) echo "${name}: NVIDIA (R) Cuda compiler driver, release 13.0, V13.0.48"; exit 0;; esac\nexec sleep 60\n`;

let realNvcc: string | null = null;
try {
  realNvcc = execFileSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' }).trim() || null;
} catch {
  realNvcc = null;
}

function fakeConnection(log: string[], warnings: string[]): Connection {
  const progress = {
    begin: () => undefined,
    report: () => undefined,
    done: () => undefined,
    token: { onCancellationRequested: () => undefined },
  };
  return {
    sendNotification: () => undefined,
    console: { log: (m: string) => log.push(m) },
    window: {
      createWorkDoneProgress: async () => progress,
      showWarningMessage: async (m: string) => {
        warnings.push(m);
        return undefined;
      },
    },
  } as unknown as Connection;
}

async function buildWith(toolchain: Partial<Settings['toolchain']>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-srv-timeout-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const hang = (name: string) => {
    const p = path.join(bin, name);
    fs.writeFileSync(p, HANG(name), { mode: 0o755 });
    return p;
  };
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    toolchain: {
      ...DEFAULT_SETTINGS.toolchain,
      nvccTimeoutSeconds: 1,
      disassemblerTimeoutSeconds: 1,
      ...Object.fromEntries(Object.entries(toolchain).map(([k, v]) => [k, v === 'HANG' ? hang(k.replace(/Path$/, '')) : v])),
    },
  };
  const file = path.join(dir, 'k.cu');
  fs.writeFileSync(file, SRC);
  const uri = pathToFileURL(file).toString();
  const log: string[] = [];
  const warnings: string[] = [];
  const connection = fakeConnection(log, warnings);
  const tc = new ServerToolchain(
    connection,
    () => settings,
    () => [dir],
  );
  tc.setTrusted(true);
  const facts = new DocumentFactsStore(() => undefined);
  const service = new VariantService(
    connection,
    tc,
    facts,
    () => settings,
    () => path.join(dir, 'cache'),
  );
  const analysis = await analyze(SRC, file);
  const started = Date.now();
  await service.buildFile(uri, SRC, analysis);
  return {
    elapsed: Date.now() - started,
    log,
    warnings,
    report: facts.get(uri, SRC)?.file ?? null,
    diagnostics: service.diagnostics(uri, SRC, analysis),
  };
}

describe('server: tool time limits from the settings', () => {
  test('a hanging nvcc is killed after nvccTimeoutSeconds; warning, log and diagnostic name nvcc, the limit and the file', async () => {
    const r = await buildWith({ nvccPath: 'HANG' });
    assert.ok(r.elapsed < 30_000, `killed after about a second, not 300 s (${r.elapsed} ms)`);
    assert.equal(r.report?.status, 'timeout', JSON.stringify(r.report?.failure));
    const msg = /nvcc timed out after 1 s compiling k\.cu and was killed; raise unrollLens\.toolchain\.nvccTimeoutSeconds/;
    assert.ok(
      r.warnings.some(w => msg.test(w)),
      r.warnings.join('\n'),
    );
    assert.ok(
      r.log.some(l => msg.test(l)),
      r.log.join('\n'),
    );
    assert.ok(
      r.diagnostics.some(d => d.code === 'timeout' && msg.test(d.message)),
      JSON.stringify(r.diagnostics),
    );
  });

  test('a hanging nvdisasm is killed after disassemblerTimeoutSeconds; the counts come from the cubin and the note says why', async t => {
    if (!realNvcc) return t.skip('needs nvcc');
    // nvcc itself gets the default limit: a real compile may take over a second on a loaded machine.
    const r = await buildWith({ nvdisasmPath: 'HANG', cuobjdumpPath: 'HANG', nvccTimeoutSeconds: 300 });
    assert.ok(r.elapsed < 60_000, `${r.elapsed} ms`);
    assert.equal(r.report?.status, 'ok');
    assert.equal(r.report?.disassembler, 'elf');
    assert.ok(r.report!.kernels[0].instructions > 0);
    assert.ok(
      r.warnings.some(w =>
        /nvdisasm timed out after 1 s disassembling the SASS of k\.cu and was killed; .*unrollLens\.toolchain\.disassemblerTimeoutSeconds/.test(
          w,
        ),
      ),
      r.warnings.join('\n'),
    );
    assert.match(r.report!.limitation ?? '', /nvdisasm \(.*\) gave no listing \(it timed out\)/);
  });
});
