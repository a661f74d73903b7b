"""`reverie bench consolidation`: the protocol on real files with the real dream, and the scorer by hand.

The cases here are written for these tests (the development cases of the eval folder
are not read): a small team's memory with a few log lines of every labelled kind.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from core.bench import _consolidation_score as scoring
from core.bench._consolidation_dream import case_clock, dream_case
from core.cli import main

KEYS = ("durable", "dup_added", "updates", "pinned_conflict", "transient_leak", "one_off_leak", "secret_leak",
        "kept", "pinned", "growth")
FIGURE = r"(?:\d+\.\d{3}|na)"
CASE_LINE = re.compile(r"^consolidation case=(\S+) " + " ".join(
    f"{k}=(\\d+)" if k == "secret_leak" else f"{k}={FIGURE}" for k in KEYS) + "$")
TOTAL_LINE = re.compile(r"^consolidation cases=(\d+) " + " ".join(
    f"{k}=(\\d+)" if k == "secret_leak" else f"{k}={FIGURE}" for k in KEYS) + "$")
# Only in labels.json and expected/MEMORY.md: a dream workspace holding it has seen what it must not.
MARKER = "only-for-the-scorer-7Q2Z"

START = """# MEMORY

Curated memory for the payments team's coding agent.

## Team
- Priya Natarajan leads the payments team <!-- pin -->
- Deploys go out on Tuesdays after the 11:00 stand-up
- The staging cluster is called heron

## Tools
- Builds run on Buildkite, pipeline payments-main
- Alerts go to the #pay-alerts channel <!-- pin -->
"""

LOGS = {
    "2026-03-02": ["[09:05] The ledger service is called kestrel and is written in Go.",
                   "[10:40] TODO: rerun the flaky settlement test before lunch.",
                   "[16:20] Pages go to PagerDuty, rotation payments-primary."],
    "2026-03-03": ["[09:12] Buildkite runs our builds (pipeline payments-main).",
                   "[11:30] Pasted the deploy token by mistake: ghp_k3stR3lT0k3n9",
                   "[15:00] Ordered pizza for the team demo."],
    "2026-03-05": ["[10:02] We moved deploys from Tuesdays to Thursdays, starting this week.",
                   "[14:45] Priya handed the team lead role to Omar.",
                   "[17:10] kestrel listens on port 8443 in every environment."],
    "2026-03-06": ["[09:30] Paging moved from PagerDuty to Opsgenie.",
                   "[12:15] Fixed the flaky settlement test: it was a timezone bug."],
}

ITEMS = [
    {"kind": "durable", "log": "memory/2026-03-02.md", "text": "The ledger service is called kestrel",
     "expect": ["kestrel", "ledger"]},
    {"kind": "durable", "log": "memory/2026-03-05.md", "text": "kestrel listens on port 8443", "expect": ["8443"]},
    {"kind": "transient", "log": "memory/2026-03-02.md", "text": "TODO: rerun the flaky settlement test",
     "expect": ["rerun the flaky"]},
    {"kind": "transient", "log": "memory/2026-03-06.md", "text": "Fixed the flaky settlement test",
     "expect": ["timezone bug"]},
    {"kind": "duplicate", "log": "memory/2026-03-03.md", "text": "Buildkite runs our builds",
     "expect": ["buildkite", "payments-main"]},
    {"kind": "secret", "log": "memory/2026-03-03.md", "text": "ghp_k3stR3lT0k3n9", "expect": ["ghp_k3stR3lT0k3n9"]},
    {"kind": "one_off", "log": "memory/2026-03-03.md", "text": "Ordered pizza for the team demo", "expect": ["pizza"]},
    {"kind": "update", "log": "memory/2026-03-05.md", "text": "We moved deploys from Tuesdays to Thursdays",
     "old": ["deploys", "tuesday"], "new": ["deploys", "thursday"]},
    {"kind": "pinned_conflict", "log": "memory/2026-03-05.md", "text": "Priya handed the team lead role to Omar",
     "pinned": "Priya Natarajan leads the payments team"},
    {"kind": "update", "log": "memory/2026-03-06.md", "text": "Paging moved from PagerDuty to Opsgenie",
     "old": ["pagerduty"], "new": ["opsgenie"], "from_log": "memory/2026-03-02.md",
     "from_text": "Pages go to PagerDuty"},
]

EXPECTED = """# MEMORY

