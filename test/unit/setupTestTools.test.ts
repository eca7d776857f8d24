// Issue 27: scripts/setup-test-tools.sh for a user without root, run for real as `nobody`
// (setpriv) when these tests run as root (CI): it must never try a root-only step (sudo, apt-get
// install, dpkg -i, apt's system lists or lock) and must end cleanly with a manifest that says there
// is no browser and why. Stubs for sudo, su, apt-get and dpkg first on PATH record every call
// (apt-get and dpkg then run for real). UNROLL_LENS_SETUP_ONLY=browser stops after the browser
// step: no code-server install here. Skipped when not root or without setpriv.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './helpers';

const has = (cmd: string) => spawnSync('bash', ['-c', `command -v ${cmd}`]).status === 0;
const uid = (what: string) => Number(spawnSync('id', [what, 'nobody'], { encoding: 'utf8' }).stdout.trim());
const why =
  process.getuid?.() !== 0
    ? 'runs the script as nobody, which needs root'
    : !has('setpriv')
      ? 'no setpriv (util-linux) to run the script as nobody'
      : Number.isNaN(uid('-u')) || spawnSync('id', ['nobody']).status !== 0
        ? 'no user nobody'
        : null;

describe('setup-test-tools.sh without root (as nobody)', { skip: why ?? false }, () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ul-noroot-'));
  after(() => fs.rmSync(base, { recursive: true, force: true }));
  const [u, g] = [uid('-u'), uid('-g')];
  // The script is copied where nobody can read it (the checkout may be in root's home).
  const scripts = path.join(base, 'repo', 'scripts');
  fs.mkdirSync(scripts, { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, 'scripts', 'setup-test-tools.sh'), path.join(scripts, 'setup-test-tools.sh'));
  const calls = path.join(base, 'calls.log');
  const stubs = path.join(base, 'bin');
  fs.mkdirSync(stubs);
  const realAptGet = spawnSync('bash', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).stdout.trim();
  const realDpkg = spawnSync('bash', ['-c', 'command -v dpkg'], { encoding: 'utf8' }).stdout.trim();
  const stub = (name: string, then: string) =>
    fs.writeFileSync(path.join(stubs, name), `#!/bin/sh\necho "${name} $*" >> ${calls}\n${then}\n`, { mode: 0o755 });
  stub('sudo', 'exit 1');
  stub('su', 'exit 1');
  stub('pkexec', 'exit 1');
  // (no retries: the archive is unreachable on purpose, see below)
  if (realAptGet) stub('apt-get', `exec ${realAptGet} -o Acquire::Retries=0 "$@"`);
  if (realDpkg) stub('dpkg', `exec ${realDpkg} "$@"`);
  fs.writeFileSync(calls, '');
  fs.chmodSync(base, 0o755);
  for (const d of ['home', 'tools']) {
    fs.mkdirSync(path.join(base, d));
    fs.chownSync(path.join(base, d), u, g);
  }
  fs.chownSync(calls, u, g);
  const tools = path.join(base, 'tools');

  function runAsNobody(env: Record<string, string>) {
    const r = spawnSync('setpriv', [`--reuid=${u}`, `--regid=${g}`, '--clear-groups', 'bash', path.join(scripts, 'setup-test-tools.sh')], {
      encoding: 'utf8',
      timeout: 120_000,
      // a user's environment, not root's: PATH with the stubs first and node's folder
      env: {
        PATH: `${stubs}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
        HOME: path.join(base, 'home'),
        LANG: 'C.UTF-8',
        UNROLL_LENS_TOOLS: tools,
        UNROLL_LENS_SETUP_ONLY: 'browser',
        ...env,
      },
    });
    const manifest = JSON.parse(fs.readFileSync(path.join(tools, 'test-tools.json'), 'utf8'));
    return { code: r.status, out: `${r.stdout}${r.stderr}`, manifest, calls: fs.readFileSync(calls, 'utf8') };
  }

  /** What a user without root must never run. */
  function assertNoRootSteps(log: string) {
    for (const line of log.split('\n').filter(Boolean)) {
      assert.doesNotMatch(line, /^(sudo|su|pkexec) /, `tried to become root: ${line}`);
      assert.doesNotMatch(line, /^dpkg .*(-i\b|--install|--unpack|--configure|--remove|--purge)/, `dpkg changing the system: ${line}`);
      if (line.startsWith('apt-get ')) {
        assert.ok(line.includes(`Dir::State::Lists=${tools}/`), `apt-get with the system's lists: ${line}`);
        assert.ok(line.includes('Debug::NoLocking=1'), `apt-get taking the system's lock: ${line}`);
        if (/ (install|remove|purge|upgrade|dist-upgrade)( |$)/.test(line))
          assert.match(line, / -s /, `apt-get changing the system: ${line}`);
      }
    }
  }

  test('UNROLL_LENS_CHROMIUM names a browser that is not there: no browser, nothing installed, one line why', () => {
    const r = runAsNobody({ UNROLL_LENS_CHROMIUM: '/nonexistent/chromium' });
    assert.equal(r.code, 0, r.out);
    assert.equal(r.manifest.chromium, null);
    assert.equal(r.manifest.chromiumMissing, 'UNROLL_LENS_CHROMIUM=/nonexistent/chromium is not an executable file');
    const lines = r.out.split('\n').filter(l => /no Chromium/.test(l));
    assert.equal(lines.length, 1, r.out);
    assert.match(
      lines[0],
      /^\[setup-test-tools \+\d+s\] no Chromium: UNROLL_LENS_CHROMIUM=\/nonexistent\/chromium is not an executable file$/,
    );
    assert.match(r.out, /running as nobody \(no root: nothing is installed system-wide\)/);
    assert.equal(r.calls, '', 'no sudo, no apt-get, no dpkg');
  });

  test("Debian's chromium with the archive out of reach: a private apt-get, no root step, a clean manifest", () => {
    fs.writeFileSync(calls, '');
    // apt-get honours http_proxy: a closed port makes every download fail at once (no network).
    const r = runAsNobody({ UNROLL_LENS_CHROMIUM: 'debian', http_proxy: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' });
    assert.equal(r.code, 0, r.out);
    assert.equal(r.manifest.chromium, null);
    assert.match(r.manifest.chromiumMissing, /^not installed, and no Debian package without root: /);
    if (realAptGet) {
      assert.match(r.calls, /^apt-get .* update$/m, r.calls);
      assert.match(r.manifest.chromiumMissing, /apt-get (cannot resolve|has no chromium to download)/);
    }
    assertNoRootSteps(r.calls);
    // what a failed attempt leaves: the manifest and the log, no half-unpacked browser
    assert.deepEqual(fs.readdirSync(tools).sort(), ['logs', 'test-tools.json']);
    assert.equal(r.out.split('\n').filter(l => /no Chromium/.test(l)).length, 1, r.out);
  });
});
