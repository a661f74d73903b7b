"""What a search answers: modes, hits, results (hits counted, nearby apart), the index's status.

Small values shared by every front end (the view, the CLI and its JSON, the MCP tool, the
socket a running serve or app answers on): nothing here touches the index or loads numpy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.errors import CoreError
from core.index.matching import NEARBY

MODES = ("keyword", "meaning", "hybrid")
ALIASES = {"fts": "keyword", "fts5": "keyword", "words": "keyword", "vector": "meaning", "semantic": "meaning"}


class SearchModeError(CoreError):
    """An unknown search mode."""


def canonical_mode(mode: str | None, default: str = "hybrid") -> str:
    """The one name of a search mode ("keyword", "meaning", "hybrid") for any name we accept."""
    chosen = (mode or default or "hybrid").strip().lower()
    chosen = ALIASES.get(chosen, chosen)
    if chosen not in MODES:
        raise SearchModeError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    return chosen


@dataclass(frozen=True)
class SearchHit:
    path: str
    line: int
    text: str
    score: float
    snippet: str
    sources: tuple[str, ...] = ()
    match: str = "words"                 # why it matched: words, meaning, both, nearby
    words: tuple[str, ...] = ()          # the query's words the line holds
    similarity: float | None = None      # cosine of the line's vector to the query's (meaning and hybrid)
    kind: str = ""                       # memory, daily, session, handoff, checkpoint, progress

    def as_dict(self) -> dict:
        """The hit as the CLI's --json and the MCP tool give it."""
        out = {"path": self.path, "line": self.line, "kind": self.kind, "text": self.text,
               "score": round(self.score, 6), "match": self.match, "words": list(self.words)}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        if self.snippet:
            out["snippet"] = self.snippet
        if self.sources:
            out["sources"] = list(self.sources)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "SearchHit":
        """The hit `as_dict` gave (a search answered by another process: search_socket.py)."""
        similarity = data.get("similarity")
        return cls(path=str(data["path"]), line=int(data["line"]), text=str(data.get("text", "")),
                   score=float(data.get("score", 0.0)), snippet=str(data.get("snippet", "")),
                   sources=tuple(data.get("sources") or ()), match=str(data.get("match", "words")),
                   words=tuple(data.get("words") or ()), similarity=None if similarity is None else float(similarity),
                   kind=str(data.get("kind", "")))


@dataclass(frozen=True)
class SearchResults:
    """The best lines for a query, in rank order (`ranked`), told apart as the front ends show them:

    hits    the lines that match: they hold words of the query, or are close in meaning (above the floor);
    nearby  lines found only through their neighbours' words, their date or heading: context shown apart,
            never counted as hits (a conversation states a fact across two lines, so they stay on the page).

    `len(results)` and iteration are over the hits. `via` says what embedded the query: "" (keyword: no
    embedding), "model" (this process), or where a running `reverie serve` or app answered ("serve", "app").
    """

    ranked: list[SearchHit]
    pending_embeddings: int
    mode: str
    query: str = ""
    via: str = ""

    @property
    def hits(self) -> list[SearchHit]:
        return [h for h in self.ranked if h.match != NEARBY]

    @property
    def nearby(self) -> list[SearchHit]:
        return [h for h in self.ranked if h.match == NEARBY]

    def __iter__(self):
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def as_dict(self, *, ranked: bool = False) -> dict:
        """The results as the CLI's --json and the MCP tool give them: hits counted, nearby apart
        (`ranked`: every line in rank order instead, for from_dict on the other end of a socket)."""
        hits, nearby = self.hits, self.nearby
        out = {"query": self.query, "mode": self.mode, "count": len(hits)}
        if ranked:
            out["ranked"] = [h.as_dict() for h in self.ranked]
        else:
            out["hits"] = [h.as_dict() for h in hits]
            out["nearby"] = [h.as_dict() for h in nearby]
        out["pending_embeddings"] = self.pending_embeddings   # not embedded yet: meaning may miss them
        if self.via:
            out["via"] = self.via
        return out

    @classmethod
    def from_dict(cls, data: dict, via: str = "") -> "SearchResults":
        return cls(ranked=[SearchHit.from_dict(h) for h in data.get("ranked", ())],
                   pending_embeddings=int(data.get("pending_embeddings", 0)), mode=str(data.get("mode", "")),
                   query=str(data.get("query", "")), via=via or str(data.get("via", "")))


@dataclass(frozen=True)
class IndexStatus:
    files: int
    lines: int
    pending_embeddings: int
    problems: list[str] = field(default_factory=list)
    vectors: int = 0
    embedding_model: str = ""
    not_embedded: int = 0        # lines with nothing to embed (a bare timestamp or number: lines.py)
