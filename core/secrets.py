"""Pasted passwords, tokens and keys: found in text, and redacted, before they reach a file or a prompt.

Pure text in, spans out; no workspace I/O. Two sources agree on what a secret is:

- detect-secrets (Yelp) plugins, run in-process on each line: vendor token shapes (AWS, GitHub,
  Slack, Stripe, JWT, private keys, URLs with a password, `password = "..."` assignments). Its two
  high-entropy plugins are left out of the line scan: on an ad-hoc line they report every word
  unfiltered; their entropy measure is used by our own rules instead.
- our own rules, because people paste secrets into prose, which detect-secrets does not read:
  a password/PIN/token/key word in many languages, followed within a clause by ":", "is", "=",
  "es", "est", "è", "是", "は", ... and a value token that looks like a password (or, for the weaker
  key/token words, like a random string); well-known token prefixes; and long random-looking tokens
  near such a word.

A hit's span is the secret VALUE only, so redaction keeps the rest of the sentence. Ordinary prose
that talks about passwords ("we changed the password policy") has no value token and is no hit;
versions, dates, times, prices, phone numbers, paths, URLs without credentials, UUIDs and commit
hashes are never values.
"""
from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache

REDACTED = "[redacted {kind}]"
_MARKER = re.compile(r"\[redacted [^\]\n]{1,40}\]")


@dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int      # span of the secret value inside the text
    end: int


# ----- vocabulary ------------------------------------------------------------------------------------
# Words that announce a password (a value after them is a secret when it merely looks like one).
_PASSWORD_WORDS = (
    r"passwords?|passwd|pass\s?codes?|pass\s?phrases?|pwd|pw|"
    r"mot(?:s)? de passe|mdp|contraseñas?|contrasenas?|senhas?|palavra[- ]passe|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|"
    r"wachtwoord(?:en)?|lösenord(?:et)?|passord(?:et)?|adgangskode|salasana|hasł[oa]|haslo|heslo|"
    r"parola d'ordine|parolă|şifre|şifresi|jelszó|κωδικός|пароль|паролі|mật khẩu|kata sandi|"
    r"סיסמה|كلمة المرور|كلمة السر|पासवर्ड"
)
# Words for a PIN: a value of four or more digits after them is a secret.
_PIN_WORDS = r"pin(?:\s?codes?|\s?numbers?)?|code pin|pin码|pin碼"
# Words for an account's login: a `user / password` shape after them.
_LOGIN_WORDS = r"log-?ins?|credentials?|creds|identifiants?|zugangsdaten|credenciales|credenziali|учётные данные"
# Weaker words: a value after them is a secret only when it looks random (a person's "key" is often a door key).
_KEY_WORDS = (
    r"api[\s_-]?keys?|api[\s_-]?tokens?|access[\s_-]?keys?|access[\s_-]?tokens?|secret[\s_-]?keys?|"
    r"client[\s_-]?secrets?|auth[\s_-]?tokens?|bearer|private[\s_-]?keys?|tokens?|keys?|secrets?|"
    r"jetons?|clés?|cles?|claves?|chaves?|schlüssel|sleutel|nyckel|ключ|токен"
)
# Words of scripts written without spaces (or with particles glued on) need no word boundary.
_UNSPACED = {"password": "密码|密碼|口令|パスワード|비밀번호|패스워드|암호", "pin": "暗証番号|PIN码|PIN碼",
             "login": "登录信息|ログイン情報", "key": "密钥|密鑰|令牌|トークン|토큰|APIキー|API키"}
_CLASSES = (("password", _PASSWORD_WORDS), ("pin", _PIN_WORDS), ("login", _LOGIN_WORDS), ("key", _KEY_WORDS))
# Spaced scripts need a boundary (no "keyboard", "monkey", "pinned").
_KEYWORD = re.compile("|".join(
    rf"(?P<{name}>(?<![^\W\d_])(?:{words})(?![^\W\d_])|{_UNSPACED[name]})" for name, words in _CLASSES),
    re.IGNORECASE)

