#!/usr/bin/env bash
# Creates .venv in the repo root and installs Reverie with everything it needs.
# Idempotent: re-running only installs what changed. The llama-cpp-python wheel
# is built from source once (about 11 minutes on 2 cores) and then cached by pip.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install --quiet --upgrade pip setuptools wheel
case "$(uname -s)-$(uname -m)" in
  Linux-*)
    # The CPU build of torch must be in place before sentence-transformers, or
    # pip resolves an unpinned torch to a multi-GB CUDA build.
    "$VPY" -c "import torch" 2>/dev/null || "$VPY" -m pip install --quiet "torch==2.13.0"
    ;;
  Darwin-arm64)
    # Metal is llama.cpp's default on Apple Silicon; make it explicit.
    export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_METAL=on}"
    ;;
esac
"$VPY" -m pip install --quiet -e ".[dev]"
# Bytecode for the project's own modules (an editable install compiles none, and with
# PYTHONDONTWRITEBYTECODE set every start would compile them again): the app's start-up
# preload and every child process import faster.
"$VPY" -m compileall -q core desktop models >/dev/null || true
touch .venv/.reverie-setup-done

# Qt's xcb platform plugin (the app's window on X11 and XWayland) loads these system libraries
# when the window opens; without them `make run` aborts with "Could not load the Qt platform
# plugin xcb". The tests run offscreen and need none of them, so a missing one is a warning with
# the command that installs it, never a failure of the set-up.
check_qt_system_packages() {
  local libs missing=() pair pkg lib
  libs="$( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)"
  for pair in libxcb-cursor0:libxcb-cursor.so.0 libxcb-icccm4:libxcb-icccm.so.4 \
              libxcb-keysyms1:libxcb-keysyms.so.1 libxkbcommon-x11-0:libxkbcommon-x11.so.0 libegl1:libEGL.so.1; do
    pkg="${pair%%:*}" lib="${pair#*:}"
    if [ -n "$libs" ]; then
      grep -qF "$lib " <<<"$libs" || missing+=("$pkg")
    elif command -v dpkg >/dev/null 2>&1; then
      dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    fi
  done
  # The demo workspace has Chinese text: without a CJK font it shows as boxes.
  if command -v fc-list >/dev/null 2>&1; then
    [ -n "$(fc-list :lang=zh family 2>/dev/null || true)" ] || missing+=("fonts-noto-cjk")
  elif command -v dpkg >/dev/null 2>&1; then
    dpkg -s fonts-noto-cjk >/dev/null 2>&1 || missing+=("fonts-noto-cjk")
  fi
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "warning: the desktop app's window needs system packages that are missing: ${missing[*]}" >&2
    echo "  install them with:  sudo apt-get install ${missing[*]}" >&2
    echo "  (other distributions: the same libraries under their names; the tests do not need them)" >&2
  fi
}
if [ "$(uname -s)" = "Linux" ]; then
  check_qt_system_packages
fi
