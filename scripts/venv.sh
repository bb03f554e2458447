# Sourced by scripts/example.sh and scripts/test.sh: the project-local virtual environment.
#
# Everything is installed into ./.venv (created on first use with $PYTHON, default python3),
# never into the system's or the user's site-packages, so the README's two commands work on
# a distribution Python that refuses system-wide installs (PEP 668, "externally managed").
# The testbed's userspace bottleneck (crates/ccfair-bottleneck) is built and copied into
# .venv/bin, where the installed ccfair finds it (ccfair.testbed.runner.find_bottleneck).
VENV=.venv
ensure_venv() {
  local py="${PYTHON:-python3}"
  if [ ! -x "$VENV/bin/python" ]; then
    if ! "$py" -m venv "$VENV" >/dev/null 2>&1; then
      rm -rf "$VENV"
      # Debian/Ubuntu ship venv's pip bootstrap separately (python3-venv).
      if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; } >/dev/null 2>&1 || true
      fi
      "$py" -m venv "$VENV" || {
        echo "error: could not create a virtual environment with $py; install its venv module (Debian/Ubuntu: apt-get install python3-venv) or set PYTHON=/path/to/python3.11+" >&2
        exit 1
      }
    fi
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null 2>&1 || true
}
install_bottleneck() {
  cargo build --release -q -p ccfair-bottleneck
  install -m 755 "${CARGO_TARGET_DIR:-target}/release/ccfair-bottleneck" "$VENV/bin/ccfair-bottleneck"
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
