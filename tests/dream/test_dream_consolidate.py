"""The four stages with a scripted model: operations are validated, guards hold what they must."""
from __future__ import annotations

import datetime as dt
import json

import pytest
from tests.support.dreamkit import GOLDEN, all_add, facts_in, golden_workspace, handles_in, router, write_log
from tests.support.fakes import ScriptedLLM

from core.cancel import CancelToken
from core.dream.pipeline.consolidator import STAGES, iter_dream, run_dream
from core.dream.review.operations import pins_kept
from core.dream.review.proposals import list_proposals
from core.dream.state import load_state
from core.store.memory_md import parse_document

NOW = dt.datetime(2026, 11, 10, 3, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def golden(workspace):
    golden_workspace(workspace)
    from core.dream.state import record_dream_finished

    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    return workspace


def new_day(ws, facts, day="2026-11-09"):
    return write_log(ws, day, facts, mtime=dt.datetime.fromisoformat(day + "T20:00:00+00:00").timestamp())


def test_the_model_confirms_or_is_overruled_and_every_answer_is_counted(golden):
    refs = new_day(golden, ["Device 17 switched from local time to UTC with firmware 2.4",
                            "Prefers pytest fixtures over setUp methods",
                            "CSV export per farm and date range for the agronomist"])

    def decide(messages):
        facts, handles = facts_in(messages), handles_in(messages)
        by_text = {text: handle for handle, text in handles.items()}
        ops = []
        for number, fact in enumerate(facts, start=1):
            if fact.startswith("Device 17"):     # a real update: the model agrees
                ops.append({"fact": number, "relation": "update",
                            "target": by_text["Device 17 sends local time instead of UTC"]})
            elif fact.startswith("Prefers pytest"):  # a duplicate the model calls new: overruled
                ops.append({"fact": number, "relation": "new", "target": ""})
            else:                                 # a new fact the model wants to replace a bullet with
                ops.append({"fact": number, "relation": "update", "target": by_text.get(
                    "Orchard: soil-moisture dashboard for three farms", "B1")})
        return ops

    llm = ScriptedLLM(router(decide))
    result = run_dream(golden, llm, now=NOW)
    assert result.status == "proposed" and not result.held, result.reason
    proposal = result.proposal
    text = proposal.new_text
    replace = next(c for c in proposal.changes if c.op == "replace")
    assert replace.bullet_id == "m-d001" and "Device 17 switched to UTC with firmware 2.4" in replace.after
    assert "local time" not in replace.after and refs[0] in replace.sources
    assert "Device 17 sends local time" not in text
    fixtures = parse_document(text).find("m-b003")
    assert refs[1] in [s.ref for s in fixtures.sources] and text.count("pytest fixtures") == 1
    assert "CSV export per farm and date range for the agronomist <!-- id:" in text
    assert "Orchard: soil-moisture dashboard for three farms" in text
    assert result.stats["model_decided"] == 1 and result.stats["rejected_answers"] == 2
    assert result.stats["fallbacks"] == 2
    superseded = proposal.summary["superseded"]
    assert superseded[0]["text"] == "Device 17 sends local time instead of UTC"
    assert superseded[0]["valid_from"] == "2026-11-03" and superseded[0]["valid_until"] == "2026-11-09"
    assert pins_kept(GOLDEN, text) == []
    assert load_state(golden.paths).mtime_watermark >= dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp()
    # The newest proposal besides the relevance prune's suggestions (a proposal of their own, always held).
    assert [p for p in list_proposals(golden.paths) if p.summary.get("kind") != "relevance"][0].id == proposal.id


def test_consolidate_prompts_stay_compact(golden):
    new_day(golden, ["Drinks rooibos in the evening"])
    llm = ScriptedLLM(router(all_add))
    run_dream(golden, llm, now=NOW)
    consolidate_prompt = llm.calls[-1][-1]["content"]
    assert "Drinks rooibos" in consolidate_prompt
    assert "Orchard" not in consolidate_prompt, "only related bullets are shown, not the whole MEMORY.md"
    assert "<!--" not in consolidate_prompt


def test_answers_about_pinned_or_unshown_bullets_are_overruled(golden):
    new_day(golden, ["Maya moved to Porto and works from there now", "Keycloak realm is lumen"])

    def decide(messages):
        handles = handles_in(messages)
        pinned = next((h for h, t in handles.items() if t.startswith("Maya is a backend")), "B1")
        return [{"fact": 1, "relation": "update", "target": pinned},
                {"fact": 2, "relation": "duplicate", "target": "B9"},
                {"fact": 7, "relation": "update", "target": "B1"}]     # no such fact in the batch

    result = run_dream(golden, ScriptedLLM(router(decide)), now=NOW)
    text = result.proposal.new_text
    assert "- Maya is a backend engineer in Lisbon <!-- id:m-a001 src:memory/2026-11-01.md#L3 pin -->" in text
    assert "Keycloak realm is lumen <!-- id:" in text
    assert not [c for c in result.proposal.changes if c.kind == "drop"]
    assert result.stats["model_decided"] == 0


def test_garbage_from_the_model_falls_back_to_deterministic_adds(golden):
    new_day(golden, ["Maya prefers dark mode screenshots", "Decided to use polling every 60 s for live charts"])
    garbage = ScriptedLLM(lambda m: '{"ops": [{"fact": "x", "op": "rewrite"}, 7], "goals": 5}')
    result = run_dream(golden, garbage, now=NOW)
    assert result.status == "proposed"
    added = {c.after.split(" <!--")[0][2:]: c.section for c in result.proposal.changes if c.kind == "add"}
    assert added == {"Maya prefers dark mode screenshots": "Preferences",
                     "Decided to use polling every 60 s for live charts": "Decisions"}
    assert result.stats["fallbacks"] == 2


def test_a_failing_model_is_given_up_and_the_dream_still_finishes(golden):
    from core.errors import ModelWorkerCrashed

    new_day(golden, [f"Irrigation valve {n} is in the north field" for n in range(14)])

    class Crashing(ScriptedLLM):
        def complete(self, messages, **kwargs):
            self.calls.append(messages)
            raise ModelWorkerCrashed("the worker died")

    llm = Crashing([])
    result = run_dream(golden, llm, now=NOW)
    assert result.status == "proposed" and len(llm.calls) == 2, "two failures, then no more calls"
    assert sum(1 for c in result.proposal.changes if c.kind == "add") == 14
    assert any("failed twice" in n for n in result.notes)


def test_the_budget_never_cuts_what_the_person_curated(golden):
    golden.settings = golden.settings.replace("memory", memory_md_tokens=150)
    before = golden.read_memory().text
    new_day(golden, ["Jonas covers on-call for Orchard on weekends"])
    result = run_dream(golden, ScriptedLLM(router(all_add)), now=NOW)
    proposal = result.proposal
    assert not [c for c in proposal.changes if c.kind == "drop" and c.op in ("budget", "merge")]
    assert "Jonas covers on-call" in proposal.new_text
    kept = proposal.new_text.split("\n")
    assert all(line in kept for line in before.split("\n") if line.strip()), "every curated line stays"
    assert pins_kept(GOLDEN, proposal.new_text) == []
    # Nothing in it is stale or repeated: the dream says so instead of cutting.
    assert any("over its budget" in note for note in result.notes)

def test_existing_near_duplicates_are_merged_with_a_reason(golden):
    snap = golden.read_memory()
    text = snap.text.replace("## Learnings\n", "## Learnings\n- device 17 sends LOCAL time instead of UTC. "
                             "<!-- id:m-d009 src:memory/2026-11-02.md#L5 -->\n")
    golden.write_memory(text, snap.hash)
    new_day(golden, ["Something unrelated about farm managers"])
    result = run_dream(golden, ScriptedLLM(router(all_add)), now=NOW)
    merge = [c for c in result.proposal.changes if c.op == "merge"]
    assert {c.kind for c in merge} == {"update", "drop"} and len({c.group for c in merge}) == 1
    dropped = next(c for c in merge if c.kind == "drop")
    assert "near-duplicate of" in dropped.reason


def test_nothing_new_is_a_return_value_and_resets_the_gate(golden):
    before = load_state(golden.paths)
    result = run_dream(golden, ScriptedLLM([]), now=NOW)
    assert result.status == "nothing" and result.proposal is None
    assert list_proposals(golden.paths) == []
    assert load_state(golden.paths).last_run_time() == NOW != before.last_run_time()


def test_dry_run_writes_nothing(golden):
    new_day(golden, ["The staging database runs on Postgres 16"])
    state_before = golden.paths.consolidation_state.read_bytes()
    memory_before = golden.read_memory().text
    result = run_dream(golden, ScriptedLLM(router(all_add)), now=NOW, dry_run=True)
    assert result.status == "dry-run" and "The staging database runs on Postgres 16" in result.proposal.new_text
    assert list_proposals(golden.paths) == []
    assert golden.paths.consolidation_state.read_bytes() == state_before
    assert golden.read_memory().text == memory_before


def test_progress_names_every_stage_in_order(golden):
    new_day(golden, ["The bike shed key hangs by the back door"])     # a durable fact, so a proposal follows
    events = list(iter_dream(golden, ScriptedLLM(router(all_add)), now=NOW))
    starts = [e.stage for e in events if e.status == "start"]
    assert tuple(starts) == STAGES
    assert events[-1].status == "finished" and events[-1].result.status == "proposed"


@pytest.mark.parametrize("stop_after", STAGES)
def test_a_dream_stops_at_the_next_stage_boundary_and_writes_nothing(golden, stop_after):
    new_day(golden, ["A fact that must not be consolidated yet"])
    state_before = golden.paths.consolidation_state.read_bytes()
    done = []

    def should_stop():
        return "the agent became active" if stop_after in done else ""

    for event in iter_dream(golden, ScriptedLLM(router(all_add)), now=NOW, should_stop=should_stop):
        if event.status == "done" and event.stage in STAGES:
            done.append(event.stage)
        result = event.result
    assert result.status == "stopped" and "agent became active" in result.reason
    assert done[-1] == stop_after
    assert list_proposals(golden.paths) == []
    assert golden.paths.consolidation_state.read_bytes() == state_before
    assert golden.read_memory().text == GOLDEN


def test_a_cancelled_model_call_stops_the_dream(golden):
    new_day(golden, ["A fact"])
    token = CancelToken()

    def reply(messages):
        token.cancel("person pressed cancel")
        return json.dumps({"goals": [], "decisions": [], "patterns": [], "preferences": []})

    result = run_dream(golden, ScriptedLLM(reply), now=NOW, cancel=token)
    assert result.status == "stopped" and "person pressed cancel" in result.reason
    assert list_proposals(golden.paths) == []


def test_only_one_dream_runs_at_a_time(golden):
    new_day(golden, ["A fact two dreams race for"])
    first = iter_dream(golden, ScriptedLLM(router(all_add)), now=NOW)
    assert next(first).stage == "orient"           # the first dream holds the workspace
    busy = run_dream(golden, ScriptedLLM([]), now=NOW)
    assert busy.status == "busy" and "another dream" in busy.reason
    events = list(first)
    assert events[-1].result.status == "proposed"
    assert run_dream(golden, ScriptedLLM([]), now=NOW).status == "nothing"


def test_a_session_summary_line_about_one_day_is_not_promoted_but_is_recorded(golden):
    golden.session_cache.add("s-9", "Migrated the export job to the new queue worker. Talked about the weather today.")
    result = run_dream(golden, ScriptedLLM(router(all_add)), now=dt.datetime.now(dt.timezone.utc))
    text = result.proposal.new_text
    assert "Migrated the export job to the new queue worker. <!-- id:" in text and "src:session:s-9" in text
    assert "weather" not in text
    skipped = result.proposal.summary["skipped"]
    assert [(s["fact"], s["sources"], s["kind"]) for s in skipped] == [
        ("Talked about the weather today.", ["session:s-9"], "one-off")]
    assert skipped[0]["reason"].startswith("one-off: ")


def test_a_fact_whose_source_no_longer_resolves_is_flagged_unsourced_and_held(golden):
    new_day(golden, ["Keycloak realm is lumen", "Staging disk alerts fire at 80 percent"])

    def reply(messages):
        if "name what matters" in messages[0]["content"]:
            # While the dream runs, the person rewrites the day's log and removes a line.
            write_log(golden, "2026-11-09", ["Keycloak realm is lumen"])
            return json.dumps({"goals": [], "decisions": [], "patterns": [], "preferences": []})
        return json.dumps({"ops": all_add(messages)})

    result = run_dream(golden, ScriptedLLM(reply), now=NOW)
    changes = {c.after.split(" <!--")[0][2:]: c for c in result.proposal.changes if c.kind == "add"}
    assert "unsourced" not in changes["Keycloak realm is lumen"].flags
    flagged = changes["Staging disk alerts fire at 80 percent"]
    assert "unsourced" in flagged.flags and "unsourced -->" in flagged.after
    assert result.held and any("no resolvable source" in r for r in result.proposal.hold_reasons)
