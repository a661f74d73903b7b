"""Secrets in text: every shape a person pastes is found and redacted; ordinary prose about passwords is not."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.secrets import SecretHit, find_secrets, holds_secret, redact

CASES = Path(__file__).resolve().parent / "data" / "consolidation"

# (line, the secret value in it)
SECRETS = [
    # prose, many languages
    ("Walter read out his bank password so I could pay the rates: Rata!Bloom1957", "Rata!Bloom1957"),
    ("The staging DB password for app_ro is Heron-Glide-3307 (rotate it afterwards).", "Heron-Glide-3307"),
    ("my password is hunter2", "hunter2"),
    ("wifi passphrase: Toast-And-Jam-42", "Toast-And-Jam-42"),
    ("keep his login handy: ana.silva@example.com, password Orvalho!5512", "Orvalho!5512"),
    ("Login for the shop while I'm away: ana@example.org / Lagarto#Sol-2027", "Lagarto#Sol-2027"),
    ("my login is admin / hunter22", "hunter22"),
    ("Zoom passcode: 845221", "845221"),
    ("my PIN is 4821", "4821"),
    ("Le mot de passe du routeur est Renard#4410", "Renard#4410"),
    ("Mot de passe temporaire du compte pendant la migration : Hibou-Gris#7719", "Hibou-Gris#7719"),
    ("la contraseña es Sol-2024!", "Sol-2024!"),
    ("A senha é Saudade#88", "Saudade#88"),
    ("Das Passwort ist Sonne#2024", "Sonne#2024"),
    ("Kennwort: Bergsee!Blau7", "Bergsee!Blau7"),
    ("Het wachtwoord is Fiets!2023", "Fiets!2023"),
    ("Lösenordet är Kanelbulle77", "Kanelbulle77"),
    ("Salasana on Revontuli#9", "Revontuli#9"),
    ("Hasło jest Kotek-2024", "Kotek-2024"),
    ("Heslo je Pivo#2024x", "Pivo#2024x"),
    ("La password è Gatto#2024", "Gatto#2024"),
    ("пароль: Медведь2024", "Медведь2024"),
    ("我的密码是Abc12345，记得改", "Abc12345"),
    ("wifi密碼：Taipei101!", "Taipei101!"),
    ("パスワードはsakura2024です", "sakura2024"),
    ("비밀번호는 qwer1234!", "qwer1234!"),
    # codes that open something, a network's password, a password told as changed
    ("The garage code is 4471", "4471"),
    ("Neighbour's door code 2290#, the spare key is under the pot", "2290#"),
    ("digicode de l'immeuble : 7305", "7305"),
    ("VPN shared secret: gr33nTea-Harbor", "gr33nTea-Harbor"),
    ("Guest wifi: Casa-Verde-5G / Lumo!2024#tree", "Lumo!2024#tree"),
    ("储物柜密码 7781", "7781"),
    ("门锁管理员密码改成 802615 了，别外传", "802615"),
    # key and token words with a random value
    ("the API key is 9c4e1f7a2b8d6e3f0a5c9b1d7e2f4a6c", "9c4e1f7a2b8d6e3f0a5c9b1d7e2f4a6c"),
    ("Reference manager API key for the sync script, pasted by Ana: qP7xK2mN9vL4tR8wZ3cB5yHd", "qP7xK2mN9vL4tR8wZ3cB5yHd"),
    ("pasted the sandbox key so I could reproduce the error: abc_test_7hT2pQx91nVz", "abc_test_7hT2pQx91nVz"),
    ("the token is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("Authorization: Bearer mF3kQ9zX2vR7pL5nW8cT4yB6", "mF3kQ9zX2vR7pL5nW8cT4yB6"),
    ("the deploy token mF3kQ9zX2vR7pL5nW8cT4yB6 expires Friday", "mF3kQ9zX2vR7pL5nW8cT4yB6"),
    # well-known prefixes (no key word needed)
    ("use ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz for the CI", "ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0UvWxYz"),
    ("fine-grained github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123"),
    ("gitlab glpat-x7Yz3kLm9Qr2Tv5Wn8Bc here", "glpat-x7Yz3kLm9Qr2Tv5Wn8Bc"),
    ("grafana glsa_Pq83LmZx7RtVb4nW8cYd1Fh5JsA0eUo_9a8b7c6d done", "glsa_Pq83LmZx7RtVb4nW8cYd1Fh5JsA0eUo_9a8b7c6d"),
    ("bot xoxb-2048736159-1029384756-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-2048736159-1029384756-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("OPENAI_API_KEY=sk-proj-abcd1234efgh5678ijkl9012mnop", "sk-proj-abcd1234efgh5678ijkl9012mnop"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("publishable pk_live_51HxQyZ2eZvKYlo2C0abcdEF", "pk_live_51HxQyZ2eZvKYlo2C0abcdEF"),
    ("aws AKIAIOSFODNN7EXAMPLE in the env", "AKIAIOSFODNN7EXAMPLE"),
    ("maps AIzaSyD3x8Kq2LmZ7vR9tW4nB6cY1hF5jS0aEoU ok", "AIzaSyD3x8Kq2LmZ7vR9tW4nB6cY1hF5jS0aEoU"),
    ("backup script uses sl.C9yRl3SwU0nX5qMa8oZd4IeF6gKb2tHv7pLj1SuZ", "sl.C9yRl3SwU0nX5qMa8oZd4IeF6gKb2tHv7pLj1SuZ"),
    ("oauth ya29.a0AfH6SMBx7Kq2LmZ7vR9tW4nB6cY1hF5j then", "ya29.a0AfH6SMBx7Kq2LmZ7vR9tW4nB6cY1hF5j"),
    ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("clone https://deploy:Kx9!pass@git.example.com/repo.git", "Kx9!pass"),
    ('settings: password = "s3cr3t-value"', "s3cr3t-value"),
    ("DB_PASSWORD=Kestrel-Fold-5521", "Kestrel-Fold-5521"),
    ('config: {"api_key": "Heron-Glide-3307"}', "Heron-Glide-3307"),
]

# Ordinary prose and ids that must never be a hit.
NOT_SECRETS = [
    "we changed the password policy",
    "the API key lives in 1Password",
    "the API key is in 1Password",
    "rotate the token weekly",
    "PIN code is in the drawer",
    "The password must be at least 12 characters long.",
    "Reset your password at https://example.com/reset?user=maya",
    "Token usage: 12,345 input, 678 output",
    "Context window is 8192 tokens",
    "Key decision: use PostgreSQL 16 with TimescaleDB",
    "The secret to good sourdough is patience",
    "Login page is at /login",
    "Credentials are stored in Vault at secret/data/orchard",
    "SSH key is in ~/.ssh/id_ed25519",
    "Use pin 3 on the GPIO header",
    "pin the dependency to 2024",
    "Token expires after 3600 seconds",
    "Password hint: the dog's name",
    "Primary key is (device_id, ts)",
    "The token endpoint is /oauth/token",
    "api_key = os.environ['KEY']",
    "session token TTL: 15m",
    "Password policy: 90-day expiry, no reuse of the last 5",
    "Fixed the token refresh race in commit 4e1c9a7b2d",
    "fixed the token bug in commit 3b9e7d21c4f84a6e9d05b1a7c2e8f346abcd1234",
    "The SSH key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "Passwords are hashed with argon2id; we store API keys as sha256-hex digests",
    "Key ID: 4F2A9C1B",
    "The API token was revoked on 2026-11-30 at 14:05",
    "Keycloak client secret rotation is scheduled for v2.4.0",
    "Request 550e8400-e29b-41d4-a716-446655440000 failed with 401: invalid token",
    "Her phone is +44 20 7946 0958 and the price is €1,250",
    "Deployed v2.3.1 on 2026-11-30 at 10:30; the API listens on port 5433",
    "Tickets use the team key LED; branch names look like LED-412-chunked-matcher.",
    "Authentication through Keycloak, no local passwords <!-- id:m-aee548 src:memory/2026-11-21.md#L3 -->",
    "Le mot de passe doit contenir 12 caractères",
    "La contraseña se guarda en Bitwarden",
    "密码策略改为每90天更换一次",
    "パスワードは毎月変更します",
    "Пароль хранится в менеджере паролей",
    "The tokenizer is tiktoken cl100k_base",
    "The key is to keep the parser tolerant of both units",
    # code and config that name secrets without holding one
    'theme = Colors(heading="#1f4e9c", pin="#b3261e")',
    'self.pin_button = QPushButton("Pin / unpin")',
    'ARGS = {"api_key": "api_key", "secret": "secret_leak"}',
    "token_budget=4096; max_tokens=512",
    "see issue #4521 about the password reset flow",
    "the garage code is on the fridge",
    "Door code changes every month; ask Ana for it",
    "a combination of both approaches worked best",
    "wifi is down again in the studio",
    "Guest wifi: ask at the front desk",
    "the VPN shared secret lives in 1Password",
    "密码改成每月更换一次",
    "building code compliance review on 2026-03-14",
]


@pytest.mark.parametrize("line,value", SECRETS)
def test_each_secret_shape_is_found_as_its_value(line, value):
    hits = find_secrets(line)
    assert [line[h.start:h.end] for h in hits] == [value]
    out = redact(line)
    assert value not in out
    # the rest of the sentence is kept, word for word
    before, after = line.split(value, 1)
    assert out == f"{before}[redacted {hits[0].kind}]{after}"


@pytest.mark.parametrize("line", NOT_SECRETS)
def test_ordinary_prose_is_no_secret(line):
    assert find_secrets(line) == []
    assert redact(line) == line
    assert not holds_secret(line)


def test_redaction_is_idempotent_and_its_marker_is_never_a_hit():
    text = "\n".join(line for line, _value in SECRETS)
    once = redact(text)
    assert find_secrets(once) == []
    assert redact(once) == once
    assert once.count("[redacted ") == len(SECRETS)
    for marker in ("[redacted password]", "[redacted api key]", "the token is [redacted token]",
                   'password = "[redacted password]"', "key: [redacted key] / [redacted password]"):
        assert find_secrets(marker) == []


def test_spans_are_offsets_in_the_whole_text():
    text = "first line\nthe password is Kx8-Lamp-2231 for now\n\nAKIAIOSFODNN7EXAMPLE"
    hits = find_secrets(text)
    assert [text[h.start:h.end] for h in hits] == ["Kx8-Lamp-2231", "AKIAIOSFODNN7EXAMPLE"]
    assert all(isinstance(h, SecretHit) for h in hits)
    assert hits[0].kind == "password"
    assert redact(text) == "first line\nthe password is [redacted password] for now\n\n[redacted aws key]"


def test_a_private_key_block_is_one_secret():
    block = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
             "QyNTUxOQAAACDxO3ICxvGJeVbbjUGvR1w2Dmrm0pQy3h4V7Y0Uq8bZZwAAAJgL5uP4C+bj\n"
             "-----END OPENSSH PRIVATE KEY-----")
    text = f"the deploy key:\n{block}\nkeep it safe"
    hits = find_secrets(text)
    assert [(h.kind, text[h.start:h.end]) for h in hits] == [("private key", block)]
    assert redact(text) == "the deploy key:\n[redacted private key]\nkeep it safe"
    # cut short (no END line): the base64 lines after the header go, the prose after them stays
    cut = "\n".join(block.splitlines()[:3]) + "\nkeep it safe"
    assert redact(cut) == "[redacted private key]\nkeep it safe"
    # inside a JSON string, where the newlines are written as \n
    record = json.dumps({"content": block + "\n"})
    assert json.loads(redact(record)) == {"content": "[redacted private key]\n"}


def test_the_demo_workspace_holds_no_secret(tmp_path):
    from core.demo import write_demo

    write_demo(tmp_path / "demo")
    files = [p for p in (tmp_path / "demo").rglob("*") if p.is_file() and ".reverie" not in p.parts]
    assert len(files) > 20
    flagged = [(p.name, line) for p in files for line in p.read_text(encoding="utf-8").splitlines()
               if find_secrets(line)]
    assert flagged == []


def _case_items():
    for case in sorted(p for p in CASES.iterdir() if p.is_dir()):
        yield case, json.loads((case / "labels.json").read_text(encoding="utf-8"))["items"]


def test_no_other_line_of_the_consolidation_cases_is_a_secret():
    checked = 0
    for case, items in _case_items():
        secret_texts = [item["text"] for item in items if item["kind"] == "secret"]
        for path in [case / "MEMORY.md", *sorted((case / "memory").glob("*.md"))]:
            for line in path.read_text(encoding="utf-8").splitlines():
                if any(text in line for text in secret_texts):
                    continue
                checked += 1
                assert find_secrets(line) == [], f"{case.name}/{path.name}: {line}"
    assert checked > 300


def test_every_secret_of_the_consolidation_cases_is_found_and_redacted():
    found = 0
    for case, items in _case_items():
        for item in (i for i in items if i["kind"] == "secret"):
            log = (case / item["log"]).read_text(encoding="utf-8")
            line = next(line for line in log.splitlines() if item["text"] in line)
            assert holds_secret(line)
            out = redact(line)
            for expect in item["expect"]:
                assert expect not in out
            # what is not the secret stays
            assert out.split("[redacted")[0] == line.split(item["expect"][0])[0]
            found += 1
    assert found >= 6


def test_a_long_text_is_searched_in_pieces_without_losing_a_secret():
    from core.secrets import scanner as secrets

    filler = "- [09:00] Maya prefers small pull requests with one change each, see docs/process.md"
    lines = [filler] * 3000
    for n in range(0, 3000, 370):
        lines[n] = f"- [09:{n % 60:02d}] the wiki password is Kx8-Lamp-{n:04d}"
    text = "\n".join(lines)
    assert len(text) > 5 * secrets._PIECE_CHARS
    values = [text[h.start:h.end] for h in find_secrets(text)]
    assert values == [f"Kx8-Lamp-{n:04d}" for n in range(0, 3000, 370)]
    pieces = list(secrets._pieces(text))
    assert len(pieces) > 5 and "\n".join(piece for _offset, piece in pieces) == text
    assert all(text[offset:offset + len(piece)] == piece for offset, piece in pieces)
