"""Reading workspace text that may not be valid UTF-8.

Agents write what they write: a daily log with a stray Latin-1 byte must still
open, be searchable and be reported, never skipped silently or crash a view.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DecodedText:
    text: str
    replaced: int          # how many undecodable bytes became U+FFFD
    first_bad_offset: int  # byte offset of the first bad byte, -1 when clean

    @property
    def clean(self) -> bool:
        return self.replaced == 0


def decode_lossy(data: bytes) -> DecodedText:
    try:
        return DecodedText(data.decode("utf-8"), 0, -1)
    except UnicodeDecodeError as exc:
        first = exc.start
    text = data.decode("utf-8", errors="replace")
    # Count only replacements that came from bad bytes, not U+FFFD already in the file.
    original = data.count("\ufffd".encode("utf-8"))
    return DecodedText(text, max(1, text.count("\ufffd") - original), first)



# C0 controls, DEL and C1 controls: a NUL cuts a C string, ESC starts a terminal command that a
# `reverie search` or `read` would otherwise send to the person's terminal.
_CONTROLS = {c for c in range(0x20)} | {0x7f} | set(range(0x80, 0xa0))


def escape_controls(text: str, keep: str = "\t\n\r") -> str:
    """`text` with every control character outside `keep` written as a visible escape (ESC -> \\x1b)."""
    if not any(ord(ch) in _CONTROLS and ch not in keep for ch in text):
        return text
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) in _CONTROLS and ch not in keep else ch for ch in text)
