"""Why a question was missed (`reverie bench questions --why`): where its answer is, and how deep.

For each question whose answer is not in the first 5 hits: the rank of the first answering line in
a deeper list (DEPTH) of the mode measured, of keyword search alone and of meaning search alone
(when the index has a model), and the shape of the line that answers it — a heading, a table row,
a line longer than what is embedded of it, or a plain line — with the kind of file it is in. The
per-shape counts say which class of miss is the biggest, so the next change fixes a class of lines,
not one question.
"""
from __future__ import annotations

from core.index.filters import kind_of
from core.index.lines import MAX_EMBED
from core.index.matching import is_heading

DEPTH = 50
SHAPES = ("heading", "table", "long", "line", "absent")


def first_rank(hits, answers: list[str]) -> int:
    """1-based rank of the first hit whose text holds an answer (case-insensitive), 0 when none does."""
    lowered = [a.lower() for a in answers]
    return next((n for n, h in enumerate(hits, start=1) if any(a in h.text.lower() for a in lowered)), 0)


def line_shape(text: str) -> str:
    if is_heading(text):
        return "heading"
    if text.lstrip().startswith("|"):
        return "table"
    return "long" if len(text) > MAX_EMBED else "line"


def answer_lines(conn, answers: list[str], limit: int = 3) -> list[tuple[str, int, str]]:
    """(path, line, text) of the first indexed lines holding an answer."""
    found: dict[tuple[str, int], str] = {}
    for answer in answers:
        for path, line, text in conn.execute(
                "SELECT DISTINCT path, line, text FROM lines WHERE instr(lower(text), lower(?)) > 0 "
                "ORDER BY path, line LIMIT ?", (answer, limit)):
            found.setdefault((path, line), text)
    return [(path, line, text) for (path, line), text in sorted(found.items())][:limit]


def explain(index, item: dict, mode: str) -> dict:
    """The ranks and the answering line's shape for one question (ranks: 0 = not within DEPTH)."""
    question, answers = str(item["question"]), item["answers"]
    ranks = {"rank": first_rank(index.search(question, k=DEPTH, mode=mode).ranked, answers)}
    for alone in ("keyword", "meaning"):
        if alone != mode and (alone == "keyword" or mode != "keyword"):
            ranks[alone] = first_rank(index.search(question, k=DEPTH, mode=alone).ranked, answers)
    lines = answer_lines(index.db.conn(), answers)
    shape = line_shape(lines[0][2]) if lines else "absent"
    where = f"{lines[0][0]}:{lines[0][1]} ({kind_of(lines[0][0])})" if lines else "-"
    return {**ranks, "shape": shape, "where": where}


def report_line(item: dict, why: dict) -> str:
    ranks = " ".join(f"{key}={value or f'>{DEPTH}'}" for key, value in why.items() if key not in ("shape", "where"))
    return (f"miss {item['workspace']} [{item.get('lang', '')}/{item.get('split', '')}] {ranks} "
            f"shape={why['shape']} at {why['where']}: {item['question']}")


def summary_line(whys: list[dict]) -> str:
    counts = {shape: sum(1 for w in whys if w["shape"] == shape) for shape in SHAPES}
    return "misses " + " ".join(f"{shape}={n}" for shape, n in counts.items())
