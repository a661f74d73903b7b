"""A busy agent's logs (heartbeats every half hour, watchdog lines, bare timestamps) are searchable by
keyword at once and cost one embedding per line *shape*, not one per line."""
from __future__ import annotations

from tests.support.embedders import CountingEmbedder
from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.lines import file_rows, has_content, shape


def _heartbeat_day(day: str, planted: str) -> str:
    lines = [f"# {day}", ""]
    for half_hour in range(48):
        clock = f"{half_hour // 2:02d}:{30 * (half_hour % 2):02d}"
        lines.append(f"- {clock} heartbeat: HEARTBEAT_OK (gateway 200, {100 + half_hour} ms)")
        lines.append(f"- **时间**：{clock}，系统稳定")
        lines.append(clock)                                 # a bare timestamp line
        if half_hour == 20:
            lines.append(planted)
    return "\n".join(lines) + "\n"


def test_shapes_and_content():
    assert shape("- 04:30 heartbeat: HEARTBEAT_OK (gateway 200, 112 ms)") == \
        shape("- 05:00  heartbeat: HEARTBEAT_OK (gateway 200, 97 ms)")
    assert not has_content("04:30") and not has_content("2026-02-03 04:00:00") and not has_content("- [x] 42")
    assert has_content("系统稳定") and has_content("ok") and has_content("Maya drinks tea")


def test_repeated_lines_share_one_embedded_text_and_bare_ones_have_none():
    rows, _ = file_rows("memory/2026-02-03.md", _heartbeat_day("2026-02-03", "- Maya moved the kiln to the garage"))
    heartbeats = [r for r in rows if "HEARTBEAT_OK" in r.text]
    assert len(heartbeats) == 48 and len({r.etext for r in heartbeats}) == 1
    assert "2026" not in heartbeats[0].etext                     # no date, no neighbour: the shape alone
    assert all(r.etext == "" for r in rows if r.text[:2].isdigit())
    planted = next(r for r in rows if "kiln" in r.text)
    assert planted.etext.startswith("Maya moved the kiln") and "2026-02-03" in planted.etext   # a real line: full context


def test_a_busy_workspace_embeds_each_shape_once_and_keyword_search_finds_everything(ws, minilm):
    facts = {"2026-02-03": "- Maya moved the kiln to the garage", "2026-02-04": "- 陈伟把测试库的端口改成了 5433",
             "2026-02-05": "- The glaze order from Seattle arrives on Friday"}
    for day, fact in facts.items():
        write(ws, f"memory/{day}.md", _heartbeat_day(day, fact))
    counting = CountingEmbedder(minilm)
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=counting, background=False) as index:
        index.sync()
        status = index.status()
        assert status.lines == 3 * (1 + 48 * 3 + 1)
        assert status.not_embedded == 3 * (1 + 48) and status.pending_embeddings == 0
        # one text per heartbeat shape (two shapes, shared by all three days) plus each day's real line
        assert len(counting.texts) == 2 + 3
        assert index.search("5433", mode="keyword").hits[0].text == facts["2026-02-04"]
        assert index.search("04:30", k=50, mode="keyword").hits                  # bare timestamps: keyword finds them
        top = index.search("where is the kiln now", k=3, mode="hybrid").hits
        assert top[0].text == facts["2026-02-03"]
