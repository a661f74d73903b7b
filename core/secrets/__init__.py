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

from core.secrets.masking import hidden_secret_lines, mask_line, mask_secrets, mask_window, secret_lines
from core.secrets.scanner import REDACTED, SecretHit, find_secrets, holds_secret, redact, redact_count

__all__ = ["SecretHit", "find_secrets", "holds_secret", "redact", "redact_count", "REDACTED", "secret_lines",
           "hidden_secret_lines", "mask_secrets", "mask_line", "mask_window"]
