#!/usr/bin/env bash
# Provides cuobjdump and nvdisasm (the SASS readers Unroll Lens needs) where they are missing.
#
# nvcc alone (e.g. a CUDA 13 compiler without the binary utilities) cannot show SASS. Debian's
# non-free archive of the trixie release ships nvidia-cuda-toolkit (CUDA 12.4), whose cuobjdump
# and nvdisasm read the cubins nvcc 13 writes for sm_75 .. sm_90. This script takes just those two
# binaries out of that package; it does not install the toolkit, run dpkg -i or touch the
# system's apt configuration:
#
#   1. look for cuobjdump + nvdisasm on PATH, in $CUDA_HOME/bin, /usr/local/cuda/bin, next to
#      nvcc, and in <tools>/cuda-tools/bin; if both are there, print where and stop (--force: go on);
#   2. derive the Debian archive from the machine's own apt sources (deb822 *.sources and one-line
#      *.list entries): the entry whose suites include this machine's release codename and that
#      is not a -security archive; its Signed-By keyring is reused (the Debian archive keyring
#      also verifies trixie);
#   3. `apt-get update` with a private state (own source file, lists, cache, no system hooks),
#      for <suite> <components> only (default: trixie non-free, where nvidia-cuda-toolkit lives;
#      `apt-get download` resolves no dependencies, so main/contrib are not needed);
#   4. `apt-get download nvidia-cuda-toolkit` into a temporary directory;
#   5. find cuobjdump/nvdisasm in the package listing (`dpkg-deb -c`), extract just those members;
#   6. check their shared libraries with ldd (libraries missing from the system are taken from the
#      same package, with a small wrapper setting LD_LIBRARY_PATH), install them into
#      <tools>/cuda-tools/bin (atomically), print their versions;
#   7. smoke test: compile a tiny kernel with nvcc (when present) and disassemble it with both.
#
# <tools> is $UNROLL_LENS_TOOLS, default <repo>/.tools (gitignored). Logs: <tools>/logs/cuda-tools-*.log
#
#   bash scripts/setup-cuda-tools.sh                # install if missing
#   bash scripts/setup-cuda-tools.sh --force        # (re)install into <tools>/cuda-tools/bin
#   bash scripts/setup-cuda-tools.sh --print-source # only show the derived private apt source
#   bash scripts/setup-cuda-tools.sh --deb FILE     # use an already downloaded .deb (no network)
#
# Environment (all optional):
#   UNROLL_LENS_TOOLS            tools dir (default <repo>/.tools)
#   UNROLL_LENS_CUDA_SUITE       Debian suite to take the package from (default trixie)
#   UNROLL_LENS_CUDA_COMPONENTS  components to index (default non-free)
#   UNROLL_LENS_CUDA_PACKAGES    packages to try, in order (default nvidia-cuda-toolkit)
#   UNROLL_LENS_ARCHIVE_URI      archive URI to use instead of the one derived from apt's sources
#   UNROLL_LENS_SOURCES_LIST, UNROLL_LENS_SOURCES_PARTS, UNROLL_LENS_OS_RELEASE
#                                read these instead of apt's sources.list / sources.list.d and
#                                /etc/os-release (for tests)
#   CUDA_HOME / CUDA_PATH        extra CUDA install to look in (step 1) and nvcc for step 7
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS=${UNROLL_LENS_TOOLS:-$ROOT/.tools}
DEST_DIR="$TOOLS/cuda-tools"
DEST="$DEST_DIR/bin"
LOGS="$TOOLS/logs"
SUITE=${UNROLL_LENS_CUDA_SUITE:-trixie}
COMPONENTS=${UNROLL_LENS_CUDA_COMPONENTS:-non-free}
PACKAGES=${UNROLL_LENS_CUDA_PACKAGES:-nvidia-cuda-toolkit}
NAMES=(cuobjdump nvdisasm)

FORCE=0 PRINT_SOURCE=0 CHECK=1 KEEP_WORK=0 LOCAL_DEB=""
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --force) FORCE=1 ;;
    --print-source) PRINT_SOURCE=1 ;;
    --no-check) CHECK=0 ;;
    --keep-work) KEEP_WORK=1 ;;
    --deb) [ $# -ge 2 ] || { echo "--deb needs a file" >&2; exit 2; }; LOCAL_DEB=$(readlink -f "$2"); shift ;;
    --deb=*) LOCAL_DEB=$(readlink -f "${1#--deb=}") ;;
    -h|--help) usage; exit 0 ;;
    *) echo "setup-cuda-tools: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

