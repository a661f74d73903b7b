"""The MEMORY.md editor: highlighting, rendered preview, provenance on hover, pin/unpin, history.

Hovering a bullet shows where the fact came from (its id, flags and the text of each
source line); Ctrl+click or the provenance strip under the editor opens the source
at its line. The source lines are read on a task after each load, so hovering
never touches the disk. Pin/unpin rewrites the bullet's comment (`set_flag`) as one
undoable edit, and saves at once when there were no other unsaved edits.
"""
from __future__ import annotations

import html
import json

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (QLabel, QMenu, QPushButton, QSplitter, QTextBrowser, QToolTip,
                               QVBoxLayout, QWidget)

from core.workspace import Bullet, parse_bullet, parse_document, set_flag, strip_comments
from desktop.views.document_editor import DocumentEditor
from desktop.views.line_numbers import NumberedText
from desktop.views.highlighters import MarkdownHighlighter

PROVENANCE_DELAY_MS = 200


def resolve_sources(ws, text: str) -> dict[str, str]:
    """ref -> the text it points at, for every source of every bullet (runs on a task)."""
    files: dict[str, list[str] | None] = {}
    found: dict[str, str] = {}
    for bullet in parse_document(text).bullets():
        for source in bullet.sources:
            if source.ref in found:
                continue
            path = source.path
            if path not in files:
                try:
                    files[path] = ws.read(path).text.split("\n")
                except Exception:       # a missing or outside path: shown as unresolved, never fatal
                    alt = "memory/archive/" + path.split("/", 1)[-1] if path.startswith("memory/") else ""
                    try:
                        files[path] = ws.read(alt).text.split("\n") if alt else None
                    except Exception:
                        files[path] = None
            lines = files[path]
            span = source.lines
            if lines is None:
                found[source.ref] = "(the source file is missing)"
            elif span is None:
                found[source.ref] = ""
            else:
                picked = lines[span[0] - 1: span[1]]
                if source.is_session:
                    picked = [_message_text(line) for line in picked]
                found[source.ref] = "\n".join(picked).strip() or "(the line range is past the end of the file)"
    return found


