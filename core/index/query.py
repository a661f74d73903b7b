"""A search query as the words it asks for, each a safe FTS5 expression.

Queries from people and agents are natural language, not FTS5 syntax. We never
pass them through: the query is cut into words (the same way unicode61 cuts
the indexed text; CJK runs into bigrams, see cjk.py) and each word becomes a
*group*: one or more double-quoted FTS5 strings that all stand for that word.
Quoting makes every piece a literal: `AND(`, `NEAR`, `-`, `*`, `col:` and
control characters can never reach the FTS5 parser as syntax.

What one word stands for:
- a plain word: itself, through the index's porter stemmer ("deploy" finds
  "deploys", "deployed", "deployment");
- a hyphenated word ("on-call", "e-mail"): the phrase of its parts, which is
  what the tokenizer made of it in the text, or the parts written together
  ("oncall"); a stopword inside it ("on") is kept, it is part of the term;
- a word of PREFIX_MIN+ letters also stands for the longer words of the index
  that start with it ("timescale" -> "timescaledb", "postgres" -> "postgresql"),
  looked up in the index's own vocabulary (expand()). Not FTS5's prefix query
  `"word"*`: the porter stemmer cuts the prefix first, so `"running"*` would
  become `run*` and find "runway". Short words never expand ("tea" must not
  find "team");
- a CJK run of two characters: that bigram, an exact token match;
- a longer CJK run: each of its bigrams is a word of its own. A Chinese
  question is one run with no spaces ("现在锁定的主模型是哪个"), and the line
  that answers it shares a few of its words, never the whole run (its
  "锁定", "主模型"). As one phrase it matched nothing as held, and as one
  word it could not be planned: in a big workspace its OR of common bigrams
  ("是哪", "哪个") matched more than RANK_BUDGET rows and fell back to newest
  first. As separate words BM25 weighs each by its rarity, the planner keeps
  the rare ones, and a line holds the bigrams it contains. Bigrams that
  straddle two words ("的主") are rare or absent in real text, so they add
  little either way. Measured with `reverie bench questions` (tune split,
  keyword, Chinese questions): see docs/benchmarks.md.

Common English function words are dropped (they would match most lines and
only add noise and time), unless the query has nothing else. So are the words
of how a request is phrased (REQUEST_WORDS: "can you recommend", "any tips",
"remind me"): in session logs they match the assistant's own replies, not the
facts. Measured (keyword only): LongMemEval recall_any@5 0.857 -> 0.881,
LoCoMo recall@10 0.769 -> 0.763 ("What did X recommend?" loses a word that is
in the answer); hybrid LoCoMo recall@10 0.807 either way.
Tuning.request_words=True keeps them.
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, replace

from core.index import cjk

MAX_TERMS = 48           # a 100 kB paste must not become a 20,000-term query
MAX_TERM_CHARS = 64
PREFIX_MIN = 5           # letters a word needs before it also finds longer words that start with it
PREFIX_MAX = 6           # longer index words one word may stand for

_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*", re.UNICODE)
_PART = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could did didn't do does doesn't doing don't down during each few for
from further had has have having he her here hers herself him himself his how i if in into is isn't it its
itself let me more most my myself no nor not of off on once only or other ought our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up very was wasn't we were what when where which while who whom why with
would you your yours yourself yourselves s t d ll m re ve y
""".split())

# How a request is phrased ("can you recommend", "any tips for", "remind me what"), not what it is about:
# in session logs these words match the assistant's own replies ("I'd recommend ...") instead of the facts.
REQUEST_WORDS = frozenset("""
recommend recommendation recommendations suggest suggestion suggestions tip tips advice idea ideas remind
recall wondering interesting might please help tell know
""".split())


# Chinese question words and sentence-final particles, the CJK counterpart of STOPWORDS' what/when/
# which: a question is one run ("WebDAV 服务器是什么时候开始出故障的"), and its "什么" "时候" would be
# words of their own, rare in technical notes (so BM25 weighed them above "故障") and never what the
# answer says. The run is cut at them; what is left is searched. A query made of nothing else keeps
# them. Not "的" or "是": cutting at those too gained nothing on the real questions' tune split and
# lost one query of `reverie bench chinese` (docs/benchmarks.md).
CJK_FUNCTION_WORDS = ("什么时候", "为什么", "为何", "什么", "怎么样", "怎么", "怎样", "如何", "哪个", "哪些",
                      "哪里", "哪儿", "多少", "是否", "是不是", "有没有", "吗", "呢", "吧")
