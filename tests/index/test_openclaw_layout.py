"""Every log an agent wrote is searchable: OpenClaw's hook-named logs, nested month and archive folders,
undated notes under memory/, and the top-level files (USER.md, SOUL.md, TOOLS.md, IDENTITY.md, AGENTS.md,
HEARTBEAT.md). A synthetic workspace with the shapes real ones have (English and Chinese)."""
from __future__ import annotations

import datetime as dt
import os

from tests.support.files import write

from core.index.filters import SearchFilter, kind_of
from core.index.lines import IndexOptions, file_day, file_rows, indexed_files, is_indexed

FILES = {
    "MEMORY.md": "# MEMORY\n\n- Maya drinks tea\n",
    "USER.md": "# USER.md\n\n- **Name:** Lin Rui\n- **Timezone:** Asia/Shanghai\n",
    "SOUL.md": "# SOUL.md\n\nBe brief; never invent facts.\n",
    "TOOLS.md": "# TOOLS.md\n\n- 服务器：4核4G 50M带宽，电费每月 30 元\n",
    "IDENTITY.md": "# IDENTITY.md\n\n- Name: Pixel the curator\n",
    "AGENTS.md": "# AGENTS.md\n\nRead memory/ before answering.\n",
    "HEARTBEAT.md": "# HEARTBEAT.md\n\n- check the kiln temperature every hour\n",
    "memory/2026-02-03.md": "# 2026-02-03\n\n- plain daily log: glaze order placed\n",
    "memory/2026-02-04-kiln-repair.md": "# Session: kiln repair\n\n- the kiln relay was replaced\n",
    "memory/2026-02-05-1432.md": "# 2026-02-05 14:32\n\n- 电池电压 3.7V，充电正常\n",
    "memory/2026-01/2026-01-20.md": "# 2026-01-20\n\n- nested month folder: studio rent paid\n",
    "memory/archive/2025-12/2025-12-24-xmas.md": "# xmas\n\n- archived in a month folder: gift list sent\n",
    "memory/archive/2025-11-02.md": "# 2025-11-02\n\n- archived flat: old ledger closed\n",
    "memory/people/maya.md": "# Maya\n\n- undated note: Maya teaches pottery on Tuesdays\n",
    "memory/superseded.md": "- old kiln: Skutt 818\n",
}
NOT_INDEXED = {
    "notes.md": "stray top-level note\n",
    "memory/.obsidian/workspace.md": "hidden folder\n",
    "memory/2026-02-03.json": "{}\n",
    "sessions/cache.jsonl": "{}\n",
}


def _workspace(ws):
    for rel, text in {**FILES, **NOT_INDEXED}.items():
        write(ws, rel, text)
    return ws


def test_every_log_and_every_top_level_openclaw_file_is_indexed(ws, tmp_path):
    _workspace(ws)
    outside = write(tmp_path, "elsewhere", "outside words\n")
    os.symlink(outside, ws / "memory" / "2026-02-09.md")            # a file link out
    os.symlink(tmp_path, ws / "memory" / "linked-folder")            # a folder link: never entered
    assert sorted(indexed_files(ws)) == sorted(FILES)
    for rel in FILES:
        assert is_indexed(rel), rel
    for rel in NOT_INDEXED:
        assert not is_indexed(rel), rel


