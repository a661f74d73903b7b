"""The labelled judgment corpus (core/dream/judgment/corpus/): reading it, copying it in, counting it.

lines/<domain>.jsonl hold daily-log lines with their kind; pairs/<domain>.jsonl hold a MEMORY.md
bullet, a new log line and their relation (the README in that folder says what each label means).
The heads in core/dream/judgment/heads.py are trained on it (train.py) and measured on it one
domain at a time (core/bench/judgment_bench.py).

`python -m core.dream.judgment.dataset import SRC` copies a corpus written outside the repository
(SRC/lines, SRC/pairs) into the package, dropping header-only table rows (extraction never yields
a header row as a statement, so no label on one can be right) and refreshes the counts in the
README between its COUNTS markers.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus"
KINDS = ("durable", "transient", "one-off", "secret")
RELATIONS = ("duplicate", "update", "refinement", "distinct", "conflict", "agreement")
CHINESE = ("zh", "mixed")


@dataclass(frozen=True)
class Line:
    id: str
    domain: str
    text: str
    kind: str
    lang: str
    shape: str


@dataclass(frozen=True)
class Pair:
    id: str
    domain: str
    bullet: str
    line: str
    relation: str
    pinned: bool
    lang: str


class CorpusError(ValueError):
    """A corpus file that does not parse or holds an unknown label."""


_HEADER_CELL = re.compile(r"^[A-Z][A-Za-z]*(?: [A-Za-z0-9]+)?$")


def is_header_row(text: str) -> bool:
    """A markdown table row that only names columns ("| Child | School | Teacher |"): every cell a
    capitalised word or two, no values (no digits leading a cell, no punctuation, no CJK)."""
    row = text.strip()
    if not (row.startswith("|") and row.endswith("|")):
        return False
    cells = [c.strip() for c in row.strip("|").split("|")]
    return len(cells) >= 2 and all(_HEADER_CELL.match(c) for c in cells)


def _records(path: Path) -> list[dict]:
    out = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return out


def load_lines(folder: Path = CORPUS) -> list[Line]:
    lines = []
    for path in sorted((folder / "lines").glob("*.jsonl")):
        for r in _records(path):
            if r.get("kind") not in KINDS:
                raise CorpusError(f"{path}: {r.get('id')}: unknown kind {r.get('kind')!r}")
            lines.append(Line(r["id"], path.stem, r["text"], r["kind"], r.get("lang", "en"), r.get("shape", "")))
    return lines


def load_pairs(folder: Path = CORPUS) -> list[Pair]:
    pairs = []
    for path in sorted((folder / "pairs").glob("*.jsonl")):
        for r in _records(path):
            if r.get("relation") not in RELATIONS:
                raise CorpusError(f"{path}: {r.get('id')}: unknown relation {r.get('relation')!r}")
            pairs.append(Pair(r["id"], path.stem, r["bullet"], r["line"], r["relation"], bool(r.get("pinned")),
                              r.get("lang", "en")))
    return pairs


def import_corpus(source: Path, target: Path = CORPUS) -> dict[str, int]:
    """Copy SRC/lines and SRC/pairs into `target`, without header-only table rows. Every record is
    checked before anything is written, so a bad source leaves the corpus as it was."""
    stats = Counter()
    out: dict[Path, list[str]] = {}
    for part, field, known in (("lines", "kind", KINDS), ("pairs", "relation", RELATIONS)):
        for path in sorted((source / part).glob("*.jsonl")):
            kept = []
            for record in _records(path):
                if record.get(field) not in known:
                    raise CorpusError(f"{path}: {record.get('id')}: unknown {field} {record.get(field)!r}")
                if part == "lines" and is_header_row(record.get("text", "")):
                    stats["header rows dropped"] += 1
                    continue
                kept.append(json.dumps(record, ensure_ascii=False))
                stats[part] += 1
            out[target / part / path.name] = kept
    for path, kept in out.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return dict(stats)


def _share(counter: Counter, total: int) -> str:
    return ", ".join(f"{k} {v} ({100 * v / max(total, 1):.0f}%)" for k, v in counter.most_common())


def counts_markdown(folder: Path = CORPUS) -> str:
    """The counts section of the README, computed from the files."""
    lines, pairs = load_lines(folder), load_pairs(folder)
    domains = sorted({x.domain for x in lines} | {p.domain for p in pairs})
    head = ("| domain | lines | " + " | ".join(KINDS) + " | zh+mixed | pairs | " + " | ".join(RELATIONS)
            + " | zh+mixed |")
    rows = [head, "|" + "---|" * (len(KINDS) + len(RELATIONS) + 5)]

    def row(name, ls, ps):
        k, r = Counter(x.kind for x in ls), Counter(p.relation for p in ps)
        zl = sum(x.lang in CHINESE for x in ls) / max(len(ls), 1)
        zp = sum(p.lang in CHINESE for p in ps) / max(len(ps), 1)
        return (f"| {name} | {len(ls)} | " + " | ".join(str(k[x]) for x in KINDS) + f" | {zl:.0%} | {len(ps)} | "
                + " | ".join(str(r[x]) for x in RELATIONS) + f" | {zp:.0%} |")

    for domain in domains:
        rows.append(row(domain, [x for x in lines if x.domain == domain], [p for p in pairs if p.domain == domain]))
    rows.append(row("**total**", lines, pairs))
    long_lines = sum(len(x.text) >= 200 for x in lines)
    rows += ["",
             f"Kinds: {_share(Counter(x.kind for x in lines), len(lines))}",
             f"Relations: {_share(Counter(p.relation for p in pairs), len(pairs))}",
             f"Languages, lines: {_share(Counter(x.lang for x in lines), len(lines))}",
             f"Languages, pairs: {_share(Counter(p.lang for p in pairs), len(pairs))}",
             f"Shapes, lines: {_share(Counter(x.shape for x in lines), len(lines))}",
             f"Long lines (200+ characters): {long_lines}, longest {max((len(x.text) for x in lines), default=0)}; "
             f"pinned pairs: {sum(p.pinned for p in pairs)}"]
    return "\n".join(rows)


def refresh_readme(folder: Path = CORPUS) -> None:
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = "<!-- COUNTS -->", "<!-- /COUNTS -->"
    if start not in text or end not in text:
        raise CorpusError(f"{readme} has no {start} ... {end} section")
    before, rest = text.split(start, 1)
    _old, after = rest.split(end, 1)
    readme.write_text(f"{before}{start}\n{counts_markdown(folder)}\n{end}{after}", encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "import":
        print(import_corpus(Path(argv[1])))
        refresh_readme()
        return 0
    if argv == ["counts"]:
        print(counts_markdown())
        return 0
    print("usage: python -m core.dream.judgment.dataset import SRC | counts", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
