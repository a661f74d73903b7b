"""Finding secret values in text and redacting them (the rules are described in core/secrets/__init__.py)."""
from __future__ import annotations

import bisect
import itertools
import re

from core.secrets.plugins import DS_CANDIDATE, detect_secrets_hits
from core.secrets.shapes import (ACCOUNT_NAMES, ACCOUNT_PAIR, BARE_URL_PASSWORD, BRACKET_PAIR, COMMIT_WORD, CONNECTOR,
                                 GAP_CHARS, KEYWORD, NEAR_CHARS, NEEDS_RANDOM_TAIL, PREFIXED, PREFIXED_KINDS, PRIVATE_KEY,
                                 SENTENCE_END, SEPARATOR, TOKEN, TRAIL, URL_PASSWORD, VALUE, SecretHit, clean,
                                 is_login_name, passphrase_like, password_like, pin_like, random_like,
                                 strong_password)


REDACTED = "[redacted {kind}]"
_MARKER = re.compile(r"\[redacted [^\]\n]{1,40}\]")


def _value_at(line: str, pos: int, accept, pair: bool = False) -> tuple[int, int] | None:
    """The value starting at `pos`, as a span in `line`, when `accept` takes it; with `pair`, also the
    password of a `user / password`, `user, password X` or `email: password` pair."""
    first = VALUE.match(line, pos)
    if not first:
        return None
    lead, value = clean(first.group("v"))
    start = first.start("v") + lead
    if pair and re.fullmatch(r"[\w.@+-]{2,64}", value):
        joint = CONNECTOR.match(line, start + len(value))
        if joint and ":" in joint.group() and not is_login_name(value):
            joint = None   # "policy: 90 days" is a word and its value; only an e-mail pairs with a colon
        second = VALUE.match(line, joint.end()) if joint else None
        if second:
            lead2, value2 = clean(second.group("v"))
            if password_like(value2):
                s2 = second.start("v") + lead2
                return s2, s2 + len(value2)
    if accept(value) and not is_login_name(value):
        return start, start + len(value)
    return None


_KIND_OF_WORD = (("api", "api key"), ("token", "token"), ("bearer", "token"), ("jeton", "token"), ("токен", "token"),
                 ("令牌", "token"), ("トークン", "token"), ("토큰", "token"), ("secret", "secret"))
_ACCEPT = {"password": password_like, "pin": pin_like, "login": strong_password, "key": random_like}
_WEAK_SEPARATORS = {"to", "on", "er", "je"}   # copulas that are also common small words ("pin it to 2024")


def _keyword_hits(line: str, offset: int) -> list[tuple[int, SecretHit]]:
    hits = []
    for match in KEYWORD.finditer(line):
        group = match.lastgroup or "key"
        word = match.group()
        kind = {"password": "password", "pin": "pin", "login": "password"}.get(group) or next(
            (k for w, k in _KIND_OF_WORD if w in word.lower()), "key")
        accept = _ACCEPT[group]
        if group == "password":
            accept = _password_accept(word)
        end = match.end()
        stop = SENTENCE_END.search(line, end)
        limit = min(stop.start() if stop else len(line), end + GAP_CHARS)
        found = None
        # Right after the word: "password Tramonto!4471", "token ghp_...", "PIN 4821" (not "pin it")
        bare = re.compile(r"[ \t]+").match(line, end)
        if bare and group != "login" and (group != "pin" or word.isupper() or " " in word):
            found = _value_at(line, bare.end(), accept, pair=group == "password")
        pos = end
        while found is None:
            sep = SEPARATOR.search(line, pos, limit)
            if not sep:
                break
            mark = sep.group().strip().lower()
            weak = mark in _WEAK_SEPARATORS
            # "id:m-aee548" later in the clause is another key's value, not this word's
            glued = sep.start() > end and mark in (":", "=") and line[sep.start() - 1:sep.start()].isalnum() \
                and not sep.group()[-1:].isspace()
            if not (weak and group in ("pin", "key")) and not glued:
                told = accept
                if group == "password" and (mark in ("=", "＝") or (mark in (":", "：") and word.isupper())):
                    told = _password_accept(word, assigned=True)    # DATABASE_PASSWORD=correcthorse...
                found = _value_at(line, sep.end(), told, pair=group in ("password", "login"))
            pos = max(sep.end(), pos + 1)
        if found:
            hits.append((1, SecretHit(kind, offset + found[0], offset + found[1])))
    return hits


def _password_accept(word: str, assigned: bool = False):
    """What a password word accepts as its value: a password-like run, or a long letters-only passphrase
    (any length of six or more when it is assigned, `DB_PASSWORD=...`)."""
    return lambda value: password_like(value) or passphrase_like(value, assigned=assigned) or (
        value.isdigit() and pin_like(value))     # "储物柜密码 7781": a password of digits may be short


def _near_random_hits(line: str, offset: int) -> list[tuple[int, SecretHit]]:
    words = [m.start() for m in KEYWORD.finditer(line)]
    if not words:
        return []
    hits = []
    for token in TOKEN.finditer(line):
        lead, value = clean(token.group())
        start = token.start() + lead
        if not any(abs(start - w) <= NEAR_CHARS for w in words):
            continue
        if COMMIT_WORD.search(line[max(0, start - 24):start]) or not random_like(value):
            continue
        hits.append((2, SecretHit("token", offset + start, offset + start + len(value))))
    return hits






