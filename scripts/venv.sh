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
