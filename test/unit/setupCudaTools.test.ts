// scripts/setup-cuda-tools.sh without the network: how it derives the private apt source from a
// machine's apt configuration (--print-source), and how it installs the two tools from a package
// (--deb with a locally built stand-in package).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'setup-cuda-tools.sh');

function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'ul-cuda-tools-'));
}

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

function runScript(args: string[], env: Record<string, string>) {
  const r = spawnSync('bash', [SCRIPT, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '' };
}

function hasCommand(cmd: string): boolean {
  return spawnSync('bash', ['-c', `command -v ${cmd}`]).status === 0;
}

/** The deb822 stanza the script prints for --print-source, as field -> value. */
function printedSource(out: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const start = out.indexOf('# private apt source');
  assert.ok(start >= 0, `no source printed:\n${out}`);
  for (const line of out.slice(start).split('\n').slice(1)) {
    const m = /^([A-Za-z-]+): (.*)$/.exec(line);
    if (m) fields[m[1]] = m[2];
  }
  return fields;
}

describe('setup-cuda-tools.sh: private apt source from the machine configuration', () => {
  const dir = tmpDir();
  const osRelease = write(
    path.join(dir, 'os-release'),
    'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_CODENAME=bookworm\n',
  );
  const parts = path.join(dir, 'sources.list.d');
  write(
    path.join(parts, 'a-off.sources'),
    ['Types: deb', 'URIs: http://off.invalid/debian', 'Suites: bookworm', 'Components: main', 'Enabled: no', ''].join('\n'),
  );
  write(
    path.join(parts, 'b-debian.sources'),
    [
      '# leading comment',
      'Types: deb-src',
      'URIs: http://src-only.invalid/debian',
      'Suites: bookworm',
      'Components: main',
      '',
      'Types: deb',
      '# a comment inside the stanza',
      'URIs: http://sec.invalid/debian-security',
      'Suites: bookworm-security',
      'Components: main',
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      '',
      'Types: deb deb-src',
      'uris: http://mirror-a.invalid/debian',
      '  http://mirror-b.invalid/debian/',
      'Suites: bookworm',
      ' bookworm-updates',
      'Components: main contrib',
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
      '',
    ].join('\n'),
  );
  write(path.join(parts, 'c.list.disabled-by-someone'), 'deb http://disabled.invalid/debian bookworm main\n');
  const emptyList = write(path.join(dir, 'empty.list'), '# nothing here\n');
  const env = { UNROLL_LENS_OS_RELEASE: osRelease, UNROLL_LENS_SOURCES_PARTS: parts, UNROLL_LENS_SOURCES_LIST: emptyList };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('deb822: skips disabled files and entries, deb-src, comments and -security; keeps every URI', () => {
    const r = runScript(['--print-source'], env);
    assert.equal(r.code, 0, r.out + r.err);
    assert.deepEqual(printedSource(r.out), {
      Types: 'deb',
      URIs: 'http://mirror-a.invalid/debian',
      Suites: 'trixie',
      Components: 'non-free',
      'Signed-By': '/usr/share/keyrings/debian-archive-keyring.gpg',
    });
    assert.match(r.out, /candidate: deb \[signed-by=\S+\] http:\/\/mirror-b\.invalid\/debian\/ trixie non-free/);
    assert.doesNotMatch(r.out, /off\.invalid|src-only\.invalid|sec\.invalid|disabled\.invalid/);
  });

  test('one-line sources.list: options in brackets, trailing comment, no Signed-By; read before sources.list.d', () => {
    const list = write(
      path.join(dir, 'sources.list'),
      [
        '# deb http://commented.invalid/debian bookworm main',
        'deb-src http://src.invalid/debian bookworm main',
        'deb http://sec1.invalid/debian-security/ bookworm-security main',
        'deb [ arch=amd64 signed-by=/etc/apt/keyrings/k.gpg ] http://one.invalid/debian bookworm main # mirror',
        'deb http://plain.invalid/debian bookworm main contrib',
        '',
      ].join('\n'),
    );
    const r = runScript(['--print-source'], { ...env, UNROLL_LENS_SOURCES_LIST: list });
    assert.equal(r.code, 0, r.out + r.err);
    const src = printedSource(r.out);
    assert.equal(src.URIs, 'http://one.invalid/debian');
    assert.equal(src['Signed-By'], '/etc/apt/keyrings/k.gpg');
    assert.match(r.out, /candidate: deb http:\/\/plain\.invalid\/debian trixie non-free/);
    assert.doesNotMatch(r.out, /commented\.invalid|src\.invalid|sec1\.invalid/);
  });

  test('an inline (embedded) Signed-By key is written to a key file', () => {
    const p2 = path.join(dir, 'embedded');
    write(
      path.join(p2, 'x.sources'),
      [
        'Types: deb',
        'URIs: http://keyed.invalid/debian',
        'Suites: bookworm',
        'Components: main',
        'Signed-By:',
        ' -----BEGIN PGP PUBLIC KEY BLOCK-----',
        ' .',
        ' mQINBFakeKeyData',
        ' -----END PGP PUBLIC KEY BLOCK-----',
        '',
      ].join('\n'),
    );
    const r = runScript(['--print-source', '--keep-work'], { ...env, UNROLL_LENS_SOURCES_PARTS: p2 });
    assert.equal(r.code, 0, r.out + r.err);
    const key = printedSource(r.out)['Signed-By'];
    assert.match(key, /embedded-key-1\.asc$/);
    assert.equal(
      fs.readFileSync(key, 'utf8'),
      '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBFakeKeyData\n-----END PGP PUBLIC KEY BLOCK-----\n',
    );
    fs.rmSync(path.dirname(key), { recursive: true, force: true });
  });

  test('suite, components and archive can be overridden', () => {
    const r = runScript(['--print-source'], {
      ...env,
      UNROLL_LENS_CUDA_SUITE: 'forky',
      UNROLL_LENS_CUDA_COMPONENTS: 'main contrib non-free',
      UNROLL_LENS_ARCHIVE_URI: 'http://given.invalid/debian',
    });
    assert.equal(r.code, 0, r.out + r.err);
    const src = printedSource(r.out);
    assert.equal(src.URIs, 'http://given.invalid/debian');
    assert.equal(src.Suites, 'forky');
    assert.equal(src.Components, 'main contrib non-free');
    assert.equal(src['Signed-By'], undefined);
  });

  test('fails clearly without a matching entry, and on a machine that is not Debian', () => {
    const none = runScript(['--print-source'], { ...env, UNROLL_LENS_SOURCES_PARTS: path.join(dir, 'missing') });
    assert.equal(none.code, 1);
    assert.match(none.err, /ERROR in step 'derive the Debian archive.*no enabled 'deb' entry for suite 'bookworm'/);
    const ubuntu = write(path.join(dir, 'os-release-ubuntu'), 'ID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n');
    const r = runScript(['--print-source'], { ...env, UNROLL_LENS_OS_RELEASE: ubuntu });
    assert.equal(r.code, 1);
    assert.match(r.err, /not Debian/);
  });
});

describe('setup-cuda-tools.sh: install from a package', { skip: !hasCommand('dpkg-deb') && 'dpkg-deb not available' }, () => {
  test('--deb installs only the two tools into UNROLL_LENS_TOOLS; a second run does nothing', () => {
    const dir = tmpDir();
    const pkg = path.join(dir, 'pkg');
    const fake = (name: string) => `#!/bin/sh\necho "${name}: stand-in"\necho "Cuda compilation tools, release 12.4, V12.4.127"\n`;
    write(
      path.join(pkg, 'DEBIAN', 'control'),
      'Package: fake-cuda-tools\nVersion: 1.0-1\nArchitecture: all\nMaintainer: Test <test@localhost>\nDescription: stand-in\n',
    );
    for (const n of ['cuobjdump', 'nvdisasm']) {
      write(path.join(pkg, 'usr', 'bin', n), fake(n));
      fs.chmodSync(path.join(pkg, 'usr', 'bin', n), 0o755);
    }
    write(path.join(pkg, 'usr', 'bin', 'nvcc'), '#!/bin/sh\nexit 1\n');
    const deb = path.join(dir, 'fake.deb');
    const b = spawnSync('dpkg-deb', ['--root-owner-group', '-b', pkg, deb], { encoding: 'utf8' });
    assert.equal(b.status, 0, b.stderr);

    const tools = path.join(dir, 'tools');
    const env = { UNROLL_LENS_TOOLS: tools };
    const r = runScript(['--deb', deb, '--force', '--no-check'], env);
    assert.equal(r.code, 0, r.out + r.err);
    const bin = path.join(tools, 'cuda-tools', 'bin');
    assert.deepEqual(fs.readdirSync(bin).sort(), ['cuobjdump', 'nvdisasm']);
    assert.match(r.out, /cuobjdump: \S+\/cuda-tools\/bin\/cuobjdump \(release 12\.4, V12\.4\.127\)/);
    assert.match(r.out, /from package fake-cuda-tools 1\.0-1/);
    assert.match(fs.readFileSync(path.join(tools, 'cuda-tools', 'SOURCE.txt'), 'utf8'), /package: fake-cuda-tools 1\.0-1/);
    assert.ok(fs.existsSync(path.join(tools, 'logs', 'cuda-tools-extract.log')));

    const again = runScript([], env);
    assert.equal(again.code, 0, again.out + again.err);
    assert.match(again.out, /already available/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a package without the tools fails with the step and the log', () => {
    const dir = tmpDir();
    const pkg = path.join(dir, 'pkg');
    write(
      path.join(pkg, 'DEBIAN', 'control'),
      'Package: empty-tools\nVersion: 1\nArchitecture: all\nMaintainer: Test <test@localhost>\nDescription: empty\n',
    );
    write(path.join(pkg, 'usr', 'share', 'doc', 'empty-tools', 'README'), 'nothing\n');
    const deb = path.join(dir, 'empty.deb');
    assert.equal(spawnSync('dpkg-deb', ['--root-owner-group', '-b', pkg, deb]).status, 0);
    const r = runScript(['--deb', deb, '--force', '--no-check'], { UNROLL_LENS_TOOLS: path.join(dir, 'tools') });
    assert.equal(r.code, 1);
    assert.match(r.err, /ERROR in step 'find cuobjdump nvdisasm.*no file named cuobjdump in empty\.deb .*cuda-tools-extract\.log/);
    assert.ok(!fs.existsSync(path.join(dir, 'tools', 'cuda-tools')));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
