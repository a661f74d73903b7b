#!/usr/bin/env bash
# Creates .venv in the repo root and installs Reverie with everything it needs.
# Idempotent: re-running only installs what changed. The llama-cpp-python wheel
# is built from source once (about 11 minutes on 2 cores) and then kept in
# ~/.cache/reverie/wheels/ under a key of its build settings (see portable_wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
VPY=.venv/bin/python
# Portable native code. llama.cpp's default build (GGML_NATIVE=ON) and hnswlib's (-march=native)
# compile for the CPU they are built on: AVX-512 and AMX on a recent Xeon. pip caches such a wheel
# under a key that names neither the CPU nor CMAKE_ARGS, so a venv made later from a shared pip
# cache (a CI cache, a container volume, a copied home folder) on another x86_64 CPU dies with
# SIGILL at the first matrix product, and a changed CMAKE_ARGS silently reuses the old build.
# So both are built for the architecture's baseline (x86_64: AVX2, FMA, F16C; arm64: what the
# compiler targets by default), never through pip's cache, and kept in our own folder under a key
# of everything that shapes the build (the CPU's flags too, where a CMAKE_ARGS of your own builds
# for this CPU). The AMX code a native build carries also faults on virtual machines that list AMX
# (SIGILL in ggml_backend_amx_mul_mat); the baseline build has none.
WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/reverie/wheels"
cpu_fingerprint() {
  if [ -r /proc/cpuinfo ]; then
    grep -m1 -E '^(flags|Features)' /proc/cpuinfo || true
  else
    sysctl -n machdep.cpu.brand_string 2>/dev/null || true
    sysctl hw.optional 2>/dev/null || true
  fi
}
key_python() { if [ -x "$VPY" ]; then "$VPY" "$@"; else "$PY" "$@"; fi; }
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi; }
build_key() {   # build_key SPEC SETTINGS [native]: a short hash of what the wheel depends on
  { printf '%s\n' "$1" "$2" "$(uname -sm)" "$(key_python -c 'import sys; print(sys.implementation.cache_tag)')"
    if [ "${3:-}" = native ]; then cpu_fingerprint; fi; } | sha256 | cut -c1-16
}
dependency_spec() {   # the pyproject.toml requirement of a package, without extras
  grep -o "\"$1[^\"]*\"" pyproject.toml | head -n1 | tr -d '"' | sed 's/\[[^]]*\]//'
}
portable_wheel() {   # portable_wheel NAME KEY [VAR=VALUE ...]: build (once per key) and install NAME
  local name="$1" key="$2" spec marker dir wheel
  shift 2
  spec="$(dependency_spec "$name")"
  marker=".venv/.reverie-build-$name"
  [ "$(cat "$marker" 2>/dev/null || true)" = "$key" ] && return 0
  if [ ! -f "$marker" ] && "$VPY" -m pip show --quiet "$name" >/dev/null 2>&1 && [ -z "${REVERIE_REBUILD:-}" ]; then
    echo "note: $name in .venv was installed before builds were made portable and may run on this CPU only;" >&2
    echo "  REVERIE_REBUILD=1 bash scripts/setup.sh rebuilds it" >&2
    return 0
  fi
  dir="$WHEELS/$name-$key"
  wheel="$(ls "$dir"/*.whl 2>/dev/null | sort -V | tail -n1 || true)"
  if [ -z "$wheel" ]; then
    echo "building $spec from source for this platform ($*)..." >&2
    rm -rf "$dir.partial"
    env "$@" "$VPY" -m pip wheel --quiet --no-deps --no-cache-dir --no-binary "$name" "$spec" -w "$dir.partial"
    rm -rf "$dir" && mv "$dir.partial" "$dir"
    wheel="$(ls "$dir"/*.whl | sort -V | tail -n1)"
  fi
  "$VPY" -m pip install --quiet --no-deps --force-reinstall "$wheel"
  printf '%s\n' "$key" > "$marker"
}
case "$(uname -s)-$(uname -m)" in
  Darwin-arm64)
    # Metal is llama.cpp's default on Apple Silicon; make it explicit.
    LLAMA_CMAKE_ARGS="-DGGML_METAL=on -DGGML_NATIVE=OFF"
    ;;
  *)
    LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
    ;;
esac
LLAMA_CMAKE_ARGS="${CMAKE_ARGS:-$LLAMA_CMAKE_ARGS}"   # yours win (CUDA, Vulkan, a native build)
case "$LLAMA_CMAKE_ARGS" in
  *GGML_NATIVE=OFF*|*GGML_NATIVE=off*|*GGML_NATIVE=0*) LLAMA_NATIVE="" ;;
  *) LLAMA_NATIVE=native ;;
esac
case "$(uname -m)" in
  x86_64|amd64) HNSW_CFLAGS="-mavx -mavx2 -mfma" ;;   # AVX2 and FMA for its distances; no -march=native
  *) HNSW_CFLAGS="" ;;
esac
if [ "${1:-}" = "--print-builds" ]; then   # what would be built, and under which keys (for the tests)
  echo "llama-cpp-python CMAKE_ARGS=$LLAMA_CMAKE_ARGS key=$(build_key "$(dependency_spec llama-cpp-python)" "$LLAMA_CMAKE_ARGS" $LLAMA_NATIVE)"
  echo "hnswlib CFLAGS=$HNSW_CFLAGS key=$(build_key "$(dependency_spec hnswlib)" "HNSWLIB_NO_NATIVE=1 $HNSW_CFLAGS")"
  exit 0
fi

if [ ! -x "$VPY" ]; then
  "$PY" -m venv .venv
fi
"$VPY" -m pip install --quiet --upgrade pip setuptools wheel
if [ "$(uname -s)" = "Linux" ]; then
  # The CPU build of torch must be in place before sentence-transformers, or
  # pip resolves an unpinned torch to a multi-GB CUDA build.
  "$VPY" -c "import torch" 2>/dev/null || "$VPY" -m pip install --quiet "torch==2.13.0"
fi
portable_wheel llama-cpp-python "$(build_key "$(dependency_spec llama-cpp-python)" "$LLAMA_CMAKE_ARGS" $LLAMA_NATIVE)" \
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS"
portable_wheel hnswlib "$(build_key "$(dependency_spec hnswlib)" "HNSWLIB_NO_NATIVE=1 $HNSW_CFLAGS")" \
  HNSWLIB_NO_NATIVE=1 CFLAGS="$HNSW_CFLAGS" CXXFLAGS="$HNSW_CFLAGS"
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
