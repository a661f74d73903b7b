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
  # Two real-model runs (~15-60 min each on 2 loaded cores) that were never run to completion
  # after their last change; kept out of CI until one is measured. RUN_HEAVY=1 runs them too.
  marker=()
  if [ "${RUN_HEAVY:-}" != "1" ]; then
    marker=(--deselect tests/bench/test_retention_bench.py::test_retention_bench_small_run
            --deselect tests/harness/test_real_model.py::test_long_conversation_through_the_real_compactor)
  fi
fi
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${marker[@]}" "$@"
