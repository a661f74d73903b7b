"""Dreams with the real small GGUF models: whatever the model says, the result is valid."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.dreamkit import GOLDEN, golden_workspace, write_log

from core.config import Settings
from core.dream.review.apply import apply_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.review.operations import pins_kept
from core.dream.review.sources import SourceResolver
from core.dream.state import record_dream_finished
from core.store.memory_md import parse_document

MODELS = ["smollm2-135m-instruct-q4_1", "gemma3-270m-it-q4_k_m"]
NEW_FACTS = ["Maya now drinks green tea instead of black tea",
             "Device 17 firmware 2.4 fixed the timezone bug; its timestamps are UTC now",
             "Decided to export readings as CSV per farm and date range",
             "Jonas covers on-call for Orchard while Maya is on holiday in December",
             "Prefers pytest fixtures over setUp methods"]


def open_model(model_id: str):
    from core.llm import open_client

    return open_client(Settings().replace("model", model=model_id).model)


@pytest.fixture(scope="module", params=MODELS)
def llm(request):
    client = open_model(request.param)
    yield client
    client.close()


@pytest.mark.slow
def test_a_real_model_dream_is_valid_and_applies(workspace, llm):
    golden_workspace(workspace)
    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    refs = write_log(workspace, "2026-11-09", NEW_FACTS,
                     mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    result = run_dream(workspace, llm, now=dt.datetime(2026, 11, 10, 3, tzinfo=dt.timezone.utc))
    assert result.status == "proposed", result.reason
    assert result.stats["model_calls"] >= 2, "Orient and at least one Consolidate call"
    proposal = result.proposal
    text = proposal.new_text
    assert pins_kept(GOLDEN, text) == []
    resolver = SourceResolver(workspace.paths)
    for change in proposal.changes:
        if change.kind == "drop":
            assert change.reason, f"{change.id} drops a bullet without a reason"
        elif "unsourced" in change.flags:
            assert proposal.status == "held"
        else:
            assert change.sources and resolver.all_resolve(change.sources), change
    # Every new fact ends up cited by some bullet (added, updated, merged or seen again), or is
    # listed as not promoted with its reason (a stand-in while someone is on holiday is one-off).
    cited = {s.ref for b in parse_document(text).bullets() for s in b.sources}
    skipped = {ref: item for item in proposal.summary["skipped"] for ref in item["sources"]}
    for ref in refs:
        assert ref in cited or (ref in skipped and skipped[ref]["reason"]), f"{ref} is cited nowhere in the proposal"
    apply_proposal(workspace, proposal.id)
    assert workspace.read_memory().text == text
    again = run_dream(workspace, llm, now=dt.datetime(2026, 11, 11, 3, tzinfo=dt.timezone.utc))
    assert again.status == "nothing" and again.stats["model_calls"] == 0


@pytest.mark.slow
def test_reverie_dream_with_the_default_model(workspace, capsys):
    from core.cli import main

    golden_workspace(workspace)
    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp())
    refs = write_log(workspace, "2026-11-09", NEW_FACTS[:2])
    assert main(["dream", str(workspace.root), "--apply"]) == 0
    out = capsys.readouterr().out
    assert "model calls 2," in out, out          # Orient + one Consolidate batch
    text = workspace.read_memory().text
    assert all(f"src:{ref}" in text for ref in refs), "applied: both facts are cited in MEMORY.md"