# ------------------------------------------------------------------ logging and timing
now_ms() { date +%s%3N; }
T0=$(now_ms); STEP_T=$T0; STEP="start"
secs() { local ms=$1; printf '%d.%02ds' $((ms / 1000)) $(((ms % 1000) / 10)); }
log()  { echo "[setup-cuda-tools +$(secs $(( $(now_ms) - T0 )))] $*"; }
step() { STEP=$1; STEP_T=$(now_ms); log "step: $STEP"; }
done_step() { log "  ... $STEP took $(secs $(( $(now_ms) - STEP_T )))${1:+: $1}"; }
die()  {
  trap - ERR
  echo "[setup-cuda-tools] ERROR in step '$STEP': $*" >&2
  echo "[setup-cuda-tools] FAILED after $(secs $(( $(now_ms) - T0 )))" >&2
  exit 1
}
trap 'die "command failed (line $LINENO): $BASH_COMMAND"' ERR

WORK=""
cleanup() {
  if [ -n "$WORK" ] && [ -d "$WORK" ]; then
    if [ "$KEEP_WORK" = 1 ]; then echo "[setup-cuda-tools] work dir kept: $WORK"; else rm -rf "$WORK"; fi
  fi
  if [ -n "${STAGE:-}" ] && [ -d "$STAGE" ]; then rm -rf "$STAGE"; fi
}
trap cleanup EXIT