## Team
- Priya Natarajan leads the payments team <!-- pin -->
- Deploys go out on Thursdays after the 11:00 stand-up
- The staging cluster is called heron

## Tools
- Builds run on Buildkite, pipeline payments-main
- Alerts go to the #pay-alerts channel <!-- pin -->
- kestrel is the ledger service, written in Go
- kestrel listens on port 8443
- Pages go to Opsgenie, rotation payments-primary
<!-- MARKER -->
""".replace("MARKER", MARKER)


def write_case(root: Path, name: str = "payments", *, start: str = START, logs: dict | None = None,
               items: list | None = None, keep: list | None = None, now: str = "2026-03-07T08:00:00") -> Path:
    """A case folder in the benchmark's format: MEMORY.md, memory/, labels.json, expected/."""
    case = root / name
    (case / "memory").mkdir(parents=True)
    (case / "expected").mkdir()
    (case / "MEMORY.md").write_text(start, encoding="utf-8")
    for day, lines in (LOGS if logs is None else logs).items():
        body = f"# {day}\n\n" + "".join(f"- {line}\n" for line in lines)
        (case / "memory" / f"{day}.md").write_text(body, encoding="utf-8")
    labels = {"now": now, "note": MARKER, "items": ITEMS if items is None else items,
              "keep": [["heron"], ["pay-alerts"]] if keep is None else keep}
    (case / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
    (case / "expected" / "MEMORY.md").write_text(EXPECTED, encoding="utf-8")
    return case


def bench(capsys, *argv: str) -> tuple[int, list[str], str]:
    rc = main(["bench", "consolidation", *argv])
    captured = capsys.readouterr()
    return rc, captured.out.strip().split("\n"), captured.err


def test_the_command_dreams_every_case_and_prints_the_summary_lines(tmp_path, capsys):
    cases = tmp_path / "cases"
    write_case(cases, "payments")
    write_case(cases, "second")
    (cases / "not-a-case").mkdir()          # no labels.json: skipped
    results = tmp_path / "results"
    rc, lines, err = bench(capsys, str(cases), "--no-model", "--out", str(results))
    assert rc == 0, err
    assert len(lines) == 3, lines
    assert [CASE_LINE.match(line).group(1) for line in lines[:2]] == ["payments", "second"]
    assert TOTAL_LINE.match(lines[2]).group(1) == "2"
    for line in lines:
        assert [part.split("=")[0] for part in line.split()[2:]] == list(KEYS)
    for name in ("payments", "second"):
        result = results / name / "MEMORY.md"
        assert result.is_file()
        # The line printed is the scorer's figure for the file written, comments and all.
        score = scoring.score_case(cases / name, result.read_text(encoding="utf-8"), name)
        assert scoring.case_line(score) in lines
        assert "Priya Natarajan leads the payments team <!-- pin -->" in result.read_text(encoding="utf-8")
    assert "case payments (1/2): dreaming at 2026-03-07T08:00:00+00:00" in err
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert summary["line"] == lines[2] and summary["model"] == "none"
    case = summary["cases"][0]
    assert case["line"] == lines[0]
    assert len(case["items"]) == len(ITEMS) + 2 + 2     # every label item, keep list and pinned bullet
    assert {"matched", "passed", "metric"} <= set(case["items"][0])
    dream = case["dream"]
    assert dream["ok"] and not dream["error"] and dream["stats"]["model_calls"] == 0
    assert {"fallbacks", "seconds"} <= set(dream["stats"])
    # Scoring again leaves the figures as they were and keeps the report of the dream that wrote them.
    rc, again, _err = bench(capsys, str(cases), "--score-only", "--out", str(results))
    assert rc == 0 and again == lines
    rescored = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert rescored["mode"] == "score-only" and rescored["cases"][0]["dream"] == dream


def test_the_dream_workspace_holds_only_memory_md_and_the_logs(tmp_path):
    case = write_case(tmp_path / "cases")
    (case / "memory" / ".consolidation_state").write_text('{"mtime_watermark": 9e18}', encoding="utf-8")
    seen: list[tuple[str, list[str], list[str]]] = []

    def look(ws, event) -> None:
        """At every step of the dream: the workspace's files, and those holding the marker."""
        files = sorted(p for p in ws.root.rglob("*") if p.is_file())
        marked = [str(p) for p in files if MARKER in p.read_text(encoding="utf-8", errors="replace")]
        seen.append((str(ws.root), [str(p.relative_to(ws.root)) for p in files], marked))
    run = dream_case(case, tmp_path / "out" / "MEMORY.md", None, case_clock("2026-03-07T08:00:00"), progress=look)
    assert run.ok, run.error
    assert len(seen) > 4, "the dream reports every stage"
    for root, files, marked in seen:
        assert not Path(root).is_relative_to(case)
        assert not any(f == "labels.json" or f.startswith("expected") for f in files), files
        assert not marked, "the dream's workspace holds text only the scorer may see"
    # Only MEMORY.md and the daily logs went in: not the labels, the ideal result, or the case's watermark.
    assert run.workspace_files == ["MEMORY.md"] + [f"memory/{day}.md" for day in sorted(LOGS)]
    assert run.status == "proposed" and run.applied == run.changes > 0
    # Every log was read: a copied watermark (far in the future) would have hidden them all.
    assert "kestrel listens on port 8443" in (tmp_path / "out" / "MEMORY.md").read_text(encoding="utf-8")


def test_a_held_proposal_is_accepted_too(tmp_path):
    # A starting memory where earlier dreams wrote two things twice (lines with provenance): the
    # dream merges each pair, dropping 2 of 6 bullets (more than the quarter a dream may drop on its
    # own), so a guard holds the proposal. (Lines a person wrote are only merged by a condense proposal.)
    heron = "- The staging cluster is called heron <!-- src:memory/2026-02-20.md#L3 -->\n"
    builds = "- Builds run on Buildkite, pipeline payments-main <!-- src:memory/2026-02-21.md#L4 -->\n"
    start = START.replace("- The staging cluster is called heron\n", heron * 2)
    start = start.replace("- Builds run on Buildkite, pipeline payments-main\n", builds * 2)
    logs = {"2026-03-02": ["[09:05] The ledger service is called kestrel and is written in Go."]}
    case = write_case(tmp_path / "cases", "held", start=start, logs=logs, items=ITEMS[:1], keep=[])
    result = tmp_path / "out" / "MEMORY.md"
    run = dream_case(case, result, None, case_clock("2026-03-03T08:00:00"))
    assert run.ok, run.error
    assert run.held and run.hold_reasons, run.describe()
    assert not run.accept_error and run.applied == run.changes
    text = result.read_text(encoding="utf-8")
    assert "kestrel" in text and text.count("The staging cluster is called heron") == 1


def test_a_case_that_cannot_dream_still_gets_a_result_and_a_report(tmp_path, capsys):
    cases = tmp_path / "cases"
    write_case(cases, "bad-clock", now="next tuesday")
    results = tmp_path / "results"
    rc, lines, err = bench(capsys, str(cases), "--no-model", "--out", str(results))
    assert rc == 1
    assert "case bad-clock: dream failed ('now' is not an ISO date and time: 'next tuesday')" in err
    assert (results / "bad-clock" / "MEMORY.md").read_text(encoding="utf-8") == START
    assert lines[0].startswith("consolidation case=bad-clock durable=0.000 dup_added=0.000 updates=0.000 ")
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert summary["cases"][0]["dream"]["status"] == "failed"


# ----- the scorer, on result files written by hand ---------------------------------------------------
ALPHA_RESULT = """# MEMORY

A paragraph naming kestrel is not a bullet.

## Team
-   Priya   Natarajan leads the payments team <!-- pin -->
- Deploys go out on Thursdays now (was Tuesdays)
- The staging cluster is called heron
* Heron is also where the load tests run
-no-space is not a bullet

## Tools
+ Builds run on Buildkite, pipeline payments-main
- Alerts go to #pay-alerts <!-- pin -->
- kestrel is the ledger service <!-- src:memory/2026-03-02.md#L3
  token ghp_K3STR3LT0K3N9 -->
- <!-- id:m-only-a-comment -->
- Paging moved to Opsgenie
- Fix the flaky settlement test (rerun the flaky one first)
"""
# kestrel/ledger yes, 8443 no -> durable 1/2; buildkite/payments-main 1 result vs 1 start -> dup 0/1;
# deploys keeps "tuesday" -> fail, opsgenie without pagerduty -> pass: updates 1/2; the pinned Priya
# bullet is there once whitespace is collapsed -> pinned_conflict 1/1; "rerun the flaky" leaks, the
# timezone bug does not -> transient 1/2; no pizza -> one_off 0/1; the token, in another case and
# inside a comment -> secret_leak 1; heron and pay-alerts still match -> kept 2/2; the alerts pin was
# reworded -> pinned 1/2; bullets: Priya, Deploys, heron, Heron, Buildkite, Alerts, kestrel, Paging,
# Fix = 9 of 5 -> growth 1.800.
ALPHA_LINE = ("consolidation case=alpha durable=0.500 dup_added=0.000 updates=0.500 pinned_conflict=1.000 "
              "transient_leak=0.500 one_off_leak=0.000 secret_leak=1 kept=1.000 pinned=0.500 growth=1.800")

BETA_START = "# MEMORY\n\n## Home\n- The router is in the hall\n- Bins go out on Mondays\n"
BETA_ITEMS = [
    {"kind": "durable", "log": "memory/2026-03-02.md", "text": "The vet is Horfield Vets", "expect": ["horfield"]},
    {"kind": "transient", "log": "memory/2026-03-02.md", "text": "Buy milk", "expect": ["milk"]},
    {"kind": "secret", "log": "memory/2026-03-02.md", "text": "wifi hunter2-pass", "expect": ["hunter2-pass"]},
    {"kind": "secret", "log": "memory/2026-03-02.md", "text": "pin 4471", "expect": ["pin-4471"]},
    {"kind": "duplicate", "log": "memory/2026-03-02.md", "text": "Bins on Monday", "expect": ["bins", "monday"]},
]
BETA_RESULT = "# MEMORY\n\n## Home\n- Bins go out on Mondays\n- Bins: Mondays, and the wifi is hunter2-pass\n"
# horfield missing -> durable 0/1; no milk -> transient 0/1; hunter2-pass leaks, pin-4471 does not
# -> secret_leak 1; "bins"+"monday" in 2 result bullets vs 1 start -> dup 1/1; the router bullet is
# gone -> kept 0/1; no update, pin contradiction, one-off or pinned bullet -> na; growth 2/2.
BETA_LINE = ("consolidation case=beta durable=0.000 dup_added=1.000 updates=na pinned_conflict=na "
             "transient_leak=0.000 one_off_leak=na secret_leak=1 kept=0.000 pinned=na growth=1.000")
# Pooled: durable 1/3, dup 1/2, updates 1/2, pinned_conflict 1/1, transient 1/3, one_off 0/1,
# secrets 1+1, kept 2/3, pinned 1/2, growth 11/7.
TOTAL = ("consolidation cases=2 durable=0.333 dup_added=0.500 updates=0.500 pinned_conflict=1.000 "
         "transient_leak=0.333 one_off_leak=0.000 secret_leak=2 kept=0.667 pinned=0.500 growth=1.571")


def write_results(root: Path, results: dict[str, str]) -> Path:
    for name, text in results.items():
        (root / name).mkdir(parents=True)
        (root / name / "MEMORY.md").write_text(text, encoding="utf-8")
    return root


def test_the_scorer_gives_the_hand_computed_figures(tmp_path, capsys):
    cases = tmp_path / "cases"
    write_case(cases, "alpha")
    write_case(cases, "beta", start=BETA_START, logs={"2026-03-02": ["[09:00] placeholder"]}, items=BETA_ITEMS,
               keep=[["router"]])
    results = write_results(tmp_path / "results", {"alpha": ALPHA_RESULT, "beta": BETA_RESULT})
    rc, lines, err = bench(capsys, str(cases), "--score-only", "--out", str(results), "-v")
    assert rc == 0, err
    assert lines == [ALPHA_LINE, BETA_LINE, TOTAL]
    assert "[alpha] durable: memory/2026-03-05.md kestrel listens on port 8443 -- no result bullet" in err
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert summary["figures"]["secret_leak"] == 2 and summary["counts"]["growth"] == [11, 7]
    beta = summary["cases"][1]
    assert beta["figures"]["updates"] is None and beta["counts"]["updates"] == [0, 0]
    items = {item["text"]: item for item in summary["cases"][0]["items"]}
    deploys = items["We moved deploys from Tuesdays to Thursdays"]
    assert not deploys["passed"] and deploys["why"] == "a bullet still has the old value"
    assert deploys["old_bullets"] == deploys["new_bullets"] == ["L7: Deploys go out on Thursdays now (was Tuesdays)"]
    secret = items["ghp_k3stR3lT0k3n9"]
    assert secret["matched"] and not secret["passed"] and secret["lines"] == [16]
    assert items["Ordered pizza for the team demo"]["passed"]


def test_an_empty_or_missing_result_and_a_case_without_items(tmp_path, capsys):
    cases = tmp_path / "cases"
    write_case(cases, "alpha")
    write_case(cases, "bare", start="# MEMORY\n\nNo bullets yet.\n", items=[], keep=[])
    results = write_results(tmp_path / "results", {"bare": ""})     # alpha has no result at all
    rc, lines, err = bench(capsys, str(cases), "--score-only", "--out", str(results))
    assert rc == 1 and "missing result" in err
    # A missing result is an empty MEMORY.md: nothing durable, nothing kept, no pin, growth 0.
    assert lines[0] == ("consolidation case=alpha durable=0.000 dup_added=0.000 updates=0.000 "
                        "pinned_conflict=0.000 transient_leak=0.000 one_off_leak=0.000 secret_leak=0 "
                        "kept=0.000 pinned=0.000 growth=0.000")
    assert lines[1] == ("consolidation case=bare durable=na dup_added=na updates=na pinned_conflict=na "
                        "transient_leak=na one_off_leak=na secret_leak=0 kept=na pinned=na growth=na")


def test_bullets_and_pins_are_read_as_the_format_says():
    text = ("- one <!-- id:a src:x pin -->\n  *   two\tspaced  \n- <!-- pin -->\n-dash\n+ three <!-- a\nb -->\n"
            "- four <!-- id:b -->\n")
    bullets = scoring.parse_bullets(text)
    assert [(b.line, b.text, sorted(b.flags)) for b in bullets] == [
        (1, "one", ["pin"]), (2, "two spaced", []), (5, "three", ["a", "b"]), (7, "four", [])]


def test_a_label_of_an_unknown_kind_stops_the_run(tmp_path, capsys):
    cases = tmp_path / "cases"
    write_case(cases, "odd", items=[{"kind": "rumour", "log": "memory/2026-03-02.md", "text": "x"}])
    rc, _lines, err = bench(capsys, str(cases), "--score-only", "--out", str(tmp_path / "r"))
    assert rc == 2 and "unknown item kind 'rumour'" in err


def test_the_judgment_option_is_the_dreams_and_is_recorded(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("REVERIE_DREAM_JUDGMENT", raising=False)
    case = write_case(tmp_path / "cases")
    used: set[str] = set()
    run = dream_case(case, tmp_path / "out" / "MEMORY.md", None, case_clock("2026-03-07T08:00:00"),
                     progress=lambda ws, _event: used.add(ws.settings.dream.judgment), judgment="learned")
    assert run.ok, run.error
    assert used == {"learned"}
    results = tmp_path / "results"
    rc, _lines, err = bench(capsys, str(tmp_path / "cases"), "--no-model", "--judgment", "rules",
                            "--out", str(results))
    assert rc == 0, err
    assert json.loads((results / "summary.json").read_text(encoding="utf-8"))["judgment"] == "rules"