def _message_text(line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return line
    return f"{record.get('role', '?')}: {record.get('content') or ''}" if isinstance(record, dict) else line


class MemoryText(NumberedText):
    """The text area: tooltips with provenance, Ctrl+click to open a bullet's source."""

    sourceClicked = Signal(str, int)

    def __init__(self, owner: "MemoryEditor"):
        super().__init__()
        self.owner = owner
        self.setMouseTracking(True)

    def bullet_at(self, pos) -> Bullet | None:
        block = self.cursorForPosition(pos).block()
        return parse_bullet(block.text(), block.blockNumber() + 1)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            bullet = self.bullet_at(event.pos())
            tip = self.owner.provenance_html(bullet) if bullet is not None else ""
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier and event.button() == Qt.MouseButton.LeftButton:
            bullet = self.bullet_at(event.position().toPoint())
            if bullet is not None and bullet.sources:
                source = bullet.sources[0]
                self.sourceClicked.emit(source.path, (source.lines or (1, 1))[0])

    def contextMenuEvent(self, event) -> None:
        menu: QMenu = self.createStandardContextMenu()
        bullet = self.bullet_at(event.pos())
        if bullet is not None:
            menu.addSeparator()
            menu.addAction("Unpin this bullet" if bullet.pinned else "Pin this bullet",
                           lambda: self.owner.toggle_pin(bullet.line))
            for source in bullet.sources:
                line = (source.lines or (1, 1))[0]
                menu.addAction(f"Open source {source.ref}", lambda s=source, n=line: self.sourceClicked.emit(s.path, n))
        menu.exec(event.globalPos())


class MemoryEditor(DocumentEditor):
    sourcesResolved = Signal()

    def __init__(self, controller, rel_path: str = "MEMORY.md", parent=None):
        self.sources: dict[str, str] = {}
        self._resolved_for = None
        self._resolve = lambda: None
        super().__init__(controller, rel_path, parent)      # its load() answers later, on the main thread
        self._provenance_timer = QTimer(self)
        self._provenance_timer.setSingleShot(True)
        self._provenance_timer.setInterval(PROVENANCE_DELAY_MS)
        self._provenance_timer.timeout.connect(lambda: self._resolve())
        self.highlighter = MarkdownHighlighter(self.editor.document())
        self.editor.sourceClicked.connect(self.openRequested)
        self.editor.cursorPositionChanged.connect(self._show_cursor_provenance)
        self._preview_timer = QTimer(self)
        self._preview_timer.setSingleShot(True)
        self._preview_timer.setInterval(300)
        self._preview_timer.timeout.connect(self.update_preview)
        self.editor.textChanged.connect(self._preview_timer.start)

    # ----- layout -----------------------------------------------------------------------------------
    def make_editor(self):
        return MemoryText(self)

    def make_body(self) -> QWidget:
        self.preview = QTextBrowser()
        self.preview.setOpenLinks(False)
        self.preview.hide()
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.setObjectName("memorySplit")
        self.split.addWidget(self.editor)
        self.split.addWidget(self.preview)
        self.provenance = QLabel()
        self.provenance.setTextFormat(Qt.TextFormat.RichText)
        self.provenance.setWordWrap(True)
        self.provenance.linkActivated.connect(self._open_link)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.split, 1)
        layout.addWidget(self.provenance)
        return body

    def add_tools(self, toolbar) -> None:
        self.pin_button = QPushButton("Pin / unpin")
        self.pin_button.setToolTip("Pin the bullet under the cursor: a dream keeps pinned bullets as they are")
        self.pin_button.clicked.connect(lambda: self.toggle_pin(self.current_line()))
        self.preview_button = QPushButton("Preview")
        self.preview_button.setCheckable(True)
        self.preview_button.toggled.connect(self.set_preview_visible)
        self.fold_button = QPushButton("Fold")
        self.fold_button.setCheckable(True)
        self.fold_button.setToolTip("Draw the <!-- id… src… --> comments as a thin marker; hover a bullet for its "
                                    "provenance. The text itself is unchanged.")
        self.fold_button.toggled.connect(self.set_folded)
        toolbar.addWidget(self.pin_button)
        toolbar.addWidget(self.fold_button)
        toolbar.addWidget(self.preview_button)

    def set_folded(self, folded: bool) -> None:
        """Fold the provenance comments to a thin marker (only how they are drawn: the text is unchanged)."""
        self.highlighter.set_folded(folded)

    # ----- preview ------------------------------------------------------------------------------------
    def set_preview_visible(self, visible: bool) -> None:
        self.preview.setVisible(visible)
        if visible:
            self.update_preview()

    def update_preview(self) -> None:
        if self.preview.isVisible():
            self.preview.setMarkdown(strip_comments(self.text()))

    # ----- provenance ------------------------------------------------------------------------------------
    def after_load(self) -> None:
        text = self.text()
        if text == self._resolved_for:
            return
        self._resolved_for = text
        ws = self.ws

        def done(found) -> None:
            self.sources = found
            self._show_cursor_provenance()
            self.sourcesResolved.emit()
        self._resolve = lambda: self.controller.submit(lambda ctx: resolve_sources(ws, text), name="provenance",
                                                       on_finished=done, on_failed=lambda exc: None)
        # A moment after the text shows, not with it: its first paint needs the GIL this job would hold.
        self._provenance_timer.start()
        self.update_preview()

    def provenance_html(self, bullet: Bullet) -> str:
        if not (bullet.id or bullet.sources or bullet.flags):
            return ""
        head = [f"<b>{html.escape(bullet.id)}</b>" if bullet.id else "<b>no id</b>"]
        head += [html.escape(flag) for flag in sorted(bullet.flags)]
        rows = [" · ".join(head)]
        if not bullet.sources:
            rows.append("<i>no source: written by a person, or its provenance was lost</i>")
        for source in bullet.sources:
            quoted = self.sources.get(source.ref)
            line = f"from <code>{html.escape(source.ref)}</code>"
            if quoted:
                line += f"<br>&nbsp;&nbsp;“{html.escape(quoted[:300])}”"
            rows.append(line)
        rows.append("<small>Ctrl+click opens the source</small>" if bullet.sources else "")
        return "<br>".join(r for r in rows if r)

    def _show_cursor_provenance(self) -> None:
        bullet = parse_bullet(self.editor.textCursor().block().text(), self.current_line())
        if bullet is None or not (bullet.sources or bullet.flags or bullet.id):
            self.provenance.setText("")
            return
        links = " ".join(f'<a href="{html.escape(s.path)}#{(s.lines or (1, 1))[0]}">{html.escape(s.ref)}</a>'
                         for s in bullet.sources) or "no source"
        pinned = " · <b>pinned</b>" if bullet.pinned else ""
        self.provenance.setText(f"{html.escape(bullet.id or 'no id')}{pinned} · sources: {links}")

    def _open_link(self, href: str) -> None:
        path, _, line = href.rpartition("#")
        self.openRequested.emit(path, int(line) if line.isdigit() else 1)

    # ----- pin / unpin -------------------------------------------------------------------------------------
    def bullet_on_line(self, line: int) -> Bullet | None:
        block = self.editor.document().findBlockByNumber(line - 1)
        return parse_bullet(block.text(), line) if block.isValid() else None

    def toggle_pin(self, line: int) -> bool:
        bullet = self.bullet_on_line(line)
        if bullet is None or self.base is None:
            self.notice.show_message("Put the cursor on a bullet to pin or unpin it.", "info")
            return False
        was_clean = not self.dirty
        new_text = set_flag(self.text(), line, "pin", not bullet.pinned)
        block = self.editor.document().findBlockByNumber(line - 1)
        cursor = QTextCursor(block)
        cursor.beginEditBlock()
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(new_text.split("\n")[line - 1])
        cursor.endEditBlock()
        if was_clean:
            self.save(reason=f"{'unpin' if bullet.pinned else 'pin'} {bullet.id or 'bullet'}")
        return True