_CJK_FUNCTION = re.compile("|".join(sorted(map(re.escape, CJK_FUNCTION_WORDS), key=len, reverse=True)))


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True)
class Group:
    """One word of the query and the FTS5 strings that stand for it."""

    word: str                       # as matched in text (lowercase): "tea", "on-call", "数据库"
    alternatives: tuple[str, ...]   # quoted FTS5 strings; a line holding any of them holds the word
    exact: str = ""                 # what a line must hold to count as holding the word (CJK: the phrase)

    @property
    def expression(self) -> str:
        if len(self.alternatives) == 1:
            return self.alternatives[0]
        return "(" + " OR ".join(self.alternatives) + ")"

    @property
    def held(self) -> str:
        return self.exact or self.expression


@dataclass(frozen=True)
class Query:
    groups: tuple[Group, ...]
    marks: tuple[str, ...]          # lowercase words / CJK pieces to highlight in the original text

    @property
    def terms(self) -> tuple[str, ...]:
        """The FTS5 strings of every word, flattened (the OR that ranks lines)."""
        return tuple(dict.fromkeys(a for g in self.groups for a in g.alternatives))

    @property
    def match(self) -> str:
        return " OR ".join(self.terms)

    @property
    def empty(self) -> bool:
        return not self.groups

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.groups)


def _latin_group(word: str) -> Group:
    parts = _PART.findall(word)
    if len(parts) == 1:
        return Group(word, (quote(word),))
    return Group(word, (quote(" ".join(parts)), quote("".join(parts))))


def parse_query(text: str, request_words: bool = False) -> Query:
    """The query's words as groups; request_words=True keeps REQUEST_WORDS as words."""
    words: list[str] = []
    cjk_groups: list[Group] = []
    marks: list[str] = []
    singles: list[Group] = []
    for is_cjk, run in cjk.split_runs(str(text)):
        if not is_cjk:
            words.extend(w.lower()[:MAX_TERM_CHARS] for w in _WORD.findall(run))
            continue
        for piece in [p for p in _CJK_FUNCTION.split(run) if p] or [run]:
            if len(piece) == 1:
                singles.append(Group(piece, (quote(piece) + "*", quote(piece))))
                marks.append(piece)
            else:
                # Each bigram its own word: see "A CJK run" in the module docstring.
                grams = list(dict.fromkeys(cjk.bigrams(piece)))[:MAX_TERMS]
                cjk_groups.extend(Group(g, (quote(g),)) for g in grams)
                marks.extend(grams)
    content = [w for w in words if "-" in w or (w not in STOPWORDS and (request_words or w not in REQUEST_WORDS))]
    if not content and not cjk_groups:
        content = words
        cjk_groups = singles          # a lone character is a query of its own ("会"), not noise beside words
    content = list(dict.fromkeys(content))
    groups = [_latin_group(w) for w in content] + cjk_groups
    seen: set[str] = set()
    unique = [g for g in groups if not (g.word in seen or seen.add(g.word))][:MAX_TERMS]
    marks = list(dict.fromkeys(content + marks))[:MAX_TERMS]
    return Query(tuple(unique), tuple(marks))


def joined_words(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words a line holds as a person reads them: overlapping CJK bigrams held one after the
    other ("华联", "联股", "股份") joined back into the word they cut ("华联股份")."""
    out: list[str] = []
    for word in words:
        last = out[-1] if out else ""
        if len(word) == 2 and cjk.has_cjk(word) and last and cjk.has_cjk(last[-1]) and last[-1] == word[0]:
            out[-1] = last + word[1]
        else:
            out.append(word)
    return tuple(out)


def _vocabulary(conn: sqlite3.Connection) -> str:
    """The name of this connection's view of the index's terms (fts5vocab, created on first use)."""
    try:
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lines_vocab USING fts5vocab(main, lines_fts, 'row')")
    except sqlite3.OperationalError:
        return ""
    return "temp.lines_vocab"


def expand(conn: sqlite3.Connection, query: Query) -> Query:
    """The query with each long enough word also standing for the longer index words it starts.

    The vocabulary holds stemmed terms; a range scan from the word as typed
    finds the compounds ("timescale" -> "timescaledb") without the stem's own
    relatives ("running" -> "run" is not in the range, so "runway" is not found).
    """
    vocab = None
    groups = []
    for group in query.groups:
        word = group.word
        if len(word) < PREFIX_MIN or "-" in word or not word.isalnum() or cjk.has_cjk(word) or word.isdigit():
            groups.append(group)
            continue
        if vocab is None:
            vocab = _vocabulary(conn)
        if not vocab:
            groups.append(group)
            continue
        longer = [t for (t,) in conn.execute(f"SELECT term FROM {vocab} WHERE term > ? AND term < ? LIMIT ?",
                                             (word, word + "\U0010ffff", PREFIX_MAX))]
        if longer:
            group = replace(group, alternatives=tuple(dict.fromkeys(group.alternatives + tuple(map(quote, longer)))))
        groups.append(group)
    return replace(query, groups=tuple(groups))
