"""detect-secrets (Yelp) plugins on a line: vendor token shapes, URLs with a password, `key = "..."`.

Run in-process through its ad-hoc `scan_line`, with every plugin but the two high-entropy ones (on
an ad-hoc line they report every word, unfiltered; core.secrets.shapes uses their entropy measure
instead) and the public-IP one (an address is no secret of the person's).
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache

from core.secrets.shapes import SecretHit, clean, is_not_value

SKIPPED_PLUGINS = {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
DS_KINDS = {"Secret Keyword": "secret", "Basic Auth Credentials": "password", "JSON Web Token": "jwt",
            "AWS Access Key": "aws key", "Private Key": "private key"}
DS_LOCK = threading.Lock()   # detect-secrets keeps its settings in a process-wide singleton
# Only lines with one of these can hold what a plugin finds (a long run of letters and digits, a
# keyword of its keyword plugin, a URL with a user); the rest skip the plugin scan, which costs most.
DS_CANDIDATE = re.compile(r"(?<![\w+=-])(?=[\w+=-]{16})(?=[A-Za-z_+=-]*\d)(?=[\d_+=-]*[A-Za-z])|"
                          r"pass|pwd|secret|key|contras|://[^\s/@]*@|-----BEGIN", re.IGNORECASE)


_NAME_WORD = re.compile(r"pass|pwd|secret|key|token|contras", re.IGNORECASE)


@lru_cache(maxsize=1)
def ds_config() -> dict:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    names = sorted(c.__name__ for c in get_mapping_from_secret_type_to_class().values())
    return {"plugins_used": [{"name": n} for n in names if n not in SKIPPED_PLUGINS]}


def extend(line: str, start: int, end: int) -> tuple[int, int]:
    """A plugin may report part of a token (its prefix group): widen to the whole token."""
    word = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")
    chars = word | set("+/=")   # base64 runs on to the right; "KEY=" on the left is the name, not the value
    while start > 0 and line[start - 1] in word:
        start -= 1
    while end < len(line) and line[end] in chars:
        end += 1
    while end > start and line[end - 1] in ".=-":
        end -= 1
    return start, end


def detect_secrets_hits(todo: list[tuple[int, str]]) -> list[tuple[int, SecretHit]]:
    """(rank 3, hit) for what a plugin finds on each (offset, line)."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    if not todo:
        return []
    hits = []
    with DS_LOCK, transient_settings(ds_config()):
        for offset, line in todo:
            for found in scan_line(line):
                value = found.secret_value or ""
                at = line.find(value) if value else -1
                if at < 0:
                    continue
                kind = DS_KINDS.get(found.type, found.type.lower())
                whole = kind in ("secret", "password")   # these report the value itself; others may report a part
                start, end = (at, at + len(value)) if whole else extend(line, at, at + len(value))
                lead, cleaned = clean(line[start:end])
                # `"api_key": "api_key"`: a name mapped to a name, not a value
                named = _NAME_WORD.search(cleaned) and not any(c.isdigit() for c in cleaned)
                if kind == "secret" and (is_not_value(cleaned) or len(cleaned) < 4 or named):
                    continue
                hits.append((3, SecretHit(kind, offset + start + lead, offset + start + lead + len(cleaned))))
    return hits
