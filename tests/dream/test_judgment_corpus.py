"""The labelled judgment corpus in the repository: big, broad, multilingual, labels known, counts
in its README computed from the files, no header-only table rows."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from core.dream.judgment import dataset


@pytest.fixture(scope="module")
def corpus():
    return dataset.load_lines(), dataset.load_pairs()


def test_the_corpus_is_as_broad_as_the_issue_asks(corpus):
    lines, pairs = corpus
    assert len(lines) >= 3000 and len(pairs) >= 1500
    assert len({l.domain for l in lines}) >= 15
    chinese = sum(l.lang in dataset.CHINESE for l in lines) / len(lines)
    assert chinese >= 0.30
    others = Counter(l.lang for l in lines if l.lang not in ("en",) + dataset.CHINESE)
    assert len(others) >= 3
    assert set(Counter(l.kind for l in lines)) == set(dataset.KINDS)
    assert set(Counter(p.relation for p in pairs)) == set(dataset.RELATIONS)
    # conflict and agreement need a pinned bullet; a pinned bullet is agreed with, broken, or left alone
    assert all(p.pinned for p in pairs if p.relation in ("conflict", "agreement"))
    assert all(p.relation in ("conflict", "agreement", "distinct") for p in pairs if p.pinned)
    assert any(p.pinned and p.relation == "distinct" for p in pairs)


def test_no_header_only_table_row_is_left(corpus):
    lines, _pairs = corpus
    assert not [l.text for l in lines if dataset.is_header_row(l.text)]
    assert dataset.is_header_row("| Child | School | Teacher |")
    assert not dataset.is_header_row("| Jade | St Mary's Y1 | Miss Patel |")
    assert not dataset.is_header_row("| Tomatoes | March, indoors | July–Sept |")


def test_the_readme_counts_are_those_of_the_files():
    readme = (dataset.CORPUS / "README.md").read_text(encoding="utf-8")
    assert dataset.counts_markdown() in readme


def test_import_drops_header_rows_and_rejects_unknown_labels(tmp_path):
    source = tmp_path / "src"
    (source / "lines").mkdir(parents=True)
    (source / "pairs").mkdir()
    rows = [{"id": "x-L1", "text": "| Day | Pickup | Club |", "kind": "durable", "lang": "en", "shape": "table"},
            {"id": "x-L2", "text": "| Wed | me | swimming 17:00 |", "kind": "durable", "lang": "en", "shape": "table"}]
    (source / "lines" / "x.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    pair = {"id": "x-P1", "bullet": "Pickup is 15:15", "line": "Pickup moved to 15:30", "relation": "update",
            "pinned": False, "lang": "en"}
    (source / "pairs" / "x.jsonl").write_text(json.dumps(pair) + "\n", encoding="utf-8")
    target = tmp_path / "corpus"
    stats = dataset.import_corpus(source, target)
    assert stats == {"lines": 1, "pairs": 1, "header rows dropped": 1}
    assert [l.text for l in dataset.load_lines(target)] == ["| Wed | me | swimming 17:00 |"]
    (source / "pairs" / "x.jsonl").write_text(json.dumps(dict(pair, relation="maybe")) + "\n", encoding="utf-8")
    with pytest.raises(dataset.CorpusError, match="unknown relation"):
        dataset.import_corpus(source, target)
    assert [p.relation for p in dataset.load_pairs(target)] == ["update"]      # nothing was overwritten
