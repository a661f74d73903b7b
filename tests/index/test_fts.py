"""Keyword search: safe queries, CJK (2-character words), snippets, what gets indexed."""
from __future__ import annotations

import random

from tests.support.files import write

from core.index import fts


def test_two_character_chinese_queries_are_found(ws, keyword_index):
    write(ws, "memory/2026-11-30.md", "# 2026-11-30\n\n- 今天开会讨论了数据库迁移\n- 陈伟说固件版本 2.3 改了单位\n- Bought green tea\n")
    keyword_index.sync()
    for query, line in (("开会", 3), ("数据", 3), ("固件", 4), ("陈伟", 4), ("数据库迁移", 3)):
        hits = keyword_index.search(query, mode="fts").hits
        assert hits and (hits[0].path, hits[0].line) == ("memory/2026-11-30.md", line), query
        assert "«" in hits[0].snippet and query[:2] in hits[0].snippet
    one = keyword_index.search("会", mode="fts").hits        # a single character (inside a run)
    assert one[0].line == 3
    last = keyword_index.search("移", mode="fts").hits       # a run's last character
    assert last[0].line == 3
    assert keyword_index.search("议会", mode="fts").hits == [] or keyword_index.search("议会", mode="fts").hits[0].line != 3


def test_a_chinese_question_finds_the_line_sharing_its_rare_words_in_a_big_log(ws, keyword_index):
    # A question is one run of characters with no spaces; the line that answers it shares only some of
    # its words ("锁定", "模型"). 900 lines share its common words ("现在", "哪个"): more than the
    # planner ranks at once, so only the rare words may decide.
    filler = "".join(f"- 第{i}次检查：现在哪个服务都正常，是哪个脚本跑的？\n" for i in range(900))
    write(ws, "MEMORY.md", "## 配置\n- 主模型已锁定为 qwen-max，不再更换\n")
    write(ws, "memory/2026-11-30.md", "# 2026-11-30\n\n" + filler)
    keyword_index.sync()
    hits = keyword_index.search("现在锁定的主模型是哪个？", mode="keyword").hits
    assert (hits[0].path, hits[0].line) == ("MEMORY.md", 2)
    assert {"锁定", "主模型"} <= set(hits[0].words)      # shown as the words they are, not as bigrams


def test_mixed_chinese_and_english_in_one_line(ws, keyword_index):
    write(ws, "MEMORY.md", "## Projects\n- 和Alice一起做Orion项目\n")
    keyword_index.sync()
    assert keyword_index.search("alice", mode="fts").hits[0].line == 2
    assert keyword_index.search("项目", mode="fts").hits[0].line == 2
    assert keyword_index.search("orion 项目", mode="fts").hits[0].snippet.count("«") == 2


def test_or_of_terms_ranks_the_line_with_more_rare_words_first(ws, keyword_index):
    filler = "".join(f"- note {i} about lunch, weather and the garden\n" for i in range(40))
    write(ws, "memory/2026-11-01.md", "# 2026-11-01\n\n- the staging port is 5433\n" + filler +
          "- staging deploy port 5433 moved\n" + filler + "- the deploy went fine\n" + filler)
    keyword_index.sync()
    hits = keyword_index.search("which port does staging deploy use", mode="fts").hits
    assert [h.line for h in hits[:2]] == [44, 3]   # all three rare words, then two
    assert 85 in [h.line for h in hits[:8]]       # one word in the line beats words only nearby


def test_stopwords_only_query_still_searches(ws, keyword_index):
    write(ws, "memory/2026-11-01.md", "- this is it\n")
    keyword_index.sync()
    assert keyword_index.search("this is", mode="fts").hits


def test_snippet_marks_and_window():
    query = fts.parse_query("painted sunrise")
    text = "x " * 300 + "Melanie painted a sunrise over the lake" + " y" * 300
    snip = fts.snippet(text, query)
    assert "«painted»" in snip and "«sunrise»" in snip and snip.startswith("…") and snip.endswith("…")
    assert len(snip) <= fts.SNIPPET_CHARS + 10


def _hostile_queries() -> list[str]:
    pieces = ['"', "'", '""', "AND", "OR", "NOT", "AND(", "OR)", "NEAR", "NEAR(a b, 2)", "-", "--", "*", "**",
              "^", "body:", "context:", "{body context}:", "lines_fts:", "(", ")", "()", ":", ";", "\\", "\x00",
              "\x01\x02\x1f", "\t\n\r", "💥", "👨‍👩‍👧", "中文", "会", "日本語テキスト", "한국어", "ｆｕｌｌｗｉｄｔｈ",
              "İstanbul", "NULL", "'; DROP TABLE lines; --", "%", "_", "?", "[", "]", "+", "a*b", "\"unterminated",
              "col:val", "rank", "bm25()", "\ufffd", "\u2028", "̀", "0", "-1", "1e309", "tea", "TEA", "SELECT"]
    rng = random.Random(7)
    queries = list(pieces)
    while len(queries) < 560:
        queries.append(" ".join(rng.choice(pieces) for _ in range(rng.randint(2, 8))))
    queries += ["x" * 100_000, "中" * 50_000, ("AND( " * 20_000), " ".join(f"w{i}" for i in range(20_000)), "", "   "]
    return queries


