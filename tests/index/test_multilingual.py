"""Chinese meaning search: the multilingual model finds paraphrases MiniLM (English-only) cannot."""
from __future__ import annotations

import pytest

from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.embedder import MULTILINGUAL_MODEL
from core.index.embedding import default_embedder

LOG = "# 2026-11-30\n\n- 王芳喜欢喝绿茶，不喝咖啡。\n- 今天天气晴朗，气温二十度。\n- 测试环境的数据库端口是 5433。\n- 晚饭吃了饺子。\n"


def test_multilingual_model_finds_a_chinese_paraphrase(ws):
    write(ws, "memory/2026-11-30.md", LOG)
    settings = SearchSettings(embedding_model=MULTILINGUAL_MODEL)
    with SearchIndex(ws, ws / ".reverie" / "index.db", settings, background=False) as index:
        index.sync()
        assert index.status().embedding_model.startswith(MULTILINGUAL_MODEL)
        hit = index.search("她平时爱喝什么饮料？", k=1, mode="vector").hits[0]
        assert hit.line == 3
        assert index.search("测试库用哪个端口连接？", k=1, mode="hybrid").hits[0].line == 5
    assert default_embedder(MULTILINGUAL_MODEL).embed_batch(["你好", "hello"]).shape == (2, 512)


@pytest.mark.slow   # two real models
def test_e5_reads_chinese_with_its_query_form_and_its_floor_on_its_own_scale(ws):
    from core.index.calibration import MINILM_BACKGROUND, background, model_floor
    from core.index.embedder import E5_MODEL
    from core.index.embedders import in_process_embedder

    write(ws, "memory/2026-11-30.md", LOG)
    e5 = default_embedder(E5_MODEL)
    queries, passages = e5.embed_query(["她平时爱喝什么饮料？"]), e5.embed_batch(["她平时爱喝什么饮料？"])
    assert queries.shape == (1, 384) and float(queries[0] @ passages[0]) < 0.999     # "query: " is not "passage: "
    chance = background(e5)
    assert chance > 0.5                                       # unrelated sentences are close under e5 ...
    assert model_floor(0.25, chance) > chance                 # ... so its floor sits above that, not at 0.25
    assert model_floor(0.25, MINILM_BACKGROUND) == 0.25       # MiniLM's floors are what was measured
    assert abs(background(in_process_embedder("")) - MINILM_BACKGROUND) < 0.002   # the constant is measured
    settings = SearchSettings(embedding_model=E5_MODEL)
    with SearchIndex(ws, ws / ".reverie" / "index.db", settings, background=False) as index:
        index.sync()
        assert index.search("她平时爱喝什么饮料？", k=1, mode="meaning").hits[0].line == 3
        assert index.search("测试库用哪个端口连接？", k=1, mode="hybrid").hits[0].line == 5


def test_which_model_reads_a_text():
    from core.index.bilingual import is_cjk_text

    assert is_cjk_text("部署到 staging 环境") and is_cjk_text("- 王芳喜欢喝绿茶\n2026-11-30 Monday 30 November 2026")
    assert not is_cjk_text("Met Chen Wei (陈伟) at the office today") and not is_cjk_text("Maya drinks tea")
    assert not is_cjk_text("12:30 -- 42")


@pytest.mark.slow   # both real models
def test_bilingual_compares_english_as_minilm_and_chinese_as_use(ws):
    from core.index.embedder import BILINGUAL_MODEL, MULTILINGUAL_MODEL

    english = ["Maya drinks green tea every morning", "what does Maya drink", "The staging database moved"]
    chinese = ["王芳喜欢喝绿茶，不喝咖啡。", "她平时爱喝什么饮料？", "今天天气晴朗，气温二十度。"]
    both = default_embedder(BILINGUAL_MODEL)
    assert both.dim == 384 + 512
    mixed = both.embed_batch(english + chinese)
    minilm, use = default_embedder("").embed_batch(english), default_embedder(MULTILINGUAL_MODEL).embed_batch(chinese)
    assert abs((mixed[:3] @ mixed[:3].T) - (minilm @ minilm.T)).max() < 1e-4      # English: exactly MiniLM
    assert abs((mixed[3:] @ mixed[3:].T) - (use @ use.T)).max() < 1e-4            # Chinese: exactly USE
    assert abs(mixed[:3] @ mixed[3:].T).max() < 1e-6                              # across: no noise
    write(ws, "memory/2026-11-30.md", LOG + "- Maya drinks green tea every morning\n")
    with SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(embedding_model=BILINGUAL_MODEL),
                     background=False) as index:
        index.sync()
        assert index.search("她平时爱喝什么饮料？", k=1, mode="meaning").hits[0].line == 3
        assert index.search("what is Maya's usual hot drink", k=1, mode="meaning").hits[0].line == 7
        assert index.search("zxqvbnm", k=10, mode="hybrid").hits == []          # MiniLM's floors still hold
