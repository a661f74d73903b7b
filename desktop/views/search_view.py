"""The search view: as-you-type with a debounce, a mode selector, highlighted snippets, open at the line.

Each hit says why it matched (the words it holds, or "meaning" with its
similarity, or both). The count is of those hits only: lines found only
through their neighbours' words ("nearby") are listed apart, under their own
heading, greyed and not counted. A kind selector and a date range narrow the
search; the mode names are the ones the CLI and the JSON use.

Every query gets a sequence number; a result is shown only if it belongs to the
newest query, so an older, slower search never overwrites a newer one. The
search itself runs on the task pool (keyword hits come from SQLite at once; a
vector or hybrid search while embeddings are still being computed answers from
what is indexed and says how much is pending).
"""
from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QPalette, QTextDocument
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QStyle,
                               QStyledItemDelegate, QStyleOptionViewItem, QVBoxLayout, QWidget)

from core.errors import CoreError
from core.index.filters import SearchFilter
from core.index.matching import NEARBY, explain
from core.index.search import canonical_mode
from desktop import theme

ROLE = Qt.ItemDataRole.UserRole
MODES = (("hybrid", "Hybrid"), ("keyword", "Keyword"), ("meaning", "Meaning"))
MODE_TITLES = dict(MODES)
KINDS = (("", "All kinds"), ("memory", "MEMORY.md, USER.md…"), ("daily", "Daily logs"), ("session", "Sessions"),
         ("tasks", "Hand-offs & checkpoints"))


def snippet_html(snippet: str, text: str) -> str:
    """The index marks matched words with « and »; show them highlighted."""
    shown = snippet or text
    colour = theme.colors().match
    escaped = html.escape(shown)
    return escaped.replace("«", f"<span style='background:{colour}'>").replace("»", "</span>")


class _HtmlDelegate(QStyledItemDelegate):
    """Draws an item's text as rich text (the highlighted snippet)."""

    def paint(self, painter, option, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        doc = QTextDocument()
        doc.setDefaultFont(opt.font)
        doc.setHtml(opt.text)
        doc.setTextWidth(opt.rect.width())
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        if opt.state & QStyle.StateFlag.State_Selected:
            ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(QPalette.ColorRole.HighlightedText))
        else:
            ctx.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(QPalette.ColorRole.Text))
        painter.save()
        painter.translate(opt.rect.topLeft())
        painter.setClipRect(QRectF(0, 0, opt.rect.width(), opt.rect.height()))
        doc.documentLayout().draw(painter, ctx)
        painter.restore()

    def sizeHint(self, option, index: QModelIndex) -> QSize:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        doc = QTextDocument()
        doc.setDefaultFont(opt.font)
        doc.setHtml(opt.text)
        doc.setTextWidth(max(200, opt.rect.width() or 600))
        return QSize(int(doc.idealWidth()), int(doc.size().height()) + 4)


