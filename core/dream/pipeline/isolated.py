"""A dream in a child process: `run_dream_in_child(ws, llm, ...)`, the same call as `run_dream`.

The desktop app dreams this way so the dream's Python work (reading logs, matching
facts against MEMORY.md) holds a GIL of its own, not the window's (core/jobproc.py
says why). The dream's model calls and embeddings still use the app's one shared
model and embedding process: the child asks the parent for each (`complete`,
`embed`), and for the idle check (`should_stop`) that only the app can answer. The
dream writes its files in the child, exactly as `run_dream` does; the DreamResult
comes back pickled.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Callable

import numpy as np

from core.cancel import CancelToken
from core.jobproc import ChildJob, run_in_child

DREAM_NICE = 10   # yields the cores to the window and the agent (desktop/llm_access.py says why 10)


class RelayLLM:
    """The LLMClient protocol in the child: each request is run by the parent's client."""

    def __init__(self, job: ChildJob, model_id: str, context_length: int):
        self._job = job
        self.model_id = model_id
        self._context_length = context_length

    @property
    def context_length(self) -> int:
        return self._context_length

    def complete(self, messages, *, on_token=None, cancel=None, **options):
        # The token and a streaming callback stay on this side: the parent's request uses the job's
        # own token (cancelling the job cancels the request), and a dream never streams.
        return self._job.call("complete", messages, **options)

    def count_tokens(self, text: str) -> int:
        return int(self._job.call("count_tokens", text))

    def close(self) -> None:
        pass


class RelayEmbedder:
    """The Embedder protocol in the child, served by the parent's embedder."""

    def __init__(self, job: ChildJob, model_id: str):
        self._job = job
        self.model_id = model_id

    def embed_batch(self, texts) -> np.ndarray:
        return np.asarray(self._job.call("embed", [str(t) for t in texts]), dtype=np.float32)


def run_dream_in_child(ws, llm=None, *, progress: Callable[[Any], None] | None = None,
                       cancel: CancelToken | None = None, should_stop: Callable[[], str] | None = None,
                       now: dt.datetime | None = None, apply: bool | None = None, dry_run: bool = False,
                       include_archive: bool = False, read_archived: tuple[str, ...] = (), nice: int = DREAM_NICE):
    """`run_dream(ws, llm, ...)` with the dream's work in a child process; the same DreamResult."""
    cancel = cancel or CancelToken()
    services: dict[str, Callable[..., Any]] = {}
    llm_info = None
    if llm is not None:
        services["complete"] = lambda messages, **options: llm.complete(messages, cancel=cancel, **options)
        services["count_tokens"] = llm.count_tokens
        llm_info = (llm.model_id, int(llm.context_length))
    embed_model_id = ""
    try:
        from core.index.embedding import default_embedder

        embedder = default_embedder(ws.settings.search.embedding_model)
        embed_model_id = embedder.model_id
        services["embed"] = lambda texts: np.asarray(embedder.embed_batch(texts), dtype=np.float32)
    except Exception:   # noqa: BLE001 - as load_similarity: no embedder means word similarity
        pass
    if should_stop is not None:
        services["should_stop"] = should_stop
    args = {"root": str(ws.root), "settings": ws.settings, "llm": llm_info, "embed_model_id": embed_model_id,
            "should_stop": should_stop is not None, "now": now, "apply": apply, "dry_run": dry_run,
            "include_archive": include_archive, "read_archived": tuple(read_archived)}
    return run_in_child("core.dream.pipeline.isolated:dream_job", args, progress=progress, cancel=cancel,
                        services=services, nice=nice, label="dream")


def dream_job(args: dict, job: ChildJob):
    """The child's side: the workspace opened afresh, the parent's model and embedder relayed."""
    from core.dream.pipeline.consolidator import run_dream
    from core.dream.judgment.similarity import load_similarity
    from core.workspace import Workspace

    ws = Workspace(Path(args["root"]), settings=args["settings"])
    llm = RelayLLM(job, *args["llm"]) if args["llm"] else None
    embedder = RelayEmbedder(job, args["embed_model_id"]) if args["embed_model_id"] else None
    similarity = load_similarity(ws.paths, ws.settings, embedder=embedder or False)
    should_stop = (lambda: job.call("should_stop")) if args["should_stop"] else None
    return run_dream(ws, llm, progress=job.progress, cancel=job.token, should_stop=should_stop, now=args["now"],
                     apply=args["apply"], dry_run=args["dry_run"], similarity=similarity,
                     include_archive=args["include_archive"], read_archived=args["read_archived"])
