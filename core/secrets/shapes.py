"""What announces a secret in prose, and what a secret value looks like (core.secrets uses these).

The vocabulary: words for a password, a PIN, a login, a key or token, in many languages, and what
joins a word to its value (":", "is", "es", "est", "è", "是", "は", ...). Value shapes: a password is
a run without spaces that mixes letters with digits or symbols; a key or token word needs a random-
looking value (a long hex run, a part that keeps switching character classes). Versions, dates,
times, prices, phone numbers, paths, URLs without credentials, UUIDs and fingerprints are never values.
Well-known token prefixes (ghp_, glpat-, xoxb-, sk-, AKIA, AIza, sl., ya29., eyJ...) are secrets alone.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class SecretHit:
    kind: str
    start: int      # span of the secret value inside the text
    end: int


# ----- vocabulary ------------------------------------------------------------------------------------
# Words that announce a password (a value after them is a secret when it merely looks like one).
PASSWORD_WORDS = (
    r"passwords?|passwd|pass\s?codes?|pass\s?phrases?|pwd|pw|"
    r"mot(?:s)? de passe|mdp|contraseñas?|contrasenas?|senhas?|palavra[- ]passe|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|"
    r"wachtwoord(?:en)?|lösenord(?:et)?|passord(?:et)?|adgangskode|salasana|hasł[oa]|haslo|heslo|"
    r"parola d'ordine|parolă|şifre|şifresi|jelszó|κωδικός|пароль|паролі|mật khẩu|kata sandi|"
    r"סיסמה|كلمة المرور|كلمة السر|पासवर्ड|"
    # what a network or a tunnel is opened with is a password too ("VPN shared secret: …", "wifi key …")
    r"shared[\s-]?secrets?|pre-?shared[\s-]?keys?|psk|wi-?fi[\s-]?keys?|wlan[\s-]?keys?|network[\s-]?keys?"
)
# Words for a PIN: a value of four or more digits after them is a secret.
# A code that opens a door, a gate, an alarm or a safe is a PIN ("the garage code is 4471", "digicode 2290#").
PIN_WORDS = (r"pin(?:\s?codes?|\s?numbers?)?|code pin|pin码|pin碼|"
             + "|".join(rf"{thing}[\s-]?codes?" for thing in (
                 "door", "gate", "garage", "alarm", "safe", "lock", "locker", "keypad", "entry", "entrance", "building",
                 "access", "unlock")) + "|"
             r"combination(?:\s?lock)?|digicodes?|t[üu]rcodes?|torcodes?")
# Words for an account's login: a `user / password` shape after them.
# (a Wi-Fi network is named with its password the way an account is: "Guest wifi: Casa-5G / Lumo!2024")
LOGIN_WORDS = (r"log-?ins?|credentials?|creds|identifiants?|zugangsdaten|credenciales|credenziali|учётные данные|"
               r"wi-?fi|wlan")
# Weaker words: a value after them is a secret only when it looks random (a person's "key" is often a door key).
KEY_WORDS = (
    r"api[\s_-]?keys?|api[\s_-]?tokens?|access[\s_-]?keys?|access[\s_-]?tokens?|secret[\s_-]?keys?|"
    r"client[\s_-]?secrets?|auth[\s_-]?tokens?|bearer|private[\s_-]?keys?|tokens?|keys?|secrets?|"
    r"jetons?|clés?|cles?|claves?|chaves?|schlüssel|sleutel|nyckel|ключ|токен"
)
# Words of scripts written without spaces (or with particles glued on) need no word boundary.
UNSPACED = {"password": "密码|密碼|口令|パスワード|비밀번호|패스워드|암호", "pin": "暗証番号|PIN码|PIN碼|门禁码|門禁碼|开锁码|開鎖碼",
            "login": "登录信息|ログイン情報", "key": "密钥|密鑰|令牌|トークン|토큰|APIキー|API키"}
CLASSES = (("password", PASSWORD_WORDS), ("pin", PIN_WORDS), ("login", LOGIN_WORDS), ("key", KEY_WORDS))


def first_chars(*patterns: str) -> str:
    """The first characters of the top-level alternatives of word patterns (each starts with a letter)."""
    firsts, depth, start = set(), 0, True
    for char in "|".join(patterns):
        if start:
            firsts.add(char.lower())
        start = char == "|" and depth == 0
        depth += {"(": 1, ")": -1}.get(char, 0)
    return "".join(sorted(firsts))


# Spaced scripts need a boundary (no "keyboard", "monkey", "pinned", "pin_button"; "DB_PASSWORD" is one). The look at the first character
# lets the search skip most positions of a long text at once (a fifth of the time).
KEYWORD = re.compile(f"(?=[{re.escape(first_chars(*(w for _n, w in CLASSES), *UNSPACED.values()))}])(?:" + "|".join(
    rf"(?P<{name}>(?<![^\W\d_])(?:{words})(?![^\W\d_]|_[^\W\d_])|{UNSPACED[name]})" for name, words in CLASSES)
    + ")", re.IGNORECASE)

# What joins a word to its value: punctuation, or a copula in one of many languages.
SEPARATOR = re.compile(
    r"\s*(?:[:：=＝]|->|=>|→|—|–)\s*|"
    r"\s+(?:is|was|are|es|era|est|è|é|ist|lautet|är|er|on|jest|je|to|equals)(?![^\W\d_])\s*[:：]?\s*|"
    r"\s*(?:改成|改为|改為|换成|換成|设为|設為|设成|設成|是|为|為|は|が|는|은)\s*[:：]?\s*", re.IGNORECASE)
SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|[。！？；\n]")
GAP_CHARS = 90          # a value is told within a clause of its word
NEAR_CHARS = 80         # a random token counts as near a word within this distance

# A value: one run without spaces, quotes, backslashes or CJK punctuation (so a value inside a JSON
# string, `\"Hunter22!\"`, is the value alone and its redaction leaves the JSON valid).
VALUE = re.compile(r"\\?[\"'`“‘«<(]?(?P<v>[^\s\"'`“”‘’«»<>，。、；：！？\\]+)")
TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~!#$%^&*]+")
TRAIL = ".,;:?)]}\"'"
CLOSERS = {")": "(", "]": "[", "}": "{"}
# Between a user name and its password: "user / pass", "user, password pass", "user pw: pass".
PW_WORD = r"(?:password|passwort|pass|pwd|pw|mot de passe|senha|contraseña|wachtwoord|пароль|密码)"
CONNECTOR = re.compile(rf"\s*[/,;|:]\s*(?:{PW_WORD}\s*[:=]?\s*)?|\s+{PW_WORD}\s*[:=]?\s*", re.IGNORECASE)

# Values that are never secrets.
NOT_VALUE = [re.compile(p, re.IGNORECASE) for p in (
    r"^\[redacted",
    r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]",   # CJK prose, not a typed password
    r"^\d+(?:[.,]\d+)?-?[^\W\d_]+$",                    # an amount with its unit: 90-day, 15min, 3rd
    r"^(?:sha\d*|md5):",                                 # a key fingerprint is public
    r"^[a-z][a-z0-9+.-]*://[^@]*$",                     # a URL without credentials
    r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",                     # an e-mail address
    r"^(?:~|\.{1,2})?/|^[a-z]:\\|^[\w.-]+(?:/[\w.-]+)*\.[a-z][a-z0-9]{0,4}$",   # a path (absolute, a file)
    r"^(?:[a-z0-9-]+\.)+[a-z]{2,}(?:[/:]\S*)?$",      # a host name, maybe with its path
    r"^[a-z]{1,4}-[0-9a-f]{6,24}(?:-\d+)?(?:~[\d-]+)?$",   # an id Reverie makes (m-aee548, j-3b72..., ho-...)
    r"^v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?$",                # a version
    r"^\d{4}-\d{2}-\d{2}|^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$|^\d{1,2}:\d{2}",   # a date, a time
    r"^[$€£¥₹]\s?\d|^\d+(?:[.,]\d+)*\s?(?:[$€£¥%]|eur|usd|k|m|ms|s|h|d|gb|mb|kb|px)?$",  # a price, an amount
    r"^\+?\d[\d().\s-]{6,}\d$",                          # a phone number
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",   # a UUID
    r"^\$\{|^\{\{|^%\(|^<|^x{3,}$|^\*{3,}$|^\.{3,}$",     # a placeholder
    r"^#[0-9a-f]{3,8}$|^#\d+$",                          # a colour, an issue number
    r"^(?:base(?:32|58|64)\w*|sha-?\d+\w*|md5\w*|utf-?(?:8|16)\w*|x\.?509|oauth2?|https?[23]?|ipv[46]|"
    r"aes-?\d*\w*|rsa-?\d*|ed25519|hmac\w*|pbkdf2|bcrypt|argon2\w*|scrypt|tls-?\d[\d.]*|mp[34]|h26[45])(?:[-_.]\w+)?$",
)]
# A hash named as a commit, a digest or a fingerprint is an id, not a secret.
COMMIT_WORD = re.compile(r"(?:commit|sha\d*|revision|rev|hash|digest|merge|cherry-pick|checkout|revert|rebase|"
                          r"fingerprint|md5)(?:\s+is)?[\s:#@-]*$",
                          re.IGNORECASE)

# ----- well-known token shapes ----------------------------------------------------------------------
# A private key block spans lines: searched in the whole text (its literal start makes that fast).
# A block cut short takes the base64 lines that follow its header.
PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?-----END [A-Z0-9 ]*"
                          r"PRIVATE KEY(?: BLOCK)?-----|(?:(?:\n|\\n)[A-Za-z0-9+/=]{16,})*)")
PREFIXED_SHAPES = (
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
)
# One pass over the text for all of them; a look at the first character skips most positions fast.
PREFIXED_KINDS = [kind for kind, _p in PREFIXED_SHAPES]
PREFIXED = re.compile(r"(?=[gxsprAyhne])(?:" + "|".join(f"(?P<p{n}>{p})" for n, (_k, p) in enumerate(PREFIXED_SHAPES))
                       + ")")
URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:(?P<v>[^\s/@]+)@[^\s/@]", re.IGNORECASE)
# The same without a scheme: "postgres:s3cr3t@db.internal:5432".
BARE_URL_PASSWORD = re.compile(r"(?<![\w/:@.-])[a-z][\w.-]{0,63}:(?P<v>[^\s/@:]{3,128})@[a-z0-9-]+(?:\.[a-z0-9-]+)*"
                               r"(?::\d+)?(?![\w@])", re.IGNORECASE)
# An account named by a user word and its password after it: "用户: root / Tr0ub4dor", "user=admin, pw: ...".
ACCOUNT_PAIR = re.compile(r"(?<![^\W\d_])(?:user(?:name)?|account|benutzer(?:name)?|utilisateur|usuario|用户名?|用戶名?|"
                          r"账号|帳號|ユーザー名?|사용자)\s*[:：=]\s*[\w.@+-]{2,64}\s*[/,|，]\s*"
                          r"(?:(?:password|passwort|pass|pwd|pw|密码|密碼)\s*[:：=]?\s*)?(?P<v>[^\s,，。;；]{4,64})",
                          re.IGNORECASE)
# An account and its password in brackets: "(admin/admin123)", "（root / Passw0rd）".
BRACKET_PAIR = re.compile(r"[(（\[]\s*(?P<u>[\w.@+-]{2,40})\s*/\s*(?P<v>[^\s()（）\[\]/]{4,64})\s*[)）\]]")
ACCOUNT_NAMES = frozenset({"admin", "administrator", "root", "user", "guest", "test", "demo", "postgres", "sa",
                           "ubuntu", "pi", "oracle", "mysql", "elastic", "operator", "superuser", "sysadmin"})
# Prefixed shapes that need a random tail (no "sk-learn-compatible" words).
NEEDS_RANDOM_TAIL = {"api key", "dropbox token", "slack token"}


@lru_cache(maxsize=1)
def entropy_plugins():
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    return Base64HighEntropyString(), HexHighEntropyString()


# ----- value shapes ---------------------------------------------------------------------------------
UNSPACED_SCRIPT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


def clean(value: str) -> tuple[int, str]:
    """(characters cut from the front, the value without quotes and trailing punctuation); a closing
    bracket the value opened itself is part of it ("P@ss[w0rd]")."""
    glued = UNSPACED_SCRIPT.search(value)
    if glued and glued.start() > 0:
        value = value[:glued.start()]   # "パスワードはsakura2024です": the particle is not the password
    elif glued:
        return 0, value                 # CJK prose after the word: no typed value
    lead = len(value) - len(value.lstrip("\"'`“‘«(<"))
    value = value[lead:]
    end = len(value.rstrip(TRAIL))
    while end < len(value) and value[end] in CLOSERS and \
            value[:end].count(CLOSERS[value[end]]) > value[:end].count(value[end]):
        end += 1                        # "P@ss[w0rd]": the bracket closes one the value opened
    return lead, value[:end]


# A relative path of names ("docs/setup", "openai-codex/gpt-5.4", "project/pr_Gq.../trs_5r..."): not a key or
# a login, but a password told as one may hold "/" ("the vault password is abc/def123").
RELATIVE_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)+/?$")
# A standard base64 run: a secret access key ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), not a path.
BASE64_RUN = re.compile(r"^[A-Za-z0-9+/]{30,}={0,2}$")


def is_not_value(value: str, *, password: bool = False) -> bool:
    if not password and RELATIVE_PATH.match(value) and not BASE64_RUN.match(value):
        return True
    return any(p.search(value) for p in NOT_VALUE)


def classes(value: str) -> tuple[bool, bool, bool, bool]:
    letter = any(c.isalpha() for c in value)
    digit = any(c.isdigit() for c in value)
    # Hyphens, dots, apostrophes and underscores join ordinary words; they do not make a password.
    symbol = any(not c.isalnum() and c not in "-'’._" for c in value)
    inner_upper = any(a.islower() and b.isupper() for a, b in zip(value, value[1:]))
    return letter, digit, symbol, inner_upper


def password_like(value: str) -> bool:
    if value.isdigit():   # a numeric passcode, though never a year
        return len(value) >= 6
    if len(value) < 6 or is_not_value(value, password=True):
        return False
    letter, digit, symbol, inner_upper = classes(value)
    if RELATIVE_PATH.match(value) and all(re.sub(r"[-_.]", "", part).isalpha() for part in value.split("/") if part):
        return False           # "docs/setup", "notes/team-wiki": folder names, not a password
    return letter and (digit or symbol or inner_upper)


# An app-specific password as Apple, Google and Dropbox hand them out: 16 letters in four groups of four.
# Letters and hyphens alone look like words joined ("see-the-vault"), so this shape is named apart; four
# four-letter words joined after a password word ("hint: dark-blue-with-gold") read as one too, and are
# masked: hiding a hint costs less than showing a password.
APP_PASSWORD = re.compile(r"[a-z]{4}(?:-[a-z]{4}){3}|[A-Z]{4}(?:-[A-Z]{4}){3}")


def passphrase_like(value: str, *, assigned: bool) -> bool:
    """A password of letters only ("correcthorsebatterystaple"): after an assignment (`DB_PASSWORD=`) a run
    of six or more; in prose ("the password is ..."), one longer than ordinary words (16 or more); an
    app-specific password ("vqzr-kpwe-mtla-hxob") wherever a password word tells it."""
    if APP_PASSWORD.fullmatch(value):
        return True
    if not value.isalpha() or is_not_value(value):
        return False
    return len(value) >= (6 if assigned else 16)


def pin_like(value: str) -> bool:
    value = value.rstrip("#*") if value[:1].isdigit() else value      # a keypad's enter key: "2290#"
    if value.isdigit():
        return 4 <= len(value) <= 12 and not re.fullmatch(r"(?:19|20)\d\d", value)   # a year is no PIN
    return password_like(value)


def random_like(value: str) -> bool:
    """A machine-made string: a long hex run, or a run with a part that keeps switching character classes.

    Parts are split at "-", "_" and "."; hyphenated words and ticket ids ("LED-412-chunked-matcher")
    have no random part, a vendor key ("ksb_test_4fR9qLx72mWd") has one.
    """
    if len(value) < 10 or is_not_value(value):
        return False
    _b64, hexp = entropy_plugins()
    if len(value) >= 32 and all(c in "0123456789abcdefABCDEF" for c in value):
        return any(c.isalpha() for c in value) and hexp.calculate_shannon_entropy(value) > hexp.entropy_limit
    return any(random_part(part) for part in re.split(r"[-_.]+", value))


def random_part(part: str) -> bool:
    if len(part) < 10:
        return False
    letter, digit, _symbol, _inner = classes(part)
    if not (letter and digit):
        return False
    kinds = ["d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "s" for c in part]
    switches = sum(a != b for a, b in zip(kinds, kinds[1:])) / len(part)
    spread = entropy_plugins()[0].calculate_shannon_entropy(part) / math.log2(min(len(part), 64))
    if any(c.isupper() for c in part) and any(c.islower() for c in part):
        return switches >= 0.3 and spread >= 0.75
    return len(part) >= 16 and switches >= 0.4 and spread >= 0.8


def is_login_name(value: str) -> bool:
    return bool(re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", value))

def strong_password(value: str) -> bool:
    letter, digit, symbol, _inner = classes(value)
    return len(value) >= 8 and letter and digit and symbol and not is_not_value(value)
