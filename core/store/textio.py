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

