# Sourced by scripts/example.sh and scripts/test.sh: the project-local virtual environment.
#
# Everything is installed into ./.venv (created on first use with $PYTHON, default python3),
# never into the system's or the user's site-packages, so the README's two commands work on
# a distribution Python that refuses system-wide installs (PEP 668, "externally managed").
# Both commands install ccfair the same way, editable (`pip install -e`), so running one after
# the other never replaces the other's install. pip builds everything: the simulator extension
# and the testbed's userspace bottleneck (crates/ccfair-bottleneck), which the build backend
# (build_backend/ccfair_build.py) installs into .venv/bin next to the ccfair command.
# Each step says what it installs and how long it takes before it starts, and shows progress.
VENV=.venv
LOG_DIR="${TMPDIR:-/tmp}"

say() { printf '==> %s\n' "$*" >&2; }

# apt_install WHY PACKAGE...: install Debian/Ubuntu packages (root with apt-get only), saying so.
apt_install() {
  local why=$1
  shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    return 1
  fi
  say "apt-get install $* ($why); the time depends on the package mirror"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } >/dev/null 2>&1
}

ensure_venv() {
  local py="${PYTHON:-python3}"
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating the virtual environment $VENV with $py"
    if ! "$py" -m venv "$VENV" >/dev/null 2>&1; then
      rm -rf "$VENV"
      # Debian/Ubuntu ship venv's pip bootstrap separately (python3-venv).
      apt_install "Python's venv module" python3-venv || true
      "$py" -m venv "$VENV" || {
        echo "error: could not create a virtual environment with $py; install its venv module (Debian/Ubuntu: apt-get install python3-venv) or set PYTHON=/path/to/python3.11+" >&2
        exit 1
      }
    fi
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
}

# install_ccfair [EXTRAS]: `pip install -e .[EXTRAS]` into .venv with the build's progress shown
# (cargo's "Compiling" lines); the whole pip output goes to a log, whose end is shown on failure.
install_ccfair() {
  local spec="."
  [ -n "${1:-}" ] && spec=".[$1]"
  local log="$LOG_DIR/ccfair-install.$$.log"
  say "pip install -e '$spec' into $VENV: pydantic, typer, rich, numpy, pandas, pyarrow, matplotlib, hypercorn/h2/h11${1:+, and the $1 extras (pytest, dask, jsonschema, ruff, mypy)};"
  say "  a release build of the Rust simulator extension and of the testbed bottleneck ccfair-bottleneck:"
  say "  measured 6 min 19 s from scratch on a loaded 2-core machine (2 min 14 s of CPU); seconds when already built"
  local t0=$SECONDS
  set +e
  "$VENV/bin/python" -m pip install -v --disable-pip-version-check -e "$spec" 2>&1 | tee "$log" |
    { grep --line-buffered -E '^ *(Compiling|Finished|Collecting|Successfully installed)|ccfair-build:' | sed -u 's/^ */    /'; true; }
  local rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" != 0 ]; then
    echo "error: pip install failed (exit $rc); the end of its output (all of it: $log):" >&2
    tail -n 40 "$log" >&2
    exit "$rc"
  fi
  rm -f "$log"
  say "installed in $((SECONDS - t0)) s: $VENV/bin/ccfair ($("$VENV/bin/ccfair" --version)) and $VENV/bin/ccfair-bottleneck"
}
# The testbed's BPF ports of Linux's congestion-control modules (python/ccfair/testbed/bpf/,
# docs/testbed.md): clang compiles them against this kernel's BTF (vmlinux.h from bpftool) and
# libbpf's headers; libbpf loads them. Installs the Debian packages when missing (root and
# apt-get only; it says so), then builds every port into the cache. Without them the set-up goes
# on: testbed runs of those CCAs then exit 2 naming what is missing, and their tests skip.
install_bpf_ports() {
  local need=()
  command -v clang >/dev/null 2>&1 || need+=(clang)
  command -v bpftool >/dev/null 2>&1 || need+=(bpftool)
  [ -e /usr/include/bpf/bpf_helpers.h ] || need+=(libbpf-dev)
  if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing ${need[*]} (apt-get) for the testbed's BPF congestion controls" >&2
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"; } >/dev/null 2>&1 \
        || echo "note: could not install ${need[*]}; the testbed's BPF ports will not be built" >&2
    else
      echo "note: ${need[*]} missing (not root or no apt-get); the testbed's BPF ports will not be built" >&2
    fi
  fi
  if [ -e /sys/kernel/btf/vmlinux ] && command -v clang >/dev/null 2>&1 && command -v bpftool >/dev/null 2>&1; then
    "$VENV/bin/ccfair" testbed build || echo "note: building the BPF ports failed (see above)" >&2
  fi
}
