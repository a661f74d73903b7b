"""Follow the system light/dark theme, and the few colours the views draw themselves.

Qt 6.5+ reports the system colour scheme (`QStyleHints.colorScheme`) and signals
when it changes. The native styles of macOS and Windows follow it on their own;
elsewhere the app uses Fusion with a palette for the scheme. `REVERIE_THEME=dark`
or `light` overrides the system (screenshots, and systems that report no scheme).
Views ask `colors()` for their highlight colours, so they stay readable on both.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle


@dataclass(frozen=True)
class Colors:
    dark: bool
    heading: str
    bullet: str
    comment: str
    pin: str
    code: str
    flush_band: str
    added: str
    removed: str
    changed: str
    user: str
    assistant: str
    tool: str
    system: str
    match: str
    warning_bg: str
    info_bg: str
    on_tint: str          # text drawn on the tints above (diff rows, decided rows, bars, search matches)


LIGHT = Colors(False, heading="#1f4e9c", bullet="#6b4f00", comment="#6b6b6b", pin="#b3261e", code="#7a3e9d",
               flush_band="#eef4ff", added="#dcf5dc", removed="#fbe0e0", changed="#fff4cc", user="#1f4e9c",
               assistant="#2e7d32", tool="#8a5a00", system="#6d6d6d", match="#ffe58a", warning_bg="#fff1c2",
               info_bg="#e3efff", on_tint="#1a1a1a")
DARK = Colors(True, heading="#8ab4f8", bullet="#e0c068", comment="#8c8c8c", pin="#ff8a80", code="#d7a8f0",
              flush_band="#1e2a3d", added="#1f3d24", removed="#4a2326", changed="#4a4020", user="#8ab4f8",
              assistant="#81c995", tool="#f6c26b", system="#a0a0a0", match="#6b5a14", warning_bg="#4a3d12",
              info_bg="#1c3350", on_tint="#e8eaed")

# Which colour the views draw on which background: each pair must read at WCAG AA (4.5:1) in both
# themes (tests/desktop/test_contrast.py). "text" and "base" stand for the palette's Text and Base.
TEXT_ON_BASE = ("heading", "bullet", "comment", "pin", "code", "user", "assistant", "tool", "system")
TINTS = ("flush_band", "added", "removed", "changed", "match", "warning_bg", "info_bg")
PALETTE_PAIRS = (("Text", "Base"), ("WindowText", "Window"), ("ButtonText", "Button"),
                 ("HighlightedText", "Highlight"), ("ToolTipText", "ToolTipBase"), ("PlaceholderText", "Base"),
                 ("Link", "Base"))


def luminance(color: str) -> float:
    """WCAG 2.x relative luminance of a colour given as #rrggbb or a Qt colour name."""
    q = QColor(color)
    def channel(v: int) -> float:
        c = v / 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(q.red()) + 0.7152 * channel(q.green()) + 0.0722 * channel(q.blue())


def contrast(foreground: str, background: str) -> float:
    """WCAG contrast ratio, 1 to 21; 4.5 is AA for normal text."""
    a, b = luminance(foreground), luminance(background)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def text_pairs(c: "Colors", palette: QPalette) -> list[tuple[str, str, str]]:
    """(what, foreground, background) for every text colour the app draws on a background."""
    role = QPalette.ColorRole
    base, text = palette.color(role.Base).name(), palette.color(role.Text).name()
    out = [(f"{fg} on {bg}", palette.color(getattr(role, fg)).name(), palette.color(getattr(role, bg)).name())
           for fg, bg in PALETTE_PAIRS]
    out += [(f"{name} on Base", getattr(c, name), base) for name in TEXT_ON_BASE]
    out += [(f"on_tint on {name}", c.on_tint, getattr(c, name)) for name in TINTS]
    out += [(f"Text on {name}", text, getattr(c, name)) for name in ("flush_band",)]
    out += [("heading on flush_band", c.heading, c.flush_band), ("comment on Text's rows", c.comment, base)]
    return out


_choice = "system"      # the person's choice in the app (View > Theme); REVERIE_THEME wins over it


def set_choice(choice: str) -> None:
    global _choice
    _choice = choice if choice in ("dark", "light") else "system"


def wanted_scheme() -> str:
    forced = os.environ.get("REVERIE_THEME", "").strip().lower()
    if forced in ("dark", "light"):
        return forced
    if _choice != "system":
        return _choice
    app = QGuiApplication.instance()
    if app is not None and app.styleHints().colorScheme() == Qt.ColorScheme.Dark:
        return "dark"
    return "light"


def is_dark() -> bool:
    app = QApplication.instance()
    if app is None:
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def colors() -> Colors:
    return DARK if is_dark() else LIGHT


def light_palette(style) -> QPalette:
    """Fusion's light palette, with a selection dark enough for white text on it (Fusion's #308cc6: 3.7:1)."""
    p = style.standardPalette()
    p.setColor(QPalette.ColorRole.Highlight, QColor("#1f5fa8"))
    return p


def dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor("#1e1f22"), QColor("#2b2d30"), QColor("#dfe1e5")
    for role, color in ((QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
                        (QPalette.ColorRole.Base, base), (QPalette.ColorRole.AlternateBase, QColor("#26282b")),
                        (QPalette.ColorRole.ToolTipBase, QColor("#3c3f41")), (QPalette.ColorRole.ToolTipText, text),
                        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.Button, window),
                        (QPalette.ColorRole.ButtonText, text), (QPalette.ColorRole.BrightText, QColor("#ff6b6b")),
                        (QPalette.ColorRole.Link, QColor("#8ab4f8")), (QPalette.ColorRole.Highlight, QColor("#2f65ca")),
                        (QPalette.ColorRole.HighlightedText, QColor("#ffffff")),
                        (QPalette.ColorRole.PlaceholderText, QColor("#8c8c8c"))):
        p.setColor(role, color)
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f737a"))
    return p


class _ReadableFusion(QProxyStyle):
    """Fusion, with check boxes that show in the dark palette: Fusion outlines the box in a shade
    darker than the window, which on a dark window is as dark as the box itself."""

    BOXES = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck)

    def drawPrimitive(self, element, option, painter, widget=None):
        super().drawPrimitive(element, option, painter, widget)
        if element in self.BOXES and option.palette.color(QPalette.ColorRole.Window).lightness() < 128:
            painter.save()
            painter.setPen(option.palette.color(QPalette.ColorRole.PlaceholderText))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(option.rect.adjusted(0, 0, -1, -1))
            painter.restore()


def apply_theme(app: QApplication) -> str:
    """Style the app for the current scheme; returns "dark" or "light"."""
    scheme = wanted_scheme()
    native = sys.platform in ("darwin", "win32") and not os.environ.get("REVERIE_THEME") and _choice == "system"
    if native:
        return scheme            # the platform style follows the system by itself
    if not isinstance(app.style(), _ReadableFusion):
        app.setStyle(_ReadableFusion("Fusion"))
    app.setPalette(dark_palette() if scheme == "dark" else light_palette(app.style()))
    return scheme


def follow_system(app: QApplication, on_change=None) -> None:
    """Re-apply the theme when the system switches between light and dark."""
    def changed(_scheme) -> None:
        apply_theme(app)
        if on_change is not None:
            on_change()
    app.styleHints().colorSchemeChanged.connect(changed)
