"""Attention anchor in progress.md and the context builder's system prompt."""
from __future__ import annotations

from core.config import Settings
from core.harness.anchor import Anchor, AnchorStore, parse_anchor
from core.harness.context import ContextBuilder
from core.harness import messages as m


def test_anchor_round_trips_and_keeps_a_persons_sections(workspace):
    store = AnchorStore(workspace)
    assert store.load().empty
    store.update(goal="Migrate billing to Postgres", next_step="convert the schema")
    workspace.write_document("progress.md", workspace.read("progress.md").text + "\n## Notes\nask Dana first\n",
                             workspace.read("progress.md").hash)
    anchor = store.update(done="schema converted", blockers=["no staging credentials"], next_step="copy data")
    assert anchor == parse_anchor(workspace.read("progress.md").text)
    assert anchor.goal == "Migrate billing to Postgres"
    assert anchor.progress == ("schema converted",) and anchor.blockers == ("no staging credentials",)
    text = workspace.read("progress.md").text
    assert "## Notes\nask Dana first" in text
    assert workspace.history_entries("progress.md")          # every save is undoable


def test_system_prompt_has_memory_without_comments_sessions_and_the_anchor_last(workspace):
    snap = workspace.read_memory()
    workspace.write_memory(snap.text + "\n- Prefers tea over coffee <!-- id:m-1 src:memory/2026-01-01.md#L2 pin -->\n",
                           snap.hash)
    workspace.session_cache.add("s-old", "Worked on the Orion release; tests pass.")
    builder = ContextBuilder(workspace, "BASE PROMPT")
    anchor = Anchor(goal="ship Orion", next_step="tag the release")
    prompt = builder.system_prompt(anchor)
    assert prompt.startswith("BASE PROMPT")
    assert "Prefers tea over coffee" in prompt and "<!--" not in prompt and "src:" not in prompt
    assert "Worked on the Orion release" in prompt
    assert prompt.rstrip().endswith("Next step: tag the release")
    assert prompt.index("MEMORY.md") < prompt.index("Recent sessions") < prompt.index("attention anchor")


def test_memory_is_kept_within_its_budget(workspace):
    snap = workspace.read_memory()
    workspace.write_memory(snap.text + "".join(f"- fact number {i} about things\n" for i in range(3000)), snap.hash)
    settings = Settings().replace("memory", memory_md_tokens=500)
    builder = ContextBuilder(workspace, "base", settings=settings, window=32768)
    block = builder.memory_block()
    assert builder.count(block) <= 520 and "MEMORY.md continues" in block


def test_anchor_is_reinjected_every_n_steps(workspace):
    builder = ContextBuilder(workspace, "base")            # default: every 5 steps
    anchor = Anchor(goal="ship Orion")
    history = [m.user("hi"), m.assistant("hello")]
    for step in range(1, 12):
        built = builder.build(history, step=step, anchor=anchor)
        assert built[0]["role"] == "system"
        reinjected = built[-1]["role"] == "user" and "attention anchor" in built[-1]["content"]
        assert reinjected == (step % 5 == 0)