# What joins a word to its value: punctuation, or a copula in one of many languages.
_SEPARATOR = re.compile(
    r"\s*(?:[:：=＝]|->|=>|→|—|–)\s*|"
    r"\s+(?:is|was|are|es|era|est|è|é|ist|lautet|är|er|on|jest|je|to|equals)(?![^\W\d_])\s*[:：]?\s*|"
    r"\s*(?:是|为|為|は|が|는|은)\s*[:：]?\s*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|[。！？；\n]")
_GAP_CHARS = 90          # a value is told within a clause of its word
_NEAR_CHARS = 80         # a random token counts as near a word within this distance

# A value: one run without spaces, quotes, backslashes or CJK punctuation (so a value inside a JSON
# string, `\"Hunter22!\"`, is the value alone and its redaction leaves the JSON valid).
_VALUE = re.compile(r"\\?[\"'`“‘«<(]?(?P<v>[^\s\"'`“”‘’«»<>()\[\]{}，。、；：！？\\]+)")
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~!#$%^&*]+")
_TRAIL = ".,;:?)]}\"'"
# Between a user name and its password: "user / pass", "user, password pass", "user pw: pass".
_PW_WORD = r"(?:password|passwort|pass|pwd|pw|mot de passe|senha|contraseña|wachtwoord|пароль|密码)"
_CONNECTOR = re.compile(rf"\s*[/,;|:]\s*(?:{_PW_WORD}\s*[:=]?\s*)?|\s+{_PW_WORD}\s*[:=]?\s*", re.IGNORECASE)

# Values that are never secrets.
_NOT_VALUE = [re.compile(p, re.IGNORECASE) for p in (
    r"^\[redacted",
    r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]",   # CJK prose, not a typed password
    r"^\d+(?:[.,]\d+)?-?[^\W\d_]+$",                    # an amount with its unit: 90-day, 15min, 3rd
    r"^(?:sha\d*|md5):",                                 # a key fingerprint is public
    r"^[a-z][a-z0-9+.-]*://[^@]*$",                     # a URL without credentials
    r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",                     # an e-mail address
    r"^(?:~|\.{1,2})?/|^[a-z]:\\|^[\w.-]+(?:/[\w.-]+)+/?$",   # a path
    r"^v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?$",                # a version
    r"^\d{4}-\d{2}-\d{2}|^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$|^\d{1,2}:\d{2}",   # a date, a time
    r"^[$€£¥₹]\s?\d|^\d+(?:[.,]\d+)*\s?(?:[$€£¥%]|eur|usd|k|m|ms|s|h|d|gb|mb|kb|px)?$",  # a price, an amount
    r"^\+?\d[\d().\s-]{6,}\d$",                          # a phone number
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",   # a UUID
    r"^\$\{|^\{\{|^%\(|^<|^x{3,}$|^\*{3,}$|^\.{3,}$",     # a placeholder
    r"^(?:base(?:32|58|64)\w*|sha-?\d+\w*|md5\w*|utf-?(?:8|16)\w*|x\.?509|oauth2?|https?[23]?|ipv[46]|"
    r"aes-?\d*\w*|rsa-?\d*|ed25519|hmac\w*|pbkdf2|bcrypt|argon2\w*|scrypt|tls-?\d[\d.]*|mp[34]|h26[45])(?:[-_.]\w+)?$",
)]
# A hash named as a commit, a digest or a fingerprint is an id, not a secret.
_COMMIT_WORD = re.compile(r"(?:commit|sha\d*|revision|rev|hash|digest|merge|cherry-pick|checkout|revert|rebase|"
                          r"fingerprint|md5)(?:\s+is)?[\s:#@-]*$",
                          re.IGNORECASE)

