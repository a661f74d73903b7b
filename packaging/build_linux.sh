#!/usr/bin/env bash
# Build the Linux one-folder bundle dist/reverie/ and smoke-test it.
#
#   bash packaging/build_linux.sh            # build + smoke test
#   SKIP_SMOKE=1 bash packaging/build_linux.sh
#
# Needs the project's .venv with the dev extra (pyinstaller): `make setup`.
# Takes about 10-15 minutes on 2 cores; the bundle is about 1.5 GB (torch, Qt, the two models).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
DIST="${DIST:-$ROOT/dist}"
WORK="${WORK:-$ROOT/build/pyinstaller}"

[ "$(uname -s)" = "Linux" ] || { echo "build_linux.sh builds on Linux; use build_macos.sh on a Mac" >&2; exit 2; }
"$PY" -c "import PyInstaller" 2>/dev/null || { echo "pyinstaller is missing: $PY -m pip install -e '.[dev]'" >&2; exit 2; }

"$PY" -m PyInstaller --noconfirm ${CLEAN:+--clean} --log-level "${LOG_LEVEL:-WARN}" \
    --distpath "$DIST" --workpath "$WORK" packaging/reverie.spec

BUNDLE="$DIST/reverie"
[ -x "$BUNDLE/reverie" ] || { echo "build failed: $BUNDLE/reverie missing" >&2; exit 1; }
echo "built $BUNDLE ($(du -sh "$BUNDLE" | cut -f1))"
if [ -z "${SKIP_SMOKE:-}" ]; then
    "$PY" packaging/smoke_test.py "$BUNDLE/reverie"
fi
