"""`reverie why`, and the dream / proposals / maintain commands end to end."""
from __future__ import annotations

import datetime as dt

import pytest
from tests.support.dreamkit import golden_workspace, write_log

from core.cli import main
from core.dream.review.provenance import format_provenance, why
from core.dream.state import record_dream_finished
from core.errors import NotFoundError


def test_why_shows_daily_log_lines_and_session_messages(workspace):
    write_log(workspace, "2026-11-30", ["Maya drinks tea", "over several lines"])
    workspace.paths.session_log("s-1").write_text('{"role":"system","content":"x"}\n'
                                                  '{"role":"user","content":"I switched to green tea"}\n')
    snap = workspace.read_memory()
    text = snap.text.replace("## Preferences\n", "## Preferences\n- Drinks green tea <!-- id:m-tea "
                             "src:memory/2026-11-30.md#L3-L4 src:session:s-1#2 src:memory/gone.md#L1 pin -->\n")
    workspace.write_memory(text, snap.hash)
    p = why(workspace, "m-tea")
    assert p.in_memory and p.section == "Preferences" and p.flags == ("pin",)
    assert [s.ok for s in p.sources] == [True, True, False]
    assert p.sources[0].lines == ((3, "- Maya drinks tea"), (4, "- over several lines"))
    assert p.sources[1].messages == ((2, "user", "I switched to green tea"),)
    out = format_provenance(p)
    assert "memory/2026-11-30.md:3  - Maya drinks tea" in out
    assert "#2 user: I switched to green tea" in out
    assert "src memory/gone.md#L1  (unresolved)" in out
    with pytest.raises(NotFoundError, match="no bullet"):
        why(workspace, "m-nope")


@pytest.fixture
def golden(workspace):
    golden_workspace(workspace)
    record_dream_finished(workspace.paths, dt.datetime(2026, 11, 3, 21, tzinfo=dt.timezone.utc).timestamp(),
                          now=dt.datetime(2026, 11, 3, 22, tzinfo=dt.timezone.utc))
    write_log(workspace, "2026-11-09", ["Maya prefers dark mode screenshots in the docs",
                                        "Decided to poll live charts every 60 s"],
              mtime=dt.datetime(2026, 11, 9, 20, tzinfo=dt.timezone.utc).timestamp())
    return workspace


def test_dream_proposals_and_why_commands(golden, capsys):
    root = str(golden.root)
    assert main(["dream", root, "--no-model", "--dry-run"]) == 0
    out = capsys.readouterr()
    assert "dream: dry-run" in out.out and "+- Maya prefers dark mode screenshots" in out.out
    assert "orient" in out.err and "prune" in out.err, "a progress bar per stage"
    assert main(["proposals", root, "list"]) == 0
    assert "no open proposals" in capsys.readouterr().out

    assert main(["dream", root, "--no-model"]) == 0
    said = capsys.readouterr().out
    assert "review: reverie proposals" in said
    pid = said.split("review: reverie proposals")[1].split()[2]     # ROOT show PID (the relevance prune's is another)
    main(["proposals", root, "list"])
    assert pid in capsys.readouterr().out
    assert main(["proposals", root, "show", pid]) == 0
    shown = capsys.readouterr().out
    assert "src memory/2026-11-09.md#L3" in shown and "hunks:" in shown
    assert main(["proposals", root, "apply", pid, "--section", "Preferences"]) == 0
    assert "applied 1 change(s)" in capsys.readouterr().out
    assert "dark mode screenshots" in golden.read_memory().text
    assert main(["proposals", root, "reject", pid]) == 0
    assert f"proposal {pid} is now applied (0 change(s) open)" in capsys.readouterr().out
    assert "poll live charts" not in golden.read_memory().text

    bullet = next(line for line in golden.read_memory().text.split("\n") if "dark mode" in line)
    bullet_id = bullet.split("id:")[1].split()[0]
    assert main(["why", root, bullet_id]) == 0
    out = capsys.readouterr().out
    assert "memory/2026-11-09.md:3  - Maya prefers dark mode screenshots in the docs" in out
    assert f"dream {pid}" in out and "[applied]" in out
    assert main(["why", root, "m-missing"]) == 2
    assert "no bullet 'm-missing'" in capsys.readouterr().err
    assert main(["proposals", root, "apply", "d-missing"]) == 2


def test_dream_apply_and_maintain_commands(golden, capsys):
    root = str(golden.root)
    assert main(["dream", root, "--no-model", "--apply"]) == 0
    assert "applied to MEMORY.md" in capsys.readouterr().out
    assert "poll live charts" in golden.read_memory().text
    assert main(["maintain", root, "--no-model"]) == 0
    out = capsys.readouterr().out
    assert "dream: not run" in out
    assert main(["maintain", root, "--no-model", "--dream"]) == 0
    assert "dream: nothing" in capsys.readouterr().out
