"""The hand-off reader: who hands what to whom and why, what is done and failed, and the chain of hops."""
from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser

from core.workspace import HANDOFF_FIELDS as FIELDS
from core.workspace import HANDOFF_LIST_FIELDS as LIST_FIELDS
from desktop.views.reader import Reader

TITLES = {"from_agent": "From", "to_agent": "To", "original_target": "Task", "why_this_agent": "Why this agent",
          "completed_work": "Completed", "known_constraints": "Constraints", "failed_attempts": "Failed attempts",
          "current_state": "Current state", "success_criteria": "Done when",
          "termination_condition": "Stop when"}


def render_handoff(packet: dict, chain: list[dict]) -> str:
    rows = []
    for key in FIELDS:
        value = packet.get(key, "")
        if key in LIST_FIELDS:
            items = "".join(f"<li>{html.escape(str(v))}</li>" for v in (value or [])) or "<li><i>none</i></li>"
            shown = f"<ul style='margin:0'>{items}</ul>"
        else:
            shown = html.escape(str(value)) or "<i>empty</i>"
        rows.append(f"<tr><td valign='top'><b>{TITLES.get(key, key)}</b></td><td>{shown}</td></tr>")
    hops = " → ".join([html.escape(str(chain[0].get("from_agent", "?")))] +
                      [html.escape(str(p.get("to_agent", "?"))) for p in chain]) if chain else ""
    meta = (f"<p>Hand-off <code>{html.escape(str(packet.get('id', '')))}</code> · task "
            f"<code>{html.escape(str(packet.get('task_id', '')))}</code> · hop {packet.get('hop', '?')} · "
            f"created {html.escape(str(packet.get('created', '')))}</p>")
    chain_html = f"<p><b>Chain:</b> {hops}</p>" if hops else ""
    return meta + chain_html + "<table cellspacing='6'>" + "".join(rows) + "</table>"


class HandoffReader(Reader):
    def __init__(self, controller, rel_path: str, parent=None):
        self.handoff_id = rel_path.rsplit("/", 1)[-1].removesuffix(".json")
        super().__init__(controller, rel_path, f"Hand-off {self.handoff_id}", parent)
        self.packet: dict | None = None
        self.view = QTextBrowser()
        self.finish(self.view)

    def read_job(self):
        ws, hid = self.controller.ws, self.handoff_id

        def job(_ctx):
            packet = ws.read_handoff(hid)
            chain = sorted((p for p in ws.handoffs() if p.get("task_id") == packet.get("task_id")),
                           key=lambda p: p.get("hop", 0))
            return packet, chain
        return job

    def _show(self, result) -> None:
        self.packet, chain = result
        self.bar.clear()
        self.view.setHtml(render_handoff(self.packet, chain))
        self.loaded.emit()

    def goto_line(self, line: int) -> None:
        """A hand-off is one record; there is no line to go to."""
