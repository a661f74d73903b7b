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