class SearchView(QWidget):
    openRequested = Signal(str, int)
    resultsShown = Signal(str)            # the query whose results are now shown
    debounce_ms = 250

    def __init__(self, controller, parent=None):
        super().__init__(parent)
        self.controller = controller
        self.rel = ""
        self._seq = 0
        self.shown_query = ""
        self.stale_dropped = 0
        self._in_flight = False
        self._waiting = None              # (seq, text, mode, workspace) of the newest query not yet started
        self.results = None
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search memory, daily logs and sessions…")
        self.query.setClearButtonEnabled(True)
        self.mode = QComboBox()
        for key, title in MODES:
            self.mode.addItem(title, key)
        keys = [key for key, _ in MODES]
        try:
            default = canonical_mode(controller.ws.settings.search.default_mode)
        except CoreError:
            default = "hybrid"
        self.mode.setCurrentIndex(keys.index(default))
        self.kind = QComboBox()
        for key, title in KINDS:
            self.kind.addItem(title, key)
        self.since = QLineEdit()
        self.until = QLineEdit()
        for field, hint in ((self.since, "from YYYY-MM-DD"), (self.until, "to YYYY-MM-DD")):
            field.setPlaceholderText(hint)
            field.setClearButtonEnabled(True)
            field.setMaximumWidth(130)
            field.editingFinished.connect(self._filters_changed)
        self.status = QLabel("")
        self.list = QListWidget()
        self.list.setItemDelegate(_HtmlDelegate(self.list))
        self.list.setWordWrap(True)
        self.list.itemActivated.connect(self._open)
        self.list.itemDoubleClicked.connect(self._open)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.debounce_ms)
        self._timer.timeout.connect(self.run_query)
        self.query.textEdited.connect(lambda _t: self._timer.start())
        self.query.returnPressed.connect(self._enter)
        self.mode.currentIndexChanged.connect(lambda _i: self.run_query())
        self.kind.currentIndexChanged.connect(lambda _i: self.run_query())
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.mode)
        narrow = QHBoxLayout()
        narrow.addWidget(self.kind)
        narrow.addWidget(self.since)
        narrow.addWidget(self.until)
        narrow.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(narrow)
        layout.addWidget(self.status)
        layout.addWidget(self.list, 1)

    def focus_query(self) -> None:
        self.query.setFocus()
        self.query.selectAll()

    def _enter(self) -> None:
        if self._timer.isActive() or self.query.text() != self.shown_query:
            self._timer.stop()
            self.run_query()
        elif self.list.count():
            self._open(self.list.item(0))

    def set_query(self, text: str) -> None:
        """As if typed: the search starts after the debounce."""
        self.query.setText(text)
        self._timer.start()

    def _filters_changed(self) -> None:
        if self.query.text().strip():
            self.run_query()

    def scope(self) -> SearchFilter:
        """The kind and date range chosen (SearchFilterError, a CoreError, for a date that is not one)."""
        return SearchFilter.of(self.kind.currentData() or None, self.since.text().strip() or None,
                               self.until.text().strip() or None)

    def run_query(self) -> None:
        self._timer.stop()
        text = self.query.text().strip()
        self._seq += 1
        seq, mode, ws = self._seq, self.mode.currentData(), self.controller.ws
        if not text:
            self._waiting = None
            self.list.clear()
            self.status.setText("")
            self.shown_query = ""
            return
        try:
            scope = self.scope()
        except CoreError as exc:
            self._waiting = None
            self.status.setText(str(exc))
            return
        self.status.setText(f"searching for “{text}”…")
        # One search at a time, the newest waiting: typing fast must not start a search per
        # keystroke that all compete for the GIL with the window (and with indexing and a dream).
        self._waiting = (seq, text, mode, scope, ws)
        if not self._in_flight:
            self._start_waiting()

    def _start_waiting(self) -> None:
        if self._waiting is None:
            return
        seq, text, mode, scope, ws = self._waiting
        self._waiting, self._in_flight = None, True
        self.controller.submit(lambda ctx: ws.search(text, k=50, mode=mode, kinds=scope.kinds, since=scope.since,
                                                     until=scope.until), name="search",
                               on_finished=lambda results: self._done(self._show, seq, text, results),
                               on_failed=lambda exc: self._done(self._failed, seq, exc))

    def _done(self, handler, *args) -> None:
        self._in_flight = False
        handler(*args)
        self._start_waiting()

    def _failed(self, seq: int, exc) -> None:
        if seq == self._seq:
            self.status.setText(f"search failed: {exc}")

    def _show(self, seq: int, text: str, results) -> None:
        if seq != self._seq:
            self.stale_dropped += 1          # an older query answered late: a newer one is on its way
            return
        self.results = results
        self.shown_query = text
        self.list.clear()
        hits, nearby = results.hits, results.nearby
        for hit in hits:
            self._add_hit(hit)
        if nearby:
            # Context, not hits: lines whose neighbours (or date, or heading) hold the words.
            heading = QListWidgetItem(f"<small><b>Nearby</b> — {len(nearby)} line(s) next to the words, "
                                      f"not counted as hits</small>")
            heading.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(heading)
            for hit in nearby:
                self._add_hit(hit)
        pending = getattr(results, "pending_embeddings", 0)
        mode = MODE_TITLES.get(results.mode, results.mode)
        # Only meaning needs the vectors: a keyword search is complete while they are still being made.
        extra = (f" · {pending:,} lines still being embedded (answers from what is indexed)"
                 if pending and results.mode != "keyword" else "")
        apart = f" · {len(nearby)} nearby line(s) below, not counted" if nearby else ""
        self.status.setText(f"{len(hits)} hit(s) for “{text}” · {mode}{apart}{extra}")
        self.resultsShown.emit(text)

    def _add_hit(self, hit) -> None:
        where = f"{hit.path}:{hit.line}"
        sources = (f"<br><small>sources: {html.escape(', '.join(hit.sources))}</small>"
                   if getattr(hit, "sources", ()) else "")
        body = snippet_html(hit.snippet, hit.text)
        if hit.match == NEARBY:     # found through its neighbours: shown, but clearly not a hit on its words
            body = f"<span style='color:gray'>{body}</span>"
        item = QListWidgetItem(f"<b>{html.escape(where)}</b> <small>({html.escape(explain(hit))})</small><br>"
                               f"{body}{sources}")
        item.setData(ROLE, (hit.path, hit.line))
        item.setToolTip(hit.text)
        self.list.addItem(item)

    def _open(self, item: QListWidgetItem) -> None:
        data = item.data(ROLE) if item is not None else None
        if data:
            self.openRequested.emit(data[0], int(data[1]))

    def hits(self) -> list[tuple[str, int]]:
        """(path, line) of every listed line, hits then nearby ones (the nearby heading is not a line)."""
        return [data for i in range(self.list.count()) if (data := self.list.item(i).data(ROLE))]

    def check_disk(self) -> None:
        """Files changed: the shown hits may be out of date; search again quietly."""
        if self.shown_query:
            self.run_query()
