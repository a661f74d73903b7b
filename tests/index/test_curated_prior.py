"""Curated memory before raw logs (Tuning.curated_boost; priors.py), and a hook-named log's
topic in its lines' context (outline.py)."""
from __future__ import annotations

from tests.support.files import write

from core.config import SearchSettings
from core.index import SearchIndex
from core.index.hybrid import Tuning
from core.index.lines import IndexOptions
from core.index.priors import apply_priors

MEMORY = """# Memory

## Decisions
- 2026-03-09: Removed Orbitdb from the stack, redundant with the built-in search.
"""
# A day of talk around the same word: every line says it, none says what was decided.
LOG = """# 2026-03-09

## Conversation at 10:00
- user: orbitdb is slow again, the orbitdb indexer is stuck
- assistant: the orbitdb service restarted, its docs are in docs/orbitdb
- user: still slow
"""
QUERY = "why did we drop orbitdb"
# Other days, so that the word is rare in the workspace and BM25 weighs it.
OTHER = "# 2026-03-10\n" + "".join(f"- walked the dog, weather note {n}\n" for n in range(40))

def _index(ws, files: dict[str, str], **tuning) -> SearchIndex:
    for rel, text in files.items():
        write(ws, rel, text)
    index = SearchIndex(ws, ws / ".reverie" / "index.db", SearchSettings(), embedder=False, tuning=Tuning(**tuning))
    index.sync()
    return index


def _paths(index, query: str, k: int = 5) -> list[str]:
    return [h.path for h in index.search(query, k=k, mode="keyword").hits]


def test_the_curated_line_outranks_the_talk_around_it(ws):
    with _index(ws, {"MEMORY.md": MEMORY, "memory/2026-03-09.md": LOG, "memory/2026-03-10.md": OTHER},
                curated_boost=0.0) as index:
        assert _paths(index, QUERY)[0] == "memory/2026-03-09.md"      # the log says the word more often
    with _index(ws, {}) as index:                                     # the default boost
        assert _paths(index, QUERY)[0] == "MEMORY.md"


def test_the_curated_prior_leaves_logs_alone_and_keeps_order_without_boost(ws):
    with _index(ws, {"MEMORY.md": MEMORY, "memory/2026-03-09.md": LOG}) as index:
        conn = index.db.conn()
        rows = dict(conn.execute("SELECT id, path FROM lines").fetchall())
        ranked = [(i, 1.0 / n) for n, i in enumerate(sorted(rows), start=1)]
        assert apply_priors(conn, ranked, 0.0) == ranked
        lifted = dict(apply_priors(conn, ranked, 0.5))
        for i, score in ranked:
            assert lifted[i] == (score * 1.5 if rows[i] == "MEMORY.md" else score)


def test_a_hook_named_log_is_found_by_the_topic_in_its_name(ws):
    """OpenClaw names a hook's log by its topic: a line deep in it is found by that topic's words."""
    session = "# Session\n\n## Conversation Summary\n" + "".join(
        f"- step {n}: checked the server capabilities list\n" for n in range(6)) + \
        "- Authentication: failing with an application password error\n"
    files = {"memory/2026-03-14-mail-access.md": session, "memory/2026-03-10.md": OTHER,
             "memory/2026-03-12.md": "# 2026-03-12\n- the mail storage is almost full\n",
             "memory/2026-03-11.md": "# 2026-03-11\n" + "- the nightly backup is failing again\n" * 3}
    for topic, first in ((False, "memory/2026-03-12.md"), (True, "memory/2026-03-14-mail-access.md")):
        index = SearchIndex(ws, ws / ".reverie" / f"index-{topic}.db", SearchSettings(), embedder=False,
                            options=IndexOptions(file_topic=topic))
        for rel, text in files.items():
            write(ws, rel, text)
        with index:
            index.sync()
            assert index.search("mail failing", k=3, mode="keyword").hits[0].path == first, topic


def test_a_heading_that_names_the_topic_goes_below_the_line_that_answers(ws):
    # The heading holds the query's words in few others, so BM25 puts it first; the line under it
    # is what answers. heading_weight halves a heading's score (priors.apply_priors).
    notes = ("# Notes\n\n## Backup target\n- backup target is now the garage NAS, share vault, every night at 2\n"
             + "".join(f"- garden note {n}: watered the tomatoes\n" for n in range(30)))
    files = {"memory/notes.md": notes, "memory/2026-03-10.md": OTHER}
    for weight, first in ((1.0, 3), (Tuning().heading_weight, 4)):
        with _index(ws, files, heading_weight=weight) as index:
            assert index.search("what is the backup target", k=3, mode="keyword").hits[0].line == first
