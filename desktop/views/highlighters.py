"""Syntax highlighting for the markdown the workspace is written in.

MEMORY.md: headings, bullet marks, provenance comments dimmed (or folded into a thin
marker whose tooltip is the bullet's provenance), the `pin` flag marked, inline code and
bold. Daily logs add a band behind each `## Memory Flush — ...` block (the lines a flush
wrote, up to the next heading), so a person sees at a glance what an agent wrote on its own.
"""
from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

from core.workspace import FLUSH_HEADING
from desktop import theme

_HEADING = re.compile(r"^#{1,6}\s")
_BULLET = re.compile(r"^\s*[-*+]\s")
_COMMENT = re.compile(r"<!--.*?-->")
_PIN = re.compile(r"\bpin\b")
_CODE = re.compile(r"`[^`]+`")
_BOLD = re.compile(r"\*\*[^*]+\*\*")
_TIME = re.compile(r"^\s*[-*+]\s+(\[\d{1,2}:\d{2}\])")
IN_FLUSH = 1


def _fmt(color: str | None = None, *, bold: bool = False, italic: bool = False, background: str | None = None,
         smaller: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    if color:
        fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    if italic:
        fmt.setFontItalic(True)
    if background:
        fmt.setBackground(QColor(background))
    if smaller:
        fmt.setFontPointSize(max(6.0, QFont().pointSizeF() * 0.85))
    return fmt


class MarkdownHighlighter(QSyntaxHighlighter):
    mark_flush_blocks = False

    def __init__(self, document):
        super().__init__(document)
        self.folded = False          # provenance comments drawn as a thin marker (the text stays as it is)
        self.refresh_colors()

    def set_folded(self, folded: bool) -> None:
        self.folded = folded
        self.rehighlight()

    @staticmethod
    def _marker(color: str) -> QTextCharFormat:
        fmt = QTextCharFormat()
        shade = QColor(color)
        shade.setAlpha(110)
        fmt.setForeground(shade)
        fmt.setBackground(shade)
        fmt.setFontPointSize(1.0)
        return fmt

    def refresh_colors(self) -> None:
        c = theme.colors()
        self.heading = _fmt(c.heading, bold=True)
        self.flush_heading = _fmt(c.heading, bold=True, background=c.flush_band)
        self.bullet = _fmt(c.bullet, bold=True)
        self.comment = _fmt(c.comment, italic=True)
        # Folded: a 1-point run of the comment's text, drawn in the marker's colour on a band of it.
        self.folded_comment = self._marker(c.comment)
        self.folded_pin = self._marker(c.pin)          # a pinned bullet's marker in the pin colour
        self.pin = _fmt(c.pin, bold=True, italic=True)
        self.code = _fmt(c.code)
        self.bold = _fmt(bold=True)
        self.time = _fmt(c.comment)
        self.band = c.flush_band
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:
        state = 0
        if self.mark_flush_blocks:
            if text.startswith(FLUSH_HEADING):
                state = IN_FLUSH
            elif text.startswith("#"):
                state = 0
            else:
                state = self.previousBlockState() if self.previousBlockState() == IN_FLUSH else 0
        self.setCurrentBlockState(state)
        in_flush = state == IN_FLUSH

        def put(start: int, length: int, fmt: QTextCharFormat) -> None:
            if in_flush:                  # keep the band behind every other format
                fmt = QTextCharFormat(fmt)
                fmt.setBackground(QColor(self.band))
            self.setFormat(start, length, fmt)

        if in_flush and text:
            put(0, len(text), QTextCharFormat())
        if _HEADING.match(text):
            put(0, len(text), self.flush_heading if text.startswith(FLUSH_HEADING) else self.heading)
            return
        bullet = _BULLET.match(text)
        if bullet:
            put(0, bullet.end(), self.bullet)
        stamp = _TIME.match(text)
        if stamp:
            put(stamp.start(1), stamp.end(1) - stamp.start(1), self.time)
        for regex, fmt in ((_CODE, self.code), (_BOLD, self.bold)):
            for match in regex.finditer(text):
                put(match.start(), match.end() - match.start(), fmt)
        for match in _COMMENT.finditer(text):
            if self.folded:
                pinned = _PIN.search(match.group(0)) is not None
                put(match.start(), match.end() - match.start(), self.folded_pin if pinned else self.folded_comment)
                continue
            put(match.start(), match.end() - match.start(), self.comment)
            for pin in _PIN.finditer(match.group(0)):
                put(match.start() + pin.start(), 3, self.pin)


class DailyLogHighlighter(MarkdownHighlighter):
    mark_flush_blocks = True