def test_day_and_kind_come_from_the_file_name_wherever_it_is_nested():
    assert file_day("memory/2026-02-04-kiln-repair.md") == dt.date(2026, 2, 4)
    assert file_day("memory/2026-02-05-1432.md") == dt.date(2026, 2, 5)
    assert file_day("memory/archive/2025-12/2025-12-24-xmas.md") == dt.date(2025, 12, 24)
    assert file_day("memory/people/maya.md") is None
    assert kind_of("memory/archive/2025-12/2025-12-24-xmas.md") == "daily"
    assert kind_of("memory/2026-01/2026-01-20.md") == "daily"
    assert kind_of("memory/people/maya.md") == "memory"
    for name in ("USER.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "AGENTS.md", "HEARTBEAT.md"):
        assert kind_of(name) == "memory"


def test_search_finds_each_shape_and_the_kind_filter_tells_logs_from_curated_files(ws, keyword_index):
    _workspace(ws)
    keyword_index.sync()

    def paths(query, **kw):
        return {h.path for h in keyword_index.search(query, k=20, mode="keyword", **kw)}

    assert paths("relay") == {"memory/2026-02-04-kiln-repair.md"}
    assert paths("电池") == {"memory/2026-02-05-1432.md"}
    assert paths("电") == {"memory/2026-02-05-1432.md", "TOOLS.md"}      # one character still finds both
    assert paths("rent") == {"memory/2026-01/2026-01-20.md"}
    assert paths("gift") == {"memory/archive/2025-12/2025-12-24-xmas.md"}
    assert paths("ledger") == {"memory/archive/2025-11-02.md"}
    assert paths("Timezone") == {"USER.md"}
    assert paths("kiln temperature") >= {"HEARTBEAT.md"}
    assert "memory/people/maya.md" in paths("pottery")
    daily = SearchFilter.of("daily")
    assert paths("kiln", kinds=daily.kinds) == {"memory/2026-02-04-kiln-repair.md"}
    curated = paths("kiln", kinds=("memory",))
    assert curated == {"HEARTBEAT.md", "memory/superseded.md"}
    assert paths("pottery", kinds=("daily",)) == set()
    assert paths("gift", since="2025-12-01", until="2025-12-31") == {"memory/archive/2025-12/2025-12-24-xmas.md"}


def test_a_log_moved_into_a_nested_archive_keeps_being_found(ws, keyword_index):
    write(ws, "memory/2026-02-04-kiln-repair.md", FILES["memory/2026-02-04-kiln-repair.md"])
    keyword_index.sync()
    (ws / "memory" / "archive" / "2026-02").mkdir(parents=True)
    os.replace(ws / "memory" / "2026-02-04-kiln-repair.md", ws / "memory" / "archive" / "2026-02" / "2026-02-04-kiln-repair.md")
    report = keyword_index.sync()
    assert report.removed == ["memory/2026-02-04-kiln-repair.md"]
    assert report.added == ["memory/archive/2026-02/2026-02-04-kiln-repair.md"]
    hit = keyword_index.search("relay", mode="keyword").hits[0]
    assert (hit.path, hit.kind) == ("memory/archive/2026-02/2026-02-04-kiln-repair.md", "daily")


def test_a_table_row_is_found_by_its_header_words(ws, keyword_index):
    text = ("# TOOLS\n\n| bot | 端口 | owner |\n|---|---|---|\n| CHENLU | 18794 | lin |\n"
            "| BABY | 18795 | wang |\n\nPorts are fixed.\n")
    write(ws, "TOOLS.md", text)
    keyword_index.sync()
    hits = keyword_index.search("CHENLU 端口", mode="keyword").hits
    assert 5 in [h.line for h in hits[:2]]          # the row holding the port, read with its header
    assert 6 in [h.line for h in keyword_index.search("owner wang", mode="keyword").hits[:2]]
    rows = {r.line: r for r in file_rows("TOOLS.md", text)[0]}
    assert "端口" in rows[6].context and "端口" in rows[6].etext
    assert "owner" not in rows[8].etext                # the line after the table is not one of its rows


def test_a_table_rows_header_words_are_its_own_words(ws, keyword_index):
    # "| mailer | 2525 |" is a port only under "| service | port |": a question naming the column holds
    # a word of the row, so the row is not a "nearby" line ranked after every line holding any word.
    text = "# TOOLS\n\n| service | port |\n|---|---|\n| mailer | 2525 |\n\n- port forwarding stays off\n"
    write(ws, "TOOLS.md", text)
    keyword_index.sync()
    row = next(h for h in keyword_index.search("port", mode="keyword").hits if h.line == 5)
    assert (row.match, row.words) == ("words", ("port",))
    assert row.text == "| mailer | 2525 |"                     # what a hit shows is the row as written
    rows = {r.line: r for r in file_rows("TOOLS.md", text)[0]}
    assert "port" in rows[5].body and "port" not in rows[5].etext.split("\n")[0]
    assert "port" not in rows[3].body.replace("| service | port |", "")   # the header row is itself, once
    bare = {r.line: r for r in file_rows("TOOLS.md", text, IndexOptions(table_header=False))[0]}
    assert bare[5].body == "| mailer | 2525 |" and "port" in bare[5].context


def test_a_chinese_log_is_found_by_its_date_written_the_chinese_way(ws, keyword_index):
    write(ws, "memory/2026-02-12.md", "# 2026-02-12\n\n- 晚上网关崩溃，重启后恢复\n")
    write(ws, "memory/2026-03-12.md", "# 2026-03-12\n\n- 网关崩溃，换了端口\n")
    write(ws, "memory/2026-02-13.md", "# 2026-02-13\n\n- Gateway crashed again\n")
    keyword_index.sync()
    hit = keyword_index.search("2月12号网关为什么崩溃？", mode="keyword").hits[0]
    assert hit.path == "memory/2026-02-12.md"
    chinese = file_rows("memory/2026-02-12.md", "- 网关崩溃\n")[0][0]
    english = file_rows("memory/2026-02-13.md", "- Gateway crashed\n")[0][0]
    assert "2026年2月12日" in chinese.context and "年" not in english.context
    assert "年" not in chinese.etext                # the embedded text (and its cached vector) is unchanged


def test_a_top_level_file_saved_through_the_workspace_is_searchable_at_once(tmp_path):
    from core.workspace import Workspace

    workspace = Workspace.create(tmp_path / "agent")
    workspace.keyword_only_index()
    write(workspace.root, "USER.md", "# USER.md\n\n- **Name:** Lin Rui\n")
    write(workspace.root, "SOUL.md", "# SOUL.md\n\nBe brief.\n")
    workspace.sync_index()
    try:
        for rel, old, new in (("USER.md", "Lin Rui", "- **Timezone:** Asia/Shanghai"),
                              ("SOUL.md", "brief", "Answer 中文问题 in Chinese.")):
            snapshot = workspace.documents.read(rel)
            workspace.write_document(rel, snapshot.text + new + "\n", snapshot.hash)
            found = {(h.path, h.line) for h in workspace.search(new.split()[-1].strip("."), mode="keyword").hits}
            assert (rel, 4) in found, (rel, found)
            assert workspace.search(old, mode="keyword").hits[0].path == rel
        workspace.undo("USER.md")
        assert workspace.search("Shanghai", mode="keyword").hits == []
    finally:
        workspace.close()
