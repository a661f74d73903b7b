"""The CoreError hierarchy.

Every error a person or an agent can see is a CoreError whose message says
what happened and what to do about it. Expected outcomes (nothing to flush,
nothing new to consolidate) are return values, never errors.
"""
from __future__ import annotations


class CoreError(Exception):
    """Base of every error Reverie raises on purpose."""


class WorkspaceError(CoreError):
    """The workspace folder is missing, unreadable, or not a workspace."""


class PathEscapeError(CoreError):
    """A caller-given path resolves outside the workspace (.., absolute, symlink)."""


class StorageError(CoreError):
    """A workspace file cannot be read or written (a read-only workspace, a full disk, a path too long)."""


class ConflictError(CoreError):
    """Compare-and-swap failed: the file changed since the writer read it."""

    def __init__(self, message: str, *, expected_hash: str | None = None, actual_hash: str | None = None):
        super().__init__(message)
        self.expected_hash = expected_hash
        self.actual_hash = actual_hash


class FormatError(CoreError):
    """A file on disk is not in the format we expect (bad JSON, bad schema)."""


class NotFoundError(CoreError):
    """A named thing (checkpoint, hand-off, proposal, history entry) does not exist."""


class ConfigError(CoreError):
    """A setting has an invalid value."""


class IndexError_(CoreError):
    """The search index cannot be opened or updated."""


class ModelError(CoreError):
    """A model file is missing, corrupt, too large, or the model engine failed."""


class ModelNotFoundError(ModelError):
    """No such model id in the catalog and no such GGUF file."""


class ContextOverflowError(ModelError):
    """The prompt does not fit the model's context window.

    Raised before generation, so callers (the harness) can compact and retry.
    """

    def __init__(self, message: str, *, prompt_tokens: int = 0, context_length: int = 0):
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context_length = context_length


class TruncatedReplyError(ModelError):
    """The model's reply was cut off (the server or worker went away mid-reply): nothing of it may be used."""

    whole_lines = ""      # what of the reply may be used: nothing, unless it stopped at its limit (below)


class ReplyAtLimitError(TruncatedReplyError):
    """The reply stopped at its token limit (finish_reason "length"): its last line ends mid-sentence.

    Unlike a reply the server broke off, every line before the last one ended by itself: `whole_lines`
    holds them, so a caller that writes line by line (the flush's bullets) keeps those and drops the cut one.
    """

    def __init__(self, message: str, *, whole_lines: str = ""):
        super().__init__(message)
        self.whole_lines = whole_lines


class ModelWorkerCrashed(ModelError):
    """The worker process died (segfault, out of memory, killed). The next call starts a fresh one."""


class ModelCancelled(ModelError):
    """The request was cancelled by the caller."""


class ServerUnavailableError(ModelError):
    """An OpenAI-compatible server the person configured does not answer."""


class HandoffLoopError(CoreError):
    """A hand-off would return a task to an agent that already handed it on."""


class ProposalError(CoreError):
    """A dream proposal cannot be applied as it is (held for review, stale)."""