def test_hostile_queries_never_raise(ws, keyword_index):
    write(ws, "MEMORY.md", "## Prefs\n- Drinks tea, not coffee <!-- id:m-1 src:memory/2026-11-07.md#L3 -->\n- 喜欢会议\n")
    keyword_index.sync()
    queries = _hostile_queries()
    assert len(queries) >= 500
    for query in queries:
        for mode in ("fts", "hybrid"):   # no model here: hybrid answers with keyword results
            results = keyword_index.search(query, k=5, mode=mode)
            assert isinstance(results.hits, list)
    assert keyword_index.search('"tea" AND(', mode="fts").hits[0].line == 2


def test_unknown_mode_is_a_clear_error(keyword_index):
    import pytest

    from core.errors import CoreError

    with pytest.raises(CoreError, match="unknown search mode"):
        keyword_index.search("tea", mode="bogus")
    # One name per mode everywhere; the older names are still understood.
    assert keyword_index.search("tea", mode="keyword").mode == "keyword"
    assert keyword_index.search("tea", mode="fts").mode == "keyword"
    assert keyword_index.search("tea", mode="hybrid").mode == "keyword"   # no model here: keyword results


def test_common_words_in_a_large_index_stay_bounded_and_correct(ws, keyword_index):
    from core.index import fts as fts_module

    body = "".join(f"- deploy {i} of the service went to staging\n" for i in range(3000))
    write(ws, "memory/2026-11-01.md", body + "- deploy of the billing service to production failed\n")
    keyword_index.sync()
    query = fts_module.parse_query("deploy service production")
    expression, ranked = fts_module.plan(keyword_index.db.conn(), query)
    assert expression != query.match   # too common to rank every match: the planner narrowed it
    hits = keyword_index.search("deploy service production", k=3, mode="fts").hits
    assert hits[0].line == 3001
    only_common = keyword_index.search("deploy service", k=5, mode="fts").hits
    assert len(only_common) == 5 and all("deploy" in h.text for h in only_common)


def test_request_phrasing_is_not_a_search_term(ws):
    from core.config import SearchSettings
    from core.index import SearchIndex
    from core.index.hybrid import Tuning

    assert fts.parse_query("Can you recommend some tips for my commute?").terms == ('"commute"',)
    assert fts.parse_query("recommend tips").terms == ('"recommend"', '"tips"')     # nothing else: kept
    assert fts.parse_query("recommend tips for commute", request_words=True).terms == (
        '"recommend"', '"tips"', '"commute"')
    write(ws, "memory/2026-11-20.md", "# 2026-11-20\n\n- assistant: I recommend these tips, I suggest you try them.\n"
          "- user: my commute is 40 minutes by bus.\n")
    for keep, first in ((False, 4), (True, 3)):
        with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False,
                         tuning=Tuning(request_words=keep)) as index:
            index.sync()
            assert index.search("can you recommend tips for my commute", mode="fts").hits[0].line == first


def test_chinese_question_words_are_not_searched_for_unless_they_are_the_whole_query(ws, keyword_index):
    from core.index.query import parse_query

    assert parse_query("WebDAV 服务器什么时候开始出故障？").words == (
        "webdav", "服务", "务器", "开始", "始出", "出故", "故障")
    assert parse_query("什么").words == ("什么",) and parse_query("会").words == ("会",)
    assert "上" not in parse_query("ECS 上 OpenClaw 配错了").words   # a lone character beside words is noise
    write(ws, "SOUL.md", "- 关键时候站在你这边\n- 有什么问题直接说\n")
    write(ws, "MEMORY.md", "## 运维\n- WebDAV 服务器故障，从 04:37 开始\n")
    keyword_index.sync()
    hit = keyword_index.search("WebDAV 服务器是什么时候开始出故障的？", mode="keyword").hits[0]
    assert (hit.path, hit.line) == ("MEMORY.md", 2)
    assert keyword_index.search("什么", mode="keyword").hits[0].path == "SOUL.md"


def test_the_words_a_hit_holds_are_shown_joined_back_from_bigrams():
    from core.index.query import joined_words

    assert joined_words(("华联", "联股", "股份", "止损")) == ("华联股份", "止损")
    assert joined_words(("tea", "ab", "bc")) == ("tea", "ab", "bc")       # Latin words are never joined
    assert joined_words(("服务", "器是", "故障")) == ("服务", "器是", "故障")  # not overlapping: apart
