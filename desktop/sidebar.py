"""The workspace sidebar: MEMORY.md, daily logs by month, archive, sessions, checkpoints, hand-offs,
evicted results, other files, the flush record, search and dreams, each with a count.

`scan()` lists the workspace (on a task: it walks folders); `Sidebar.populate()` draws
the listing on the main thread and keeps what was expanded and selected.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

ROLE = Qt.ItemDataRole.UserRole
SECRET_MARK = "  ⚠"    # after the name of a file that holds a pasted secret


@dataclass
class Listing:
    daily: dict[str, list[str]] = field(default_factory=dict)       # "2026-11" -> rel paths, newest first
    archive: list[str] = field(default_factory=list)
    sessions: list[tuple[str, str, int]] = field(default_factory=list)   # (id, rel, size)
    checkpoints: dict[str, int] = field(default_factory=dict)       # session id -> count
    handoffs: list[tuple[str, str]] = field(default_factory=list)   # (id, "from -> to")
    evicted: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    agent_files: list[str] = field(default_factory=list)     # USER.md, SOUL.md, AGENTS.md, … (OpenClaw's)
    flushes: int = 0
    open_proposals: int = 0
    has_session_cache: bool = False
    secrets: dict[str, list[str]] = field(default_factory=dict)   # rel path -> kinds of the secrets it holds


def scan(ws) -> Listing:
    """What the workspace holds now (runs on a task)."""
    from core.dream import OPEN, list_proposals

    listing = Listing()
    months: dict[str, list[str]] = defaultdict(list)
    for log in ws.daily_logs():
        rel = ws.relative(log.path)
        if log.archived:
            listing.archive.append(rel)
        else:
            months[log.date.strftime("%Y-%m")].append(rel)
    listing.daily = {m: sorted(v, reverse=True) for m, v in sorted(months.items(), reverse=True)}
    listing.archive.sort(reverse=True)
    listing.sessions = [(s.id, ws.relative(s.path), s.size) for s in ws.sessions()]
    listing.has_session_cache = ws.paths.session_cache.exists()
    for path in ws.checkpoint_files():
        listing.checkpoints[path.parent.name] = listing.checkpoints.get(path.parent.name, 0) + 1
    for packet in ws.handoffs():
        listing.handoffs.append((str(packet.get("id", "?")),
                                 f"{packet.get('from_agent', '?')} → {packet.get('to_agent', '?')}"))
    if ws.paths.large_results_dir.is_dir():
        listing.evicted = sorted(ws.relative(p) for p in ws.paths.large_results_dir.glob("*/*") if p.is_file())
    listing.agent_files = ws.agent_files()
    listing.other = [name for name in ("progress.md",) if (ws.root / name).is_file()]
    listing.flushes = len(ws.flush_records().records)
    listing.open_proposals = len(list_proposals(ws.paths, OPEN))
    # Cached per file by size and time (a rescan reads only changed files); the scan itself runs in a
    # child process, since at 100k lines its Python would hold the window's GIL for seconds.
    for finding in ws.find_secrets(in_child=True):
        listing.secrets.setdefault(finding.path, []).append(finding.kind)
    return listing


class Sidebar(QTreeWidget):
    activated = Signal(str, str)          # double click / Enter: kind, workspace-relative path (or a view name)
    previewed = Signal(str, str)          # single click: the same, shown in the preview tab

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setObjectName("sidebar")
        self.itemActivated.connect(self._activate)
        self.itemClicked.connect(self._preview)
        self.listing: Listing | None = None
        self._lazy: dict[int, tuple[QTreeWidgetItem, list[str]]] = {}   # collapsed months not yet filled
        self.itemExpanded.connect(self._expanded)

    def _activate(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, ROLE)
        if data:
            self.activated.emit(data[0], data[1])

    def _preview(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        data = item.data(0, ROLE)
        if data:
            self.previewed.emit(data[0], data[1])

    def _item(self, parent, text: str, kind: str = "", rel: str = "", tip: str = "") -> QTreeWidgetItem:
        kinds = self.secret_kinds(rel) if kind and rel else []
        if kinds:
            text += SECRET_MARK
            tip = (f"{tip} · " if tip else "") + (f"holds {len(kinds)} secret{'s' if len(kinds) != 1 else ''} "
                                                  f"({', '.join(dict.fromkeys(kinds))}): open it to redact")
        item = QTreeWidgetItem(parent, [text])
        if kind:
            item.setData(0, ROLE, (kind, rel))
        item.setData(0, ROLE + 2, len(kinds))
        if tip:
            item.setToolTip(0, tip)
        return item

    def secret_kinds(self, rel: str) -> list[str]:
        """The kinds of secret in a file, or in the files of a folder entry (a session's checkpoints)."""
        held = self.listing.secrets if self.listing is not None else {}
        return [k for path, kinds in held.items() if path == rel or path.startswith(rel + "/") for k in kinds]

    def marked(self) -> list[str]:
        """The paths of the entries that carry the secret marker (tests and the status bar)."""
        out, stack = [], [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop()
            if item.data(0, ROLE + 2) and item.data(0, ROLE):
                out.append(item.data(0, ROLE)[1])
            stack.extend(item.child(i) for i in range(item.childCount()))
        return sorted(out)

    def _state(self) -> tuple[set[str], object]:
        expanded = set()
        stack = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop()
            if item.isExpanded():
                expanded.add(item.data(0, ROLE + 1) or item.text(0))
            stack.extend(item.child(i) for i in range(item.childCount()))
        current = self.currentItem()
        return expanded, current.data(0, ROLE) if current is not None else None

    def populate(self, listing: Listing) -> None:
        expanded, selected = self._state() if self.topLevelItemCount() else ({"daily", "sessions"}, None)
        self.listing = listing
        self._lazy.clear()
        self.clear()

        def group(key: str, title: str, count: int, kind: str = "", rel: str = "") -> QTreeWidgetItem:
            item = self._item(self, f"{title} ({count})", kind, rel)
            item.setData(0, ROLE + 1, key)
            return item

        self._item(self, "MEMORY.md", "memory", "MEMORY.md", "curated long-term memory")
        total = sum(len(v) for v in listing.daily.values())
        daily = group("daily", "Daily logs", total)
        self._lazy.clear()
        for month, rels in listing.daily.items():
            held = sum(len(self.secret_kinds(rel)) for rel in rels)
            # a collapsed month shows its logs' marker too, so a secret is seen without opening every month
            node = self._item(daily, f"{month}{SECRET_MARK if held else ''} ({len(rels)})")
            node.setData(0, ROLE + 1, f"month:{month}")
            if f"month:{month}" in expanded or (selected is not None and selected[1] in rels):
                self._fill_month(node, rels)
            else:
                # A year of logs is hundreds of rows: a collapsed month gets its rows when it is
                # opened, so a refresh after every outside write stays a few milliseconds.
                node.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
                self._lazy[id(node)] = (node, rels)
        archive = group("archive", "Archive", len(listing.archive))
        for rel in listing.archive:
            self._item(archive, rel.rsplit("/", 1)[-1][:-3], "daily", rel, rel)
        sessions = group("sessions", "Sessions", len(listing.sessions))
        for sid, rel, size in listing.sessions:
            self._item(sessions, sid, "session", rel, f"{rel} · {size:,} bytes")
        if listing.has_session_cache:
            self._item(sessions, "cache.jsonl (last session summaries)", "text", "sessions/cache.jsonl")
        checkpoints = group("checkpoints", "Checkpoints", sum(listing.checkpoints.values()))
        for sid, count in sorted(listing.checkpoints.items()):
            self._item(checkpoints, f"{sid} ({count})", "checkpoint", f"checkpoints/{sid}")
        handoffs = group("handoffs", "Hand-offs", len(listing.handoffs))
        for hid, route in listing.handoffs:
            self._item(handoffs, f"{hid}  {route}", "handoff", f"handoffs/{hid}.json")
        evicted = group("evicted", "Evicted results", len(listing.evicted))
        for rel in listing.evicted:
            self._item(evicted, rel.split("/", 1)[-1], "text", rel, rel)
        if listing.agent_files:
            agent = group("agent", "Agent files", len(listing.agent_files))
            for rel in listing.agent_files:
                self._item(agent, rel, "file", rel, "the agent's own file: searched and read as context, "
                                                     "never rewritten by a dream")
        if listing.other:
            other = group("other", "Other files", len(listing.other))
            for rel in listing.other:
                self._item(other, rel, "file", rel)
        # Only the records are counted (flush blocks in the logs are found when the reader opens: a scan of
        # every log is not the sidebar's to make), so no count at all rather than a "(0)" beside logs full of them.
        self._item(self, f"Flush record ({listing.flushes})" if listing.flushes else "Flush record", "flushes",
                   ".reverie/flushes.jsonl")
        self._item(self, "Search", "search", "")
        self._item(self, f"Dreams ({listing.open_proposals} open)", "dreams", "")
        self._restore(expanded, selected)

    def _fill_month(self, node: QTreeWidgetItem, rels: list[str]) -> None:
        for rel in rels:
            self._item(node, rel.rsplit("/", 1)[-1][:-3], "daily", rel, rel)

    def _expanded(self, item: QTreeWidgetItem) -> None:
        pending = self._lazy.pop(id(item), None)
        if pending is not None:
            self._fill_month(*pending)

    def fill_all(self) -> None:
        """Give every collapsed month its rows (screenshots, tests that walk the whole tree)."""
        for node, rels in list(self._lazy.values()):
            self._fill_month(node, rels)
        self._lazy.clear()

    def _restore(self, expanded: set[str], selected) -> None:
        stack = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        while stack:
            item = stack.pop()
            key = item.data(0, ROLE + 1) or item.text(0)
            if key in expanded:
                item.setExpanded(True)
            if selected is not None and item.data(0, ROLE) == selected:
                self.setCurrentItem(item)
            stack.extend(item.child(i) for i in range(item.childCount()))

    def count_of(self, key: str) -> int:
        """The count shown on a group (tests and the status bar)."""
        for i in range(self.topLevelItemCount()):
            item = self.topLevelItem(i)
            if item.data(0, ROLE + 1) == key:
                return int(item.text(0).rsplit("(", 1)[1].rstrip(")"))
        return 0
