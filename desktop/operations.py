"""Operations: a core call that changes the workspace, whose changes reach every view without the caller.

    controller.run_op(lambda ctx: ws.undo(rel), name="undo", on_success=show, on_failed=report)

The call runs on the task pool and returns a `Changes` (what every facade mutation
returns) or a value with a `.changes` attribute (core.dream's ApplyResult, or an
`Outcome` wrapping a result that carries none). On success, on the main thread, the
operation publishes those changes itself, then calls `on_success(result)`; a view
only says what to do with the result, never who else must hear of it (Anki's
CollectionOp and its OpChanges work the same way). A failure publishes nothing and
goes to `on_failed`, or to the controller's error report when the caller gave none.

A call that returns anything else is a bug in the operation: it fails on the worker
thread, before anything is published, and is reported like any other failure.

`wrote(changes)` runs on the worker thread right after the call, before anything is
published: the controller records there that the person made these writes (so no
idle check counts them as agent activity), except for the operations Reverie runs on
its own (a dream, a maintenance tick), which pass `by_person=False`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core.types import Changes


@dataclass(frozen=True)
class Outcome:
    """A core call's own result together with the Changes it made, for results that carry none."""

    changes: Changes
    value: Any = None


def changes_of(result: Any) -> Changes:
    if isinstance(result, Changes):
        return result
    changes = getattr(result, "changes", None)
    if isinstance(changes, Changes):
        return changes
    raise TypeError(f"an operation returns Changes or a value with .changes, not {type(result).__name__}")


class Operations:
    """Runs operations for one workspace: `submit` puts a job on the pool, `publish` fans Changes out."""

    def __init__(self, submit: Callable[..., Any], publish: Callable[[Changes], None],
                 report: Callable[[str], None], wrote: Callable[[Changes], None] = lambda changes: None):
        self._submit = submit
        self._publish = publish
        self._report = report
        self._wrote = wrote

    def run(self, fn: Callable[[Any], Any], *, name: str, on_success: Callable[[Any], Any] | None = None,
            on_failed: Callable[[BaseException], Any] | None = None,
            on_progress: Callable[[Any], Any] | None = None, by_person: bool = True):
        """Run `fn(ctx)` in the background; the TaskHandle, or None when the workspace is closing."""
        def job(ctx):
            result = fn(ctx)
            changes = changes_of(result)    # the wrong kind of result fails here, before anything is published
            if by_person and not changes.empty:
                self._wrote(changes)
            return result

        def finished(result) -> None:
            self._publish(changes_of(result))
            if on_success is not None:
                on_success(result)

        def failed(exc) -> None:
            if on_failed is not None:
                on_failed(exc)
            else:
                self._report(f"{name}: {exc}")
        return self._submit(job, name=name, on_progress=on_progress, on_finished=finished, on_failed=failed)

    def run_here(self, fn: Callable[[], Any]) -> Any:
        """Run `fn()` on the calling (main) thread and publish its changes; its exception propagates.

        Only for closing, where the window must know before it goes whether the work was done
        (saving an editor's unsaved edits when the person chose "Save")."""
        result = fn()
        changes = changes_of(result)
        if not changes.empty:
            self._wrote(changes)
        self._publish(changes)
        return result
