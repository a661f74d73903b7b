#!/usr/bin/env bash
# Sets up (idempotent) and runs the test suite. Slow tests (@pytest.mark.slow:
# long real-model runs, the bundle build, crash loops) run in CI (CI=true) or
# with RUN_SLOW=1; the default local run skips them to stay under ~20 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f .venv/.reverie-setup-done ] && [ .venv/.reverie-setup-done -nt pyproject.toml ] || bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 QT_QPA_PLATFORM=offscreen TOKENIZERS_PARALLELISM=false
marker=(-m "not slow")
if [ "${CI:-}" = "true" ] || [ "${RUN_SLOW:-}" = "1" ]; then
  marker=()
fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${marker[@]}" "$@"