# "release 12.4, V12.4.127" from `tool --version`, or "" when it does not run.
tool_version() {
  local out
  out=$("$1" --version 2>/dev/null) || return 0
  printf '%s\n' "$out" | sed -n 's/.*\(release [0-9][0-9.]*, V[0-9][0-9.]*\).*/\1/p' | head -1
}
is_tool() { [ -f "$1" ] && [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

# ------------------------------------------------------------------ 1. already there?
find_tool() {   # prints the first working path of tool $1, or nothing
  local name=$1 d p nvcc dirs=()
  p=$(command -v "$name" 2>/dev/null || true)
  if [ -n "$p" ] && is_tool "$p"; then echo "$p"; return; fi
  [ -n "${CUDA_HOME:-}" ] && dirs+=("$CUDA_HOME/bin")
  [ -n "${CUDA_PATH:-}" ] && dirs+=("$CUDA_PATH/bin")
  dirs+=(/usr/local/cuda/bin)
  nvcc=$(command -v nvcc 2>/dev/null || true)
  [ -n "$nvcc" ] && dirs+=("$(dirname "$(readlink -f "$nvcc")")")
  dirs+=("$DEST")
  for d in "${dirs[@]}"; do
    if is_tool "$d/$name"; then echo "$d/$name"; return; fi
  done
}

if [ "$PRINT_SOURCE" = 0 ]; then
  step "look for existing ${NAMES[*]}"
  if [ "$FORCE" = 0 ]; then
    have=0
    for n in "${NAMES[@]}"; do
      p=$(find_tool "$n")
      if [ -n "$p" ]; then
        have=$((have + 1))
        log "  $n: $p ($(tool_version "$p"))"
      else
        log "  $n: not found"
      fi
    done
    if [ "$have" = "${#NAMES[@]}" ]; then
      done_step "nothing to do"
      log "cuobjdump and nvdisasm are already available (use --force to install a copy into $DEST)"
      exit 0
    fi
  else
    log "  --force: installing into $DEST whatever is found elsewhere"
  fi
  done_step
fi

mkdir -p "$LOGS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/unroll-lens-cuda-tools.XXXXXX")

# ------------------------------------------------------------------ 2. derive the archive
# Parses apt sources into records: uri, suites, components, signed-by, origin (file:line), separated
# by the ASCII unit separator (\037: unlike a tab, read keeps empty fields)
# (only "deb" entries that are enabled). An embedded (inline) Signed-By key is written to a file
# in the work dir and that file's path is reported instead.
parse_sources() {
  awk -v keydir="$WORK" '
    function trim(s) { sub(/^[ \t\r]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
    function norm(s) { gsub(/[ \t\r\n]+/, " ", s); return trim(s) }
    function emit(uri, suites, comps, sb, origin) {
      printf "%s\037%s\037%s\037%s\037%s\n", uri, norm(suites), norm(comps), sb, origin
    }
    function reset() { delete F; inpara = 0; key = "" }
    function flush(   i, n, t, u, ok, sb, kf) {
      if (!inpara) { reset(); return }
      if (tolower(trim(F["enabled"])) == "no") { reset(); return }
      ok = 0; n = split(norm(F["types"]), t, " "); for (i = 1; i <= n; i++) if (t[i] == "deb") ok = 1
      if (!ok) { reset(); return }
      sb = F["signed-by"]
      if (sb ~ /BEGIN PGP/) {
        kf = keydir "/embedded-key-" (++nkeys) ".asc"
        sub(/^[ \t\r\n]+/, "", sb); printf "%s\n", sb > kf; close(kf); sb = kf
      } else sb = norm(sb)
      n = split(norm(F["uris"]), u, " ")
      for (i = 1; i <= n; i++) emit(u[i], F["suites"], F["components"], sb, para_origin)
      reset()
    }
    FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/); reset() }
    deb822 {
      line = $0; sub(/\r$/, "", line)
      if (line ~ /^#/) next                                   # comment line
      if (line ~ /^[ \t]*$/) { flush(); next }                # end of a stanza
      if (line ~ /^[ \t]/) {                                  # continuation of the last field
        if (key == "") next
        c = substr(line, 2); if (trim(c) == ".") c = ""
        F[key] = F[key] "\n" c; next
      }
      i = index(line, ":"); if (i == 0) next
      if (!inpara) { inpara = 1; para_origin = FILENAME ":" FNR }
      key = tolower(trim(substr(line, 1, i - 1))); F[key] = trim(substr(line, i + 1))
      next
    }
    {                                                         # one-line format
      line = $0; sub(/#.*/, "", line); line = trim(line)
      if (line == "") next
      if (!match(line, /^[^ \t]+/)) next
      type = substr(line, 1, RLENGTH); rest = trim(substr(line, RLENGTH + 1))
      if (type != "deb") next
      sb = ""; enabled = 1
      if (substr(rest, 1, 1) == "[") {
        j = index(rest, "]"); if (j == 0) next
        n = split(trim(substr(rest, 2, j - 2)), o, /[ \t]+/); rest = trim(substr(rest, j + 1))
        for (k = 1; k <= n; k++) {
          if (tolower(o[k]) ~ /^signed-by=/) sb = substr(o[k], 11)
          if (tolower(o[k]) == "enabled=no") enabled = 0
        }
      }
      if (!enabled) next
      n = split(rest, w, /[ \t]+/); if (n < 2) next
      comps = ""; for (k = 3; k <= n; k++) comps = comps " " w[k]
      emit(w[1], w[2], comps, sb, FILENAME ":" FNR)
    }
    END { if (deb822) flush() }
  ' "$@"
}

read_codename() {
  local f=${UNROLL_LENS_OS_RELEASE:-/etc/os-release} id="" code="" like=""
  if [ -r "$f" ]; then
    id=$(sed -n 's/^ID=//p' "$f" | tr -d '"' | head -1)
    like=$(sed -n 's/^ID_LIKE=//p' "$f" | tr -d '"' | head -1)
    code=$(sed -n 's/^VERSION_CODENAME=//p' "$f" | tr -d '"' | head -1)
    [ -n "$code" ] || code=$(sed -n 's/^VERSION=.*(\([a-z]*\)).*/\1/p' "$f" | head -1)
  fi
  if [ -z "$code" ] && [ -z "${UNROLL_LENS_OS_RELEASE:-}" ] && [ -r /etc/debian_version ]; then
    code=$(cut -d/ -f1 /etc/debian_version)
    case "$code" in [0-9]*) code="" ;; esac
  fi
  OS_ID=$id OS_LIKE=$like CODENAME=$code
}

write_source() {   # $1 uri, $2 signed-by, $3 file
  {
    echo "Types: deb"
    echo "URIs: $1"
    echo "Suites: $SUITE"
    echo "Components: $COMPONENTS"
    [ -z "$2" ] || echo "Signed-By: $2"
  } > "$3"
}
one_line() { echo "deb ${2:+[signed-by=$2] }$1 $SUITE $COMPONENTS"; }

if [ -z "$LOCAL_DEB" ] || [ "$PRINT_SOURCE" = 1 ]; then
step "derive the Debian archive from apt's sources"
read_codename
if [ -z "${UNROLL_LENS_ARCHIVE_URI:-}" ]; then
  [ "$OS_ID" = debian ] || die "this machine is '${OS_ID:-unknown}' (ID_LIKE='${OS_LIKE}'), not Debian: its apt sources have no Debian $SUITE archive. Install CUDA's cuobjdump and nvdisasm (or set UNROLL_LENS_ARCHIVE_URI to a Debian archive)."
  [ -n "$CODENAME" ] || die "no VERSION_CODENAME in ${UNROLL_LENS_OS_RELEASE:-/etc/os-release}"
fi
SL=${UNROLL_LENS_SOURCES_LIST:-}
SP=${UNROLL_LENS_SOURCES_PARTS:-}
if [ -z "$SL" ] && [ -z "$SP" ] && command -v apt-config >/dev/null; then
  eval "$(apt-config shell SL Dir::Etc::sourcelist/f SP Dir::Etc::sourceparts/d)"
fi
SL=${SL:-/etc/apt/sources.list}
SP=${SP:-/etc/apt/sources.list.d}
SRC_FILES=()
[ -f "$SL" ] && SRC_FILES+=("$SL")
if [ -d "$SP" ]; then
  while IFS= read -r f; do SRC_FILES+=("$f"); done \
    < <(find "$SP" -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) | LC_ALL=C sort)
fi
log "  release: ${OS_ID:-?} ${CODENAME:-?}; sources read: ${SRC_FILES[*]:-(none)}"
RECORDS=""
[ ${#SRC_FILES[@]} -eq 0 ] || RECORDS=$(parse_sources "${SRC_FILES[@]}")
# Candidates: suite == this release's codename, not a -security archive. If none, fall back to an
# entry for any plain suite (no -updates/-security/-backports suffix).
pick() {   # $1 = exact|plain
  local uri suites sb origin s u
  while IFS=$'\x1f' read -r uri suites _ sb origin; do
    [ -n "$uri" ] || continue
    u=${uri%/}
    case "$u" in *-security|cdrom:*) continue ;; esac
    for s in $suites; do
      case "$s" in *-security|*/*) continue ;; esac
      if { [ "$1" = exact ] && [ "$s" = "$CODENAME" ]; } || { [ "$1" = plain ] && [[ "$s" != *-* ]]; }; then
        printf '%s\037%s\037%s\n' "$uri" "$sb" "$origin"; break
      fi
    done
  done <<< "$RECORDS"
}
if [ -n "${UNROLL_LENS_ARCHIVE_URI:-}" ]; then
  CANDIDATES=$(printf '%s\037%s\037%s\n' "$UNROLL_LENS_ARCHIVE_URI" "" "UNROLL_LENS_ARCHIVE_URI")
else
  CANDIDATES=$(pick exact)
  if [ -z "$CANDIDATES" ]; then
    CANDIDATES=$(pick plain)
    [ -z "$CANDIDATES" ] || log "  no entry for suite '$CODENAME'; using entries of other plain suites"
  fi
fi
# de-duplicate URIs, keep order
CANDIDATES=$(printf '%s\n' "$CANDIDATES" | awk -F'\037' 'NF && !seen[$1]++')
[ -n "$CANDIDATES" ] || die "no enabled 'deb' entry for suite '$CODENAME' (other than -security) in: ${SRC_FILES[*]:-no apt source files}. Set UNROLL_LENS_ARCHIVE_URI to a Debian archive URI."

while IFS=$'\x1f' read -r uri sb origin; do
  log "  candidate: $(one_line "$uri" "$sb")   (from $origin)"
done <<< "$CANDIDATES"
if [ "$PRINT_SOURCE" = 1 ]; then
  IFS=$'\x1f' read -r uri sb origin <<< "$(head -1 <<< "$CANDIDATES")"
  write_source "$uri" "$sb" "$WORK/source.sources"
  echo "# private apt source (from $origin)"
  cat "$WORK/source.sources"
  echo "# one-line form: $(one_line "$uri" "$sb")"
  exit 0
fi
done_step
fi   # (a local --deb needs no archive)

# one installer at a time per tools dir; a run that waited finds the other's result
if command -v flock >/dev/null; then
  exec 9> "$TOOLS/.cuda-tools.lock"
  if ! flock -n 9; then
    log "another setup-cuda-tools run holds $TOOLS/.cuda-tools.lock: waiting"
    flock 9
    if [ "$FORCE" = 0 ] && is_tool "$DEST/cuobjdump" && is_tool "$DEST/nvdisasm"; then
      log "installed meanwhile: $DEST/cuobjdump, $DEST/nvdisasm"
      exit 0
    fi
  fi
fi

# ------------------------------------------------------------------ 3-4. private apt state, download
for c in dpkg-deb tar awk; do command -v "$c" >/dev/null || die "'$c' not found"; done
ARCH=$(dpkg --print-architecture 2>/dev/null || echo "?")
APT_OPTS=()
DL="$WORK/download"
mkdir -p "$DL"
setup_private_apt() {   # $1 uri, $2 signed-by
  rm -rf "$WORK/apt" && mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial" "$WORK/apt/prefs.d" "$WORK/apt/sources.d"
  write_source "$1" "$2" "$WORK/apt/$SUITE.sources"
  # System hooks (APT::Update::*-Invoke) expect a system update: not for this private state.
  printf '#clear APT::Update::Pre-Invoke;\n#clear APT::Update::Post-Invoke;\n#clear APT::Update::Post-Invoke-Success;\n' > "$WORK/apt/apt.conf"
  APT_OPTS=(
    -c "$WORK/apt/apt.conf"
    -o "Dir::Etc::sourcelist=$WORK/apt/$SUITE.sources"
    -o "Dir::Etc::sourceparts=$WORK/apt/sources.d"
    -o "Dir::Etc::preferences=$WORK/apt/preferences"
    -o "Dir::Etc::preferencesparts=$WORK/apt/prefs.d"
    -o "Dir::State::Lists=$WORK/apt/lists"
    -o "Dir::Cache=$WORK/apt/cache"
    -o "Dir::Cache::pkgcache=$WORK/apt/cache/pkgcache.bin"
    -o "Dir::Cache::srcpkgcache=$WORK/apt/cache/srcpkgcache.bin"
    -o "APT::Get::List-Cleanup=0"
    -o "Acquire::Languages=none"
    -o "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false"
  )
  # apt downloads as the unprivileged _apt user when run as root: give it access to the work dir,
  # or (when it cannot get there, e.g. a private TMPDIR) download as root without the warning.
  if [ "$(id -u)" = 0 ]; then
    local sandbox=root
    if id _apt >/dev/null 2>&1 && command -v runuser >/dev/null; then
      chmod 755 "$WORK" "$WORK/apt" && chown _apt "$DL" "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial"
      if runuser -u _apt -- test -w "$DL" 2>/dev/null && runuser -u _apt -- test -w "$WORK/apt/lists/partial" 2>/dev/null; then
        sandbox=_apt
      fi
    fi
    [ "$sandbox" = _apt ] || APT_OPTS+=(-o "APT::Sandbox::User=root")
    log "  apt sandbox user: $sandbox"
  fi
}

run_update() {   # appends to $ATTEMPT; true when apt-get exits 0 and reports no error
  local mark rc=0
  mark=$(wc -l < "$ATTEMPT")
  echo "### apt-get ${APT_OPTS[*]} update" >> "$ATTEMPT"
  apt-get "${APT_OPTS[@]}" update >> "$ATTEMPT" 2>&1 || rc=$?
  [ "$rc" = 0 ] || echo "E: apt-get update exited $rc" >> "$ATTEMPT"
  ! tail -n +"$((mark + 1))" "$ATTEMPT" | grep -q '^\(E:\|Err:\)'
}

listing_of() {   # path of the cached `dpkg-deb -c` listing of package $1
  local f
  f="$WORK/listings/$(basename "$1").txt"
  if [ ! -s "$f" ]; then
    mkdir -p "$WORK/listings"
    dpkg-deb -c "$1" > "$f" 2>> "$LOGS/cuda-tools-extract.log" || { rm -f "$f"; return 1; }
  fi
  echo "$f"
}
tool_members() {   # regular files (mode '-') of listing $2 named exactly $1, one a line
  awk -v n="$1" '$1 ~ /^-/ { p = $NF; k = split(p, a, "/"); if (a[k] == n) print p }' "$2"
}
debs_hold_all() {   # do the packages in DEBS hold every tool of NAMES?
  local n d L found
  for n in "${NAMES[@]}"; do
    found=0
    for d in "${DEBS[@]}"; do
      L=$(listing_of "$d") || return 1
      if [ -n "$(tool_members "$n" "$L")" ]; then found=1; break; fi
    done
    [ "$found" = 1 ] || return 1
  done
}

DEBS=()
PKG_SOURCE=""
if [ -n "$LOCAL_DEB" ]; then
  step "use local package $LOCAL_DEB"
  [ -f "$LOCAL_DEB" ] || die "--deb: no such file: $LOCAL_DEB"
  DEBS=("$LOCAL_DEB")
  PKG_SOURCE="local file $LOCAL_DEB"
  done_step
else
  command -v apt-get >/dev/null || die "apt-get not found"
  UPDATE_LOG="$LOGS/cuda-tools-apt-update.log"
  DOWNLOAD_LOG="$LOGS/cuda-tools-apt-download.log"
  : > "$UPDATE_LOG"; : > "$DOWNLOAD_LOG"
  got=0
  while IFS=$'\x1f' read -r uri sb origin; do
    step "apt-get update (private state) for $SUITE $COMPONENTS"
    setup_private_apt "$uri" "$sb"
    log "  source: $(one_line "$uri" "$sb")   (derived from $origin)"
    log "  log: $UPDATE_LOG"
    ATTEMPT="$WORK/update-attempt.log"
    : > "$ATTEMPT"
    ok=0
    if run_update; then
      ok=1
    elif grep -qi 'no longer valid\|is not valid yet' "$ATTEMPT"; then
      # e.g. a dated snapshot archive: the signature is still checked, only the dates are not.
      log "  Release file outside its validity dates; retrying without the date check"
      APT_OPTS+=(-o "Acquire::Check-Valid-Until=false" -o "Acquire::Check-Date=false")
      if run_update; then ok=1; fi
    fi
    { echo "### $(date -u +%FT%TZ) source: $(one_line "$uri" "$sb")"; cat "$ATTEMPT"; } >> "$UPDATE_LOG"
    if [ "$ok" = 0 ]; then
      log "  apt-get update failed for $uri (see $UPDATE_LOG):"
      grep '^\(E:\|Err:\|W:\)' "$ATTEMPT" | tail -5 | sed 's/^/    /' || true
      continue
    fi
    done_step
    step "apt-get download ${PACKAGES}"
    log "  log: $DOWNLOAD_LOG"
    for pkg in $PACKAGES; do
      ver=$(apt-cache "${APT_OPTS[@]}" policy "$pkg" 2>>"$DOWNLOAD_LOG" | sed -n 's/^ *Candidate: //p')
      if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
        log "  $pkg: not in $SUITE/$COMPONENTS at $uri"
        continue
      fi
      echo "### apt-get download $pkg ($ver)" >> "$DOWNLOAD_LOG"
      if ! (cd "$DL" && apt-get "${APT_OPTS[@]}" download "$pkg" >> "$DOWNLOAD_LOG" 2>&1); then
        log "  apt-get download $pkg failed (see $DOWNLOAD_LOG)"
        continue
      fi
      deb=$(ls -t "$DL"/"${pkg}"_*.deb 2>/dev/null | head -1)
      [ -n "$deb" ] || { log "  apt-get download $pkg left no .deb in $DL (see $DOWNLOAD_LOG)"; continue; }
      log "  $pkg $ver: $(basename "$deb") ($(( $(stat -c %s "$deb") / 1048576 )) MiB)"
      DEBS+=("$deb")
      # stop as soon as the downloaded packages hold both tools
      if debs_hold_all; then break; fi
    done
    if [ ${#DEBS[@]} -gt 0 ]; then
      PKG_SOURCE="$(one_line "$uri" "$sb") (derived from $origin)"
      got=1
      done_step
      break
    fi
    log "  none of '$PACKAGES' could be downloaded from $uri"
  done <<< "$CANDIDATES"
  [ "$got" = 1 ] || die "could not get any of '$PACKAGES' from $SUITE $COMPONENTS of any candidate archive (logs: $UPDATE_LOG, $DOWNLOAD_LOG)"
fi

# ------------------------------------------------------------------ 5. find and extract the two tools
step "find ${NAMES[*]} in the package(s) and extract them"
EXTRACT_LOG="$LOGS/cuda-tools-extract.log"
: > "$EXTRACT_LOG"
X="$WORK/extract"
mkdir -p "$X"
declare -A TOOL_PATH=() TOOL_DEB=()
for deb in "${DEBS[@]}"; do
  L=$(listing_of "$deb") || die "dpkg-deb -c $deb failed (see $EXTRACT_LOG)"
  { echo "### dpkg-deb -c $(basename "$deb") (tool members)"; grep -E '/(cuobjdump|nvdisasm)$' "$L" || true; } >> "$EXTRACT_LOG"
  declare -A MEMBERS=()
  want=()
  for n in "${NAMES[@]}"; do
    [ -z "${TOOL_PATH[$n]:-}" ] || continue
    MEMBERS[$n]=$(tool_members "$n" "$L")
    [ -z "${MEMBERS[$n]}" ] || mapfile -t -O "${#want[@]}" want <<< "${MEMBERS[$n]}"
  done
  [ ${#want[@]} -gt 0 ] || continue
  # one pass over the package's data: only the wanted members are written
  dpkg-deb --fsys-tarfile "$deb" 2>> "$EXTRACT_LOG" | tar -x -C "$X" "${want[@]}" 2>> "$EXTRACT_LOG" \
    || die "extracting ${want[*]} from $(basename "$deb") failed (see $EXTRACT_LOG)"
  for n in "${!MEMBERS[@]}"; do
    [ -n "${MEMBERS[$n]}" ] || continue
    mapfile -t members <<< "${MEMBERS[$n]}"
    # prefer a real ELF program over a wrapper script
    for m in "${members[@]}"; do
      if [ "$(head -c 4 "$X/$m" | od -An -c | tr -d ' ')" = '177ELF' ]; then TOOL_PATH[$n]="$X/$m"; break; fi
    done
    [ -n "${TOOL_PATH[$n]:-}" ] || TOOL_PATH[$n]="$X/${members[0]}"
    TOOL_DEB[$n]=$deb
    log "  $n: ${members[*]#./} in $(basename "$deb")"
  done
  unset MEMBERS
done
for n in "${NAMES[@]}"; do
  [ -n "${TOOL_PATH[$n]:-}" ] || die "no file named $n in $(for d in "${DEBS[@]}"; do basename "$d"; done | tr '\n' ' ')(listing in $EXTRACT_LOG). Set UNROLL_LENS_CUDA_PACKAGES to the package(s) that hold it."
done
done_step

# ------------------------------------------------------------------ 6. libraries, install
step "check shared libraries and install into $DEST"
STAGE=$(mktemp -d "$TOOLS/.cuda-tools.new.XXXXXX")
chmod 755 "$STAGE"
mkdir -p "$STAGE/bin"
for n in "${NAMES[@]}"; do
  cp "${TOOL_PATH[$n]}" "$STAGE/bin/$n" && chmod 755 "$STAGE/bin/$n"
  missing=""
  if command -v ldd >/dev/null && ldd "$STAGE/bin/$n" > "$WORK/ldd-$n.txt" 2>&1; then
    { echo "### ldd $n"; cat "$WORK/ldd-$n.txt"; } >> "$EXTRACT_LOG"
    missing=$(awk '/=> not found/ {print $1}' "$WORK/ldd-$n.txt" | sort -u | tr '\n' ' ')
  fi
  if [ -n "$missing" ]; then
    # take the missing libraries from the same package and run the tool through a wrapper
    log "  $n needs ${missing}- not on this system; taking them from $(basename "${TOOL_DEB[$n]}")"
    L=$(listing_of "${TOOL_DEB[$n]}")
    mkdir -p "$STAGE/lib" "$STAGE/libexec"
    for lib in $missing; do
      mapfile -t lm < <(awk -v l="$lib" '{ p = ($1 ~ /^l/) ? $(NF-2) : $NF; k = split(p, a, "/"); if (index(a[k], l) == 1) print p }' "$L")
      [ ${#lm[@]} -gt 0 ] || die "$n needs $lib, which is neither on this system nor in $(basename "${TOOL_DEB[$n]}")"
      dpkg-deb --fsys-tarfile "${TOOL_DEB[$n]}" | tar -x -C "$X" "${lm[@]}" 2>> "$EXTRACT_LOG" || die "extracting $lib failed (see $EXTRACT_LOG)"
      src=$(for m in "${lm[@]}"; do [ -e "$X/$m" ] && echo "$X/$m"; done | head -1)
      cp -L "$src" "$STAGE/lib/$lib"
    done
    mv "$STAGE/bin/$n" "$STAGE/libexec/$n"
    cat > "$STAGE/bin/$n" <<EOF
#!/bin/sh
# $n from ${TOOL_DEB[$n]##*/}, with the libraries it needs from the same package.
d=\$(dirname "\$(readlink -f "\$0")")/..
LD_LIBRARY_PATH="\$d/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$d/libexec/$n" "\$@"
EOF
    chmod 755 "$STAGE/bin/$n"
    still=$(LD_LIBRARY_PATH="$STAGE/lib" ldd "$STAGE/libexec/$n" 2>&1 | awk '/=> not found/ {print $1}' | tr '\n' ' ')
    [ -z "$still" ] || die "$n still misses shared libraries: $still(see $EXTRACT_LOG)"
  fi
  "$STAGE/bin/$n" --version >> "$EXTRACT_LOG" 2>&1 || die "$n --version fails after extraction (see $EXTRACT_LOG)"
done
{
  echo "cuobjdump and nvdisasm installed by scripts/setup-cuda-tools.sh on $(date -u +%FT%TZ)"
  for deb in "${DEBS[@]}"; do
    echo "package: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) ($(dpkg-deb -f "$deb" Architecture)), sha256 $(sha256sum "$deb" | cut -d' ' -f1)"
  done
  echo "from: $PKG_SOURCE"
  for n in "${NAMES[@]}"; do echo "$n: $(tool_version "$STAGE/bin/$n")"; done
} > "$STAGE/SOURCE.txt"
# swap in atomically (a concurrent reader sees the old or the new dir, never half of one)
if [ -d "$DEST_DIR" ]; then
  OLD="$TOOLS/.cuda-tools.old.$$"
  mv "$DEST_DIR" "$OLD" && mv "$STAGE" "$DEST_DIR" && rm -rf "$OLD"
else
  mkdir -p "$(dirname "$DEST_DIR")" && mv "$STAGE" "$DEST_DIR"
fi
STAGE=""
done_step
for n in "${NAMES[@]}"; do
  log "  $n: $DEST/$n ($(tool_version "$DEST/$n"))"
done
for deb in "${DEBS[@]}"; do
  log "  from package $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) ($ARCH)"
done

# ------------------------------------------------------------------ 7. smoke test
if [ "$CHECK" = 1 ]; then
  step "smoke test: disassemble a cubin of the local nvcc"
  NVCC=""
  for c in "$(command -v nvcc 2>/dev/null || true)" "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}" /usr/local/cuda/bin/nvcc; do
    if [ -n "$c" ] && [ -x "$c" ]; then NVCC=$c; break; fi
  done
  if [ -z "$NVCC" ]; then
    log "  no nvcc found: skipped"
  else
    CHECK_LOG="$LOGS/cuda-tools-check.log"
    mkdir -p "$WORK/check"
    printf '__global__ void unroll_lens_probe(float* y, const float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = 2.0f * x[i];\n}\n' > "$WORK/check/probe.cu"
    "$NVCC" -arch=sm_90 -cubin -lineinfo -o "$WORK/check/probe.cubin" "$WORK/check/probe.cu" > "$CHECK_LOG" 2>&1 \
      || die "$NVCC could not compile the probe kernel for sm_90 (see $CHECK_LOG)"
    "$DEST/cuobjdump" -sass "$WORK/check/probe.cubin" >> "$CHECK_LOG" 2>&1 \
      || die "cuobjdump -sass fails on a cubin of $("$NVCC" --version | tail -1) (see $CHECK_LOG)"
    grep -q 'EXIT' "$CHECK_LOG" || die "cuobjdump -sass printed no SASS for the probe kernel (see $CHECK_LOG)"
    "$DEST/nvdisasm" -c -g "$WORK/check/probe.cubin" > "$WORK/check/nvdisasm.txt" 2>> "$CHECK_LOG" \
      || die "nvdisasm fails on a cubin of $("$NVCC" --version | tail -1) (see $CHECK_LOG)"
    cat "$WORK/check/nvdisasm.txt" >> "$CHECK_LOG"
    grep -q 'EXIT' "$WORK/check/nvdisasm.txt" || die "nvdisasm printed no SASS for the probe kernel (see $CHECK_LOG)"
    done_step "both read sm_90 cubins of $("$NVCC" --version | sed -n 's/.*\(release [0-9.]*\).*/nvcc \1/p')"
  fi
fi
log "done in $(secs $(( $(now_ms) - T0 ))); tools in $DEST"