# ----- well-known token shapes ----------------------------------------------------------------------
_PREFIXED = [(kind, re.compile(p)) for kind, p in (
    # the whole block; a block cut short takes the base64 lines that follow its header
    ("private key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?-----END [A-Z0-9 ]*PRIVATE KEY"
                    r"(?: BLOCK)?-----|(?:(?:\n|\\n)[A-Za-z0-9+/=]{16,})*)"),
    ("github token", r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab token", r"(?<![\w-])gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_\-]{20,}"),
    ("grafana token", r"(?<![\w-])gl(?:sa|c)_[A-Za-z0-9_\-]{20,}"),
    ("slack token", r"(?<![\w-])xox[abposre]-[A-Za-z0-9\-]{10,}"),
    ("api key", r"(?<![\w-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{20,}"),
    ("stripe key", r"(?<![\w-])(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
    ("aws key", r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("google api key", r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}"),
    ("google token", r"(?<![\w.-])ya29\.[A-Za-z0-9_\-]{20,}"),
    ("dropbox token", r"(?<![\w.-])sl\.[A-Za-z0-9_\-]{20,}"),
    ("hugging face token", r"(?<![\w-])hf_[A-Za-z0-9]{30,}"),
    ("npm token", r"(?<![\w-])npm_[A-Za-z0-9]{36}"),
    ("pypi token", r"(?<![\w-])pypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("jwt", r"(?<![\w-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)]
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<v>[^\s/@]+)@[^\s/@]", re.IGNORECASE)
# Prefixed shapes that need a random tail (no "sk-learn-compatible" words).
_NEEDS_RANDOM_TAIL = {"api key", "dropbox token", "slack token"}

# detect-secrets plugins run on a line. The high-entropy ones report every word on an ad-hoc
# line, and a public IP address is no secret of the person's.
_SKIPPED_PLUGINS = {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
_DS_KINDS = {"Secret Keyword": "secret", "Basic Auth Credentials": "password", "JSON Web Token": "jwt",
             "AWS Access Key": "aws key", "Private Key": "private key"}
_DS_LOCK = threading.Lock()   # detect-secrets keeps its settings in a process-wide singleton
# Only lines with one of these can hold what a plugin finds; the rest skip the plugin scan.
_DS_CANDIDATE = re.compile(r"[A-Za-z0-9_+/=.\-]{16,}|(?=[A-Za-z0-9_+/=.\-]*\d)[A-Za-z0-9_+/=.\-]{10,}|://|"
                           r"pass|secret|key|pwd|contras|-----BEGIN", re.IGNORECASE)


@lru_cache(maxsize=1)
def _ds_config() -> dict:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    names = sorted(c.__name__ for c in get_mapping_from_secret_type_to_class().values())
    return {"plugins_used": [{"name": n} for n in names if n not in _SKIPPED_PLUGINS]}


@lru_cache(maxsize=1)
def _entropy_plugins():
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    return Base64HighEntropyString(), HexHighEntropyString()


# ----- value shapes ---------------------------------------------------------------------------------
_UNSPACED_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


def _clean(value: str) -> tuple[int, str]:
    """(characters cut from the front, the value without quotes and trailing punctuation)."""
    glued = _UNSPACED_SCRIPT.search(value)
    if glued and glued.start() > 0:
        value = value[:glued.start()]   # "パスワードはsakura2024です": the particle is not the password
    elif glued:
        return 0, value                 # CJK prose after the word: no typed value
    stripped = value.rstrip(_TRAIL)
    lead = len(stripped) - len(stripped.lstrip("\"'`“‘«(<"))
    return lead, stripped[lead:]


def _is_not_value(value: str) -> bool:
    return any(p.search(value) for p in _NOT_VALUE)


def _classes(value: str) -> tuple[bool, bool, bool, bool]:
    letter = any(c.isalpha() for c in value)
    digit = any(c.isdigit() for c in value)
    # Hyphens, dots, apostrophes and underscores join ordinary words; they do not make a password.
    symbol = any(not c.isalnum() and c not in "-'’._" for c in value)
    inner_upper = any(a.islower() and b.isupper() for a, b in zip(value, value[1:]))
    return letter, digit, symbol, inner_upper


def _password_like(value: str) -> bool:
    if value.isdigit():   # a numeric passcode, though never a year
        return len(value) >= 6
    if len(value) < 6 or _is_not_value(value):
        return False
    letter, digit, symbol, inner_upper = _classes(value)
    return letter and (digit or symbol or inner_upper)


def _pin_like(value: str) -> bool:
    if value.isdigit():
        return 4 <= len(value) <= 12 and not re.fullmatch(r"(?:19|20)\d\d", value)   # a year is no PIN
    return _password_like(value)


def _random_like(value: str) -> bool:
    """A machine-made string: a long hex run, or a run with a part that keeps switching character classes.

    Parts are split at "-", "_" and "."; hyphenated words and ticket ids ("LED-412-chunked-matcher")
    have no random part, a vendor key ("ksb_test_4fR9qLx72mWd") has one.
    """
    if len(value) < 10 or _is_not_value(value):
        return False
    _b64, hexp = _entropy_plugins()
    if len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value):
        return any(c.isalpha() for c in value) and hexp.calculate_shannon_entropy(value) > hexp.entropy_limit
    return any(_random_part(part) for part in re.split(r"[-_.]+", value))


def _random_part(part: str) -> bool:
    if len(part) < 10:
        return False
    letter, digit, _symbol, _inner = _classes(part)
    if not (letter and digit):
        return False
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "s" for c in part]
    switches = sum(a != b for a, b in zip(kinds, kinds[1:])) / len(part)
    spread = _entropy_plugins()[0].calculate_shannon_entropy(part) / math.log2(min(len(part), 64))
    if any(c.isupper() for c in part) and any(c.islower() for c in part):
        return switches >= 0.3 and spread >= 0.75
    return len(part) >= 16 and switches >= 0.4 and spread >= 0.8


# ----- the scan -------------------------------------------------------------------------------------
def _value_at(line: str, pos: int, accept, pair: bool = False) -> tuple[int, int] | None:
    """The value starting at `pos`, as a span in `line`, when `accept` takes it; with `pair`, also the
    password of a `user / password`, `user, password X` or `email: password` pair."""
    first = _VALUE.match(line, pos)
    if not first:
        return None
    lead, value = _clean(first.group("v"))
    start = first.start("v") + lead
    if pair and re.fullmatch(r"[\w.@+-]{2,64}", value):
        joint = _CONNECTOR.match(line, start + len(value))
        if joint and ":" in joint.group() and not _is_login_name(value):
            joint = None   # "policy: 90 days" is a word and its value; only an e-mail pairs with a colon
        second = _VALUE.match(line, joint.end()) if joint else None
        if second:
            lead2, value2 = _clean(second.group("v"))
            if _password_like(value2):
                s2 = second.start("v") + lead2
                return s2, s2 + len(value2)
    if accept(value) and not _is_login_name(value):
        return start, start + len(value)
    return None


def _is_login_name(value: str) -> bool:
    return bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", value))


def _strong_password(value: str) -> bool:
    letter, digit, symbol, _inner = _classes(value)
    return len(value) >= 8 and letter and digit and symbol and not _is_not_value(value)


_KIND_OF_WORD = (("api", "api key"), ("token", "token"), ("bearer", "token"), ("jeton", "token"), ("токен", "token"),
                 ("令牌", "token"), ("トークン", "token"), ("토큰", "token"), ("secret", "secret"))
_ACCEPT = {"password": _password_like, "pin": _pin_like, "login": _strong_password, "key": _random_like}
_WEAK_SEPARATORS = {"to", "on", "er", "je"}   # copulas that are also common small words ("pin it to 2024")


def _keyword_hits(line: str, offset: int) -> list[tuple[int, SecretHit]]:
    hits = []
    for match in _KEYWORD.finditer(line):
        group = match.lastgroup or "key"
        word = match.group()
        kind = {"password": "password", "pin": "pin", "login": "password"}.get(group) or next(
            (k for w, k in _KIND_OF_WORD if w in word.lower()), "key")
        accept = _ACCEPT[group]
        end = match.end()
        stop = _SENTENCE_END.search(line, end)
        limit = min(stop.start() if stop else len(line), end + _GAP_CHARS)
        found = None
        # Right after the word: "password Tramonto!4471", "token ghp_...", "PIN 4821" (not "pin it")
        bare = re.compile(r"[ \t]+").match(line, end)
        if bare and group != "login" and (group != "pin" or word.isupper() or " " in word):
            found = _value_at(line, bare.end(), accept, pair=group == "password")
        pos = end
        while found is None:
            sep = _SEPARATOR.search(line, pos, limit)
            if not sep:
                break
            mark = sep.group().strip().lower()
            weak = mark in _WEAK_SEPARATORS
            # "id:m-aee548" later in the clause is another key's value, not this word's
            glued = sep.start() > end and mark in (":", "=") and line[sep.start() - 1:sep.start()].isalnum() \
                and not sep.group()[-1:].isspace()
            if not (weak and group in ("pin", "key")) and not glued:
                found = _value_at(line, sep.end(), accept, pair=group in ("password", "login"))
            pos = max(sep.end(), pos + 1)
        if found:
            hits.append((1, SecretHit(kind, offset + found[0], offset + found[1])))
    return hits


def _near_random_hits(line: str, offset: int) -> list[tuple[int, SecretHit]]:
    words = [m.start() for m in _KEYWORD.finditer(line)]
    if not words:
        return []
    hits = []
    for token in _TOKEN.finditer(line):
        lead, value = _clean(token.group())
        start = token.start() + lead
        if not any(abs(start - w) <= _NEAR_CHARS for w in words):
            continue
        if _COMMIT_WORD.search(line[max(0, start - 24):start]) or not _random_like(value):
            continue
        hits.append((2, SecretHit("token", offset + start, offset + start + len(value))))
    return hits


def _extend(line: str, start: int, end: int) -> tuple[int, int]:
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


def _detect_secrets_hits(lines: list[tuple[int, str]]) -> list[tuple[int, SecretHit]]:
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import transient_settings

    todo = [(o, line) for o, line in lines if _DS_CANDIDATE.search(line)]
    if not todo:
        return []
    hits = []
    with _DS_LOCK, transient_settings(_ds_config()):
        for offset, line in todo:
            for found in scan_line(line):
                value = found.secret_value or ""
                at = line.find(value) if value else -1
                if at < 0:
                    continue
                kind = _DS_KINDS.get(found.type, found.type.lower())
                start, end = (at, at + len(value)) if kind in ("secret", "password") else _extend(line, at, at + len(value))
                lead, cleaned = _clean(line[start:end])
                if kind == "secret" and (_is_not_value(cleaned) or len(cleaned) < 4):
                    continue
                hits.append((3, SecretHit(kind, offset + start + lead, offset + start + lead + len(cleaned))))
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
    for start, end in protected:
        text = text[:start] + " " * (end - start) + text[end:]
    candidates: list[tuple[int, SecretHit]] = []
    for kind, pattern in _PREFIXED:
        for m in pattern.finditer(text):
            start, end = m.start(), m.end() if kind == "private key" else m.start() + len(m.group().rstrip(_TRAIL))
            if kind in _NEEDS_RANDOM_TAIL and not any(c.isdigit() for c in text[start:end]):
                continue
            candidates.append((0, SecretHit(kind, start, end)))
    for m in _URL_PASSWORD.finditer(text):
        candidates.append((0, SecretHit("password", m.start("v"), m.end("v"))))
    lines, offset = [], 0
    for line in text.split("\n"):
        lines.append((offset, line))
        offset += len(line) + 1
    for off, line in lines:
        candidates.extend(_keyword_hits(line, off))
        candidates.extend(_near_random_hits(line, off))
    candidates.extend(_detect_secrets_hits(lines))
    return _merge(candidates, protected)


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
