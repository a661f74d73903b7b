"""Dreaming: consolidating daily logs and session summaries into MEMORY.md.

The public API (what the CLI and the desktop app call, from any thread):

    iter_dream(ws, llm, ...) / run_dream(ws, llm, progress=cb)   one dream, stage by stage
    list_proposals(paths), load_proposal(paths, id)              review
    apply_proposal(ws, id, sections=.., hunk_ids=.., change_ids=..), reject_proposal(ws, id, ...)
    proposed_text(proposal)                                      MEMORY.md as proposed, less what was rejected
    held_warning(proposal, changes), not_proposed_line(summary)  what a review says before a held apply
    promote(ws, id, index)                                       add a fact the dream did not promote
    undo_last_accept(ws)                                         take the last accept back out; its changes re-open
    why(ws, bullet_id)                                           provenance
    dream_due(state, now, settings), plan_maintenance(...)       pure "what is due"
    maintain(ws, ...)                                            one maintenance tick
    IdleMonitor(paths, idle_minutes, clock)                      idle detection
    record_person_writes(paths, rel_paths)                       the person's own writes: not agent activity
    model_check_words(model_id)                                  what `reverie models check` found, in plain words

Names load on first use, so `import core.dream.state` (the harness) stays cheap.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "iter_dream": "consolidator", "run_dream": "consolidator", "DreamEvent": "consolidator",
    "DreamResult": "consolidator", "STAGES": "consolidator", "dream_history": "consolidator",
    "Proposal": "proposals", "Hunk": "proposals", "list_proposals": "proposals", "load_proposal": "proposals",
    "apply_proposal": "apply", "reject_proposal": "apply", "preview_apply": "apply", "ApplyResult": "apply",
    "proposed_text": "apply", "promote": "promotion", "undo_last_accept": "undo", "Undone": "undo",
    "why": "provenance", "format_provenance": "provenance", "Provenance": "provenance",
    "dream_due": "gates", "next_dream_at": "gates", "plan_maintenance": "gates", "maintenance_due": "gates",
    "maintain": "maintenance", "MaintenanceReport": "maintenance",
    "IdleMonitor": "idle", "record_agent_turn": "idle", "record_person_writes": "idle", "SourceResolver": "sources",
    "run_dream_in_child": "isolated", "OPEN": "proposals", "PENDING": "proposals", "HELD": "proposals",
    "APPLIED": "proposals", "REJECTED": "proposals", "held_warning": "proposals", "not_proposed_line": "proposals",
    "load_state": "state", "note_new_material": "state", "record_session_ended": "state",
    "record_dream_finished": "state", "model_check_words": "model_check",
}

# Which subpackage holds each module: pipeline (one dream's stages), judgment (kind and relation of a
# fact), review (proposals, apply, undo, provenance), schedule (gates, idle, maintenance); state (the
# watermark record every part reads) stays at the top of the package.
_GROUP = {module: group for group, modules in {
    "pipeline": ("consolidator", "stages", "material", "session_facts", "prompts", "relevance", "working",
                 "isolated", "judge", "condense"),
    "judgment": ("kinds", "relations", "restate", "sections", "similarity", "wording", "model_check"),
    "review": ("proposals", "apply", "undo", "promotion", "operations", "provenance", "sources", "flush_trace",
               "archive"),
    "schedule": ("gates", "idle", "maintenance"),
}.items() for module in modules}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'core.dream' has no attribute {name!r}")
    package = "core.dream" if module == "state" else f"core.dream.{_GROUP[module]}"
    return getattr(importlib.import_module(f"{package}.{module}"), name)
