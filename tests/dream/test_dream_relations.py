"""What a dream does with each kind of fact and each relation to MEMORY.md, on real files with the
real embedding model: durable facts added, to-dos/one-offs/secrets skipped with a reason, repeats
cited instead of added, changed facts replaced (the old value kept), pins never overwritten."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.dreamkit import write_log

from core.dream.review.apply import apply_proposal
from core.dream.pipeline.consolidator import run_dream
from core.dream.judgment.kinds import DURABLE, ONE_OFF, SECRET, TRANSIENT, classify_fact

NOW = dt.datetime(2026, 11, 10, 3, tzinfo=dt.timezone.utc)
PASSWORD = "hunter2-Qz8v!Lw3"

MEMORY = """# MEMORY

## User profile
- Prefers tea over coffee in the afternoon <!-- id:m-tea0 -->
- The staging database listens on port 5432 <!-- id:m-port -->
- Rosa Quintero maintains the billing exporter <!-- id:m-rosa -->

## Decisions
- Deploys never happen on Fridays <!-- id:m-fri0 pin -->
- Invoices are exported as PDF once a month <!-- id:m-pdf0 -->
"""


@pytest.mark.parametrize("text, kind", [
    ("TODO: email the landlord about the broken heater", TRANSIENT),
    ("Currently waiting for the CI run to finish", TRANSIENT),
    ("Today I fixed a typo in the onboarding page", ONE_OFF),
    (f"The wiki admin password is {PASSWORD}", SECRET),
    ("Prefers dark mode in every editor", DURABLE),
    ("The team decided to keep backups for 90 days", DURABLE),
    ("Find out why the nightly import skipped two files", TRANSIENT),
    ("Make the invoice export multi-currency.", TRANSIENT),
    ("Create the billing table migration and a test.", TRANSIENT),
    ("Two integration tests still fail on the new runner", TRANSIENT),
    ("The Heron job logs look healthy at step 4", TRANSIENT),
    ("Implemented the retry queue with a bounded buffer", TRANSIENT),
    ("Lena is away next Thursday (school trip); no reviews that day", ONE_OFF),
    ("Omar will be on leave from the 3rd for a week", ONE_OFF),
    ("Make sure every migration has a down step", DURABLE),
    ("Update: the staging bucket moved to eu-west-2", DURABLE),
])
def test_every_fact_gets_a_kind(text, kind):
    assert classify_fact(text).kind == kind, classify_fact(text)


@pytest.fixture
def dreamed(workspace):
    workspace.write_memory(MEMORY, workspace.read_memory().hash, reason="test set-up")
    facts = {
        "new": "The nightly backup job writes to the bucket rv-archive-eu",
        "repeat": "Rosa Quintero maintains the billing exporter",
        "reworded": "Invoices get exported as PDF once every month",
        "reversed": "Prefers coffee over tea in the afternoon",
        "moved": "The staging database moved from port 5432 to port 6543",
        "pinned": "Deploys on Fridays are fine now",
        "todo": "TODO: renew the TLS certificate before it expires",
        "secret": f"The staging database password is {PASSWORD}",
        "swapped": "Rosa Quintero maintains the billing dashboard",
    }
    refs = dict(zip(facts, write_log(workspace, "2026-11-09", list(facts.values()))))
    result = run_dream(workspace, None, now=NOW)
    assert result.status in ("proposed", "held"), result.reason
    return workspace, result.proposal, facts, refs


def changes_citing(proposal, ref):
    return [c for c in proposal.changes if ref in c.sources]


def test_a_new_durable_fact_is_added(dreamed):
    _ws, proposal, facts, refs = dreamed
    [change] = changes_citing(proposal, refs["new"])
    assert change.op == "add" and facts["new"] in change.after


def test_a_repeat_and_a_rewording_only_cite_the_bullet_they_repeat(dreamed):
    _ws, proposal, facts, refs = dreamed
    for name, bullet in (("repeat", "m-rosa"), ("reworded", "m-pdf0")):
        [change] = changes_citing(proposal, refs[name])
        assert change.op == "sources" and f"id:{bullet}" in change.after, (name, change)
    assert proposal.new_text.count("Invoices") == 1
    assert proposal.summary["relations"]["duplicate"] >= 2


def test_a_traded_word_is_a_fact_of_its_own(dreamed):
    _ws, proposal, facts, refs = dreamed
    [change] = changes_citing(proposal, refs["swapped"])
    assert change.op == "add", change
    assert "billing exporter" in proposal.new_text and "billing dashboard" in proposal.new_text


def test_a_reversed_preference_and_a_moved_value_replace_the_old_bullet(dreamed):
    ws, proposal, facts, refs = dreamed
    for name, bullet, old in (("reversed", "m-tea0", "tea over coffee"), ("moved", "m-port", "port 5432")):
        [change] = changes_citing(proposal, refs[name])
        assert change.op == "replace" and f"id:{bullet}" in change.after, (name, change)
        assert old in change.before
    assert "tea over coffee" not in proposal.new_text
    assert "6543" in proposal.new_text and "port 5432" not in proposal.new_text
    superseded = {s["bullet_id"]: s for s in proposal.summary["superseded"]}
    assert "tea over coffee" in superseded["m-tea0"]["text"]
    apply_proposal(ws, proposal.id)
    kept = (ws.paths.memory_dir / "superseded.md").read_text(encoding="utf-8")
    assert "port 5432" in kept and "tea over coffee" in kept


def test_a_fact_against_a_pin_is_held_for_a_person(dreamed):
    _ws, proposal, facts, refs = dreamed
    assert "Deploys never happen on Fridays" in proposal.new_text
    assert not changes_citing(proposal, refs["pinned"])
    [held] = [s for s in proposal.summary["skipped"] if refs["pinned"] in s["sources"]]
    assert held["kind"] == "conflict" and "m-fri0" in held["reason"]


def test_to_dos_and_secrets_are_skipped_with_a_reason_and_the_secret_never_shown(dreamed):
    _ws, proposal, facts, refs = dreamed
    skipped = {s["sources"][0]: s for s in proposal.summary["skipped"]}
    assert skipped[refs["todo"]]["kind"] == "transient" and skipped[refs["todo"]]["reason"]
    assert skipped[refs["secret"]]["kind"] == "secret"
    assert PASSWORD not in skipped[refs["secret"]]["fact"]
    assert "TLS certificate" not in proposal.new_text and PASSWORD not in proposal.new_text
    assert PASSWORD not in repr(proposal.summary) and PASSWORD not in repr(proposal.changes)
