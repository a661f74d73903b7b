"""Chinese, Japanese and Korean text for an FTS5 index on SQLite 3.40.

Why not the trigram tokenizer: on SQLite < 3.44 (Debian 12 ships 3.40.1) a
trigram table cannot match queries shorter than three characters, and a
2-character LIKE on it silently returns no rows. Chinese words are mostly two
characters, so that would lose the most common queries. Why not a dictionary
segmenter (jieba): a wrong cut makes a word unfindable, dictionaries are large,
and the result depends on the dictionary version.

What we do instead: the index column holds a derived text in which every run of
CJK characters is replaced by its overlapping bigrams plus the run's last
character as a unigram ("今天开会" -> "今天 天开 开会 会"); unicode61 then sees
each bigram as a token. A query is transformed the same way, so

- a 2-character query is one bigram token: an exact token match;
- a longer query is its bigrams; written as a phrase they match exactly the
  original substring (the bigrams sit at consecutive positions), and as an
  OR of terms they rank by BM25 like English words;
- a 1-character query is `"字"*` (every bigram that starts with it) or the
  unigram (the character ended a run), which together cover every occurrence.

Snippets and highlighting are computed in Python on the original text, so the
derived column is never shown to anyone. Hiragana/katakana, Hangul and CJK
ideographs (with extensions) count as CJK; full-width Latin does not.
"""
from __future__ import annotations

import re

_CJK_CLASS = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
              "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f\uff66-\uff9f\U00020000-\U0003134f")
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")


def has_cjk(text: str) -> bool:
    return CJK_CHAR.search(text) is not None


def bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)]


def expand_run(run: str) -> str:
    return " ".join(bigrams(run) + [run[-1]])


def expand(text: str) -> str:
    """The text as the FTS column stores it: CJK runs cut into bigrams, the rest unchanged."""
    if not has_cjk(text):
        return text
    return CJK_RUN.sub(lambda m: f" {expand_run(m.group(0))} ", text)


def split_runs(text: str) -> list[tuple[bool, str]]:
    """(is_cjk, piece) in order, so a query can treat each kind of text its own way."""
    out, pos = [], 0
    for match in CJK_RUN.finditer(text):
        if match.start() > pos:
            out.append((False, text[pos:match.start()]))
        out.append((True, match.group(0)))
        pos = match.end()
    if pos < len(text):
        out.append((False, text[pos:]))
    return out
