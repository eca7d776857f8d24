// Workspace Trust on the server: until the client says the workspace is trusted, the toolchain
// is never looked for (finding it runs `nvcc --version`, whose path a repository's settings may
// name) and every build or run request fails with the Restricted Mode message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from 'vscode-languageserver/node';
import { DEFAULT_SETTINGS } from '../../src/protocol';
import { RESTRICTED_MODE, ServerToolchain, UntrustedWorkspaceError } from '../../src/server/toolchain';
import type { Toolchain } from '../../src/engine/toolchain/toolchain';

function fakeConnection(sent: unknown[]): Connection {
  return {
    sendNotification: (_t: unknown, p: unknown) => {
      sent.push(p);
    },
    console: { log: () => undefined },
  } as unknown as Connection;
}

test('untrusted: no tool is looked for, the status bar and the error say Restricted Mode', async () => {
  const sent: unknown[] = [];
  // A tool path that would fail loudly if anything tried to run it.
  const settings = { ...DEFAULT_SETTINGS, toolchain: { ...DEFAULT_SETTINGS.toolchain, nvccPath: '/nonexistent/evil-nvcc' } };
  const t = new ServerToolchain(
    fakeConnection(sent),
    () => settings,
    () => [],
  );
  assert.equal(t.trusted, false, 'untrusted until the client says otherwise');
  await assert.rejects(t.tools(), (e: unknown) => e instanceof UntrustedWorkspaceError && e.message.includes('Restricted Mode'));
  assert.deepEqual(sent.at(-1), { summary: null, problem: `${RESTRICTED_MODE}.`, building: null });
});

test('trusted: the toolchain is looked for (found, or missing with its own message)', async () => {
  const t = new ServerToolchain(
    fakeConnection([]),
    () => DEFAULT_SETTINGS,
    () => [],
  );
  t.setTrusted(true);
  const outcome = await t.tools().then(
    tc => tc,
    (e: unknown) => e,
  );
  assert.ok(!(outcome instanceof UntrustedWorkspaceError), 'a trusted workspace is not in Restricted Mode');
});

test('the arch setting: a value the flags log as "ignored" is not used for builds; a valid one is', () => {
  const log: string[] = [];
  const connection = {
    sendNotification: () => undefined,
    console: { log: (m: string) => log.push(m) },
  } as unknown as Connection;
  const noGpu = { gpus: [] } as unknown as Toolchain;
  // readSettings refuses such values; this is the server's own guard if one gets through.
  let arch = 'bogus';
  const t = new ServerToolchain(
    connection,
    () => ({ ...DEFAULT_SETTINGS, arch }),
    () => [],
  );
  const flags = t.flagsFor('/nonexistent/k.cu');
  assert.ok(
    log.some(l => /arch setting "bogus" is not an sm_XX architecture; ignored/.test(l)),
    log.join('\n'),
  );
  assert.equal(t.archFor(noGpu, flags.arch), 'sm_90', 'ignored, as logged: the default arch');
  arch = 'sm_80';
  log.length = 0;
  assert.equal(t.flagsFor('/nonexistent/k.cu').arch, 'sm_80');
  assert.equal(t.archFor(noGpu, null), 'sm_80');
  assert.deepEqual(
    log.filter(l => /arch/.test(l)),
    [],
  );
});