def _merge(candidates: list[tuple[int, SecretHit]], protected: list[tuple[int, int]]) -> list[SecretHit]:
    """One hit per span: overlapping candidates are joined, the most specific kind kept (lowest rank)."""
    spans = sorted((c for c in candidates
                    if c[1].end > c[1].start and not any(c[1].start < e and s < c[1].end for s, e in protected)),
                   key=lambda c: (c[1].start, -c[1].end))
    out: list[tuple[int, SecretHit]] = []
    for rank, hit in spans:
        if out and hit.start < out[-1][1].end:
            prev_rank, prev = out[-1]
            kind = hit.kind if rank < prev_rank else prev.kind
            out[-1] = (min(rank, prev_rank), SecretHit(kind, prev.start, max(prev.end, hit.end)))
        else:
            out.append((rank, hit))
    return [hit for _rank, hit in out]


def find_secrets(text: str) -> list[SecretHit]:
    """Every secret value in `text`, in order, as spans that do not overlap."""
    if not text:
        return []
    protected = [(m.start(), m.end()) for m in _MARKER.finditer(text)]
    # Earlier redactions are blanked (same length, so spans stay true): "[redacted api key]" says "key".
    text = _MARKER.sub(lambda m: " " * len(m.group()), text)
    candidates = [(0, SecretHit("private key", m.start(), m.end())) for m in PRIVATE_KEY.finditer(text)]
    for offset, piece in _pieces(text):
        candidates.extend(_candidates(piece, offset))
    return _merge(candidates, protected)


_PIECE_CHARS = 32_768   # a regex call holds the GIL: a long text is searched in line-aligned pieces


def _pieces(text: str):
    """(offset, piece) of at most about _PIECE_CHARS each, cut at line ends (no other hit spans lines)."""
    start = 0
    while start <= len(text):
        end = len(text)
        if start + _PIECE_CHARS < len(text):
            end = text.rfind("\n", start, start + _PIECE_CHARS)
            if end <= start:
                end = text.find("\n", start + _PIECE_CHARS)
                end = len(text) if end < 0 else end
        yield start, text[start:end]
        start = end + 1


def _candidates(text: str, offset: int) -> list[tuple[int, SecretHit]]:
    candidates: list[tuple[int, SecretHit]] = []
    for m in PREFIXED.finditer(text):
        kind = PREFIXED_KINDS[int(m.lastgroup[1:])]
        start, end = m.start(), m.start() + len(m.group().rstrip(TRAIL))
        if kind in NEEDS_RANDOM_TAIL and not any(c.isdigit() for c in text[start:end]):
            continue
        candidates.append((0, SecretHit(kind, offset + start, offset + end)))
    for m in URL_PASSWORD.finditer(text):
        candidates.append((0, SecretHit("password", offset + m.start("v"), offset + m.end("v"))))
    for m in BARE_URL_PASSWORD.finditer(text):
        if password_like(m.group("v")):
            candidates.append((0, SecretHit("password", offset + m.start("v"), offset + m.end("v"))))
    for m in ACCOUNT_PAIR.finditer(text):
        value = clean(m.group("v"))[1]
        if password_like(value):
            start = m.start("v") + clean(m.group("v"))[0]
            candidates.append((1, SecretHit("password", offset + start, offset + start + len(value))))
    for m in BRACKET_PAIR.finditer(text):
        account = m.group("u").lower() in ACCOUNT_NAMES or is_login_name(m.group("u"))
        if password_like(m.group("v")) and (account or KEYWORD.search(text, max(0, m.start() - NEAR_CHARS),
                                                                        m.start())):
            candidates.append((1, SecretHit("password", offset + m.start("v"), offset + m.end("v"))))
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    # Searches over the piece find the few lines worth a closer look; most lines of a log have none.
    for number in _lines_of(KEYWORD, text, starts):
        candidates.extend(_keyword_hits(lines[number], offset + starts[number]))
        candidates.extend(_near_random_hits(lines[number], offset + starts[number]))
    candidates.extend(detect_secrets_hits([(offset + starts[n], lines[n])
                                           for n in _lines_of(DS_CANDIDATE, text, starts)]))
    return candidates


def _lines_of(pattern: re.Pattern, text: str, starts: list[int]) -> list[int]:
    """The 0-based numbers of the lines where `pattern` matches, in order."""
    return sorted({bisect.bisect_right(starts, m.start()) - 1 for m in pattern.finditer(text)})


def holds_secret(text: str) -> bool:
    return bool(find_secrets(text))


def redact(text: str) -> str:
    """`text` with each secret value replaced by `[redacted <kind>]`; redacting again changes nothing."""
    return redact_count(text)[0]


def redact_count(text: str) -> tuple[str, int]:
    """(the redacted text, how many secret values it replaced)."""
    count = 0
    for _round in range(4):   # a value that hid behind another (user / password) shows after the first
        hits = find_secrets(text)
        if not hits:
            break
        count += len(hits)
        for hit in reversed(hits):
            text = text[:hit.start] + REDACTED.format(kind=hit.kind) + text[hit.end:]
    return text, count

