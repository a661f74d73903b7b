#!/usr/bin/env bash
# Build dist/Reverie.app for Apple Silicon (arm64 only), check it, smoke-test it; optionally sign and make a DMG.
#
#   bash packaging/build_macos.sh
#   REVERIE_CODESIGN_IDENTITY="Developer ID Application: ..." bash packaging/build_macos.sh   # signed
#   MAKE_DMG=1 bash packaging/build_macos.sh                                                  # + dist/Reverie.dmg
#
# Step by step in packaging/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
DIST="${DIST:-$ROOT/dist}"
WORK="${WORK:-$ROOT/build/pyinstaller}"
APP="$DIST/Reverie.app"

fail() { echo "build_macos.sh: $*" >&2; exit 2; }
[ "$(uname -s)" = "Darwin" ] || fail "run this on macOS"
[ "$(uname -m)" = "arm64" ] || fail "run this on an Apple Silicon Mac (uname -m says $(uname -m)); the app ships arm64 only"
[ "$("$PY" -c 'import platform; print(platform.machine())')" = "arm64" ] || \
    fail "$PY is not an arm64 Python (Rosetta?); create .venv with an arm64 python3"
"$PY" -c "import PyInstaller" 2>/dev/null || fail "pyinstaller is missing: $PY -m pip install -e '.[dev]'"
# llama-cpp-python must be the Metal build (scripts/setup.sh builds it with CMAKE_ARGS=-DGGML_METAL=on)
"$PY" - <<'PYEOF' || fail "llama-cpp-python has no Metal support: CMAKE_ARGS=-DGGML_METAL=on $PY -m pip install --force-reinstall --no-cache-dir llama-cpp-python"
import llama_cpp, sys
sys.exit(0 if llama_cpp.llama_supports_gpu_offload() else 1)
PYEOF

"$PY" -m PyInstaller --noconfirm ${CLEAN:+--clean} --log-level "${LOG_LEVEL:-WARN}" \
    --distpath "$DIST" --workpath "$WORK" packaging/reverie.spec
[ -x "$APP/Contents/MacOS/Reverie" ] || fail "build failed: $APP/Contents/MacOS/Reverie missing"

# arm64 only: every Mach-O file in the bundle must contain arm64 and nothing else
bad=0
while IFS= read -r -d '' file; do
    if file -b "$file" | grep -q "Mach-O"; then
        archs="$(lipo -archs "$file" 2>/dev/null || echo unknown)"
        if [ "$archs" != "arm64" ]; then echo "not arm64-only: $file ($archs)" >&2; bad=1; fi
    fi
done < <(find "$APP" -type f \( -perm -u+x -o -name "*.dylib" -o -name "*.so" \) -print0)
[ "$bad" = 0 ] || fail "the bundle holds non-arm64 code (see above)"

# llama.cpp's Metal backend must be in the bundle next to libllama
ls "$APP"/Contents/Frameworks/llama_cpp/lib/libllama.dylib >/dev/null || fail "libllama.dylib missing from the bundle"
ls "$APP"/Contents/Frameworks/llama_cpp/lib/ | grep -q "ggml-metal" || \
    echo "note: no separate ggml-metal library (this llama.cpp links Metal into libggml)" >&2

if [ -n "${REVERIE_CODESIGN_IDENTITY:-}" ]; then
    # Developer ID + hardened runtime (what notarization requires), with the entitlements torch/ctypes need.
    codesign --force --deep --options runtime --timestamp \
        --entitlements packaging/macos/entitlements.plist --sign "$REVERIE_CODESIGN_IDENTITY" "$APP"
else
    codesign --force --deep --sign - "$APP"           # ad hoc: runs on this Mac; Gatekeeper needs a real identity
fi
codesign --verify --deep --strict --verbose=2 "$APP"
echo "built $APP ($(du -sh "$APP" | cut -f1))"

if [ -z "${SKIP_SMOKE:-}" ]; then
    "$PY" packaging/smoke_test.py "$APP/Contents/MacOS/Reverie"
fi
if [ -n "${MAKE_DMG:-}" ]; then
    rm -f "$DIST/Reverie.dmg"
    hdiutil create -volname Reverie -srcfolder "$APP" -ov -format UDZO "$DIST/Reverie.dmg"
    echo "built $DIST/Reverie.dmg"
fi
