"""The local model client: LLMClient over the llama.cpp worker process."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from pathlib import Path

from core.cancel import CancelToken
from core.config import ModelSettings
from core.errors import ModelError, ModelNotFoundError, TruncatedReplyError
from core.llm import hardware, structured
from core.llm.protocol import Completion, Message, TokenCallback
from core.llm.worker_proc import WorkerProcess

_COUNT_CACHE = 4096
FINISH_REASONS = ("stop", "length")      # what the engine reports for a reply that ended on its own


def resolve(model: str):
    """(path, catalog entry or None) for a catalog id or a GGUF path, with core's errors."""
    import models

    try:
        path = models.resolve_model_path(model)
    except models.UnknownModelError as exc:
        raise ModelNotFoundError(str(exc)) from exc
    except models.ModelFileError as exc:
        raise ModelError(str(exc)) from exc
    entry = models.find_entry(model) or models.entry_for_file(path)
    return path, entry


def inspect(path: Path):
    from models import ModelFileError
    from models.gguf_meta import read_gguf_info

    try:
        return read_gguf_info(path)
    except ModelFileError as exc:
        raise ModelError(str(exc)) from exc


class LocalClient:
    def __init__(self, settings: ModelSettings | None = None, *, check_fit: bool = True):
        from models.fit import fit_for_file

        self.settings = settings = settings or ModelSettings()
        self.path, self.entry = resolve(settings.model)
        self.info = inspect(self.path)
        trained = self.info.context_length or (self.entry.context_length if self.entry else 0) or 4096
        self._context_length = min(settings.context_length or trained, trained)
        if check_fit:
            fit = fit_for_file(self.path, self._context_length)
            if not fit.fits:
                raise ModelError(f"{self.path} is too large for this machine: it {fit.describe()}. "
                                 "Choose a smaller model or a shorter context length")
        self.model_id = self.entry.id if self.entry else self.path.name
        self.chat_format = self.entry.chat_format if self.entry else "gguf"
        self.json_mode = settings.json_mode or (self.entry.json_mode if self.entry else "grammar")
        if self.json_mode not in ("grammar", "retry"):
            raise ModelError(f"model.json_mode must be grammar or retry, not {self.json_mode!r}")
        self.n_threads = settings.n_threads or hardware.physical_cores()
        self.n_gpu_layers = hardware.default_gpu_layers(settings.n_gpu_layers)
        self._worker = WorkerProcess(self.worker_config(), label=str(self.path))
        self._lock = threading.RLock()
        self._counts: OrderedDict[str, int] = OrderedDict()

    def engine_config(self) -> dict:
        """What core.llm.engine.EngineConfig takes: how llama.cpp loads the model."""
        return {"path": str(self.path), "n_ctx": self._context_length, "n_gpu_layers": self.n_gpu_layers,
                "n_threads": self.n_threads, "chat_format": self.chat_format}

    def worker_config(self) -> dict:
        """The engine's config plus how the worker process lives (idle unload, niceness)."""
        return {**self.engine_config(), "idle_unload_s": self.settings.idle_unload_s, "nice": self.settings.nice}

    # -- LLMClient ----------------------------------------------------------
    @property
    def context_length(self) -> int:
        return self._context_length

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid

    def _call(self, message: dict, on_token=None, cancel=None) -> dict:
        with self._lock:
            return self._worker.request(message, on_token=on_token, cancel=cancel,
                                        cancel_deadline_s=self.settings.cancel_deadline_s)

    def load(self) -> dict:
        """Start the worker and load the model now (otherwise the first request does)."""
        return self._call({"op": "info"})

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            if text in self._counts:
                self._counts.move_to_end(text)
                return self._counts[text]
            count = self._call({"op": "count", "texts": [text]})["counts"][0]
            self._counts[text] = count
            if len(self._counts) > _COUNT_CACHE:
                self._counts.popitem(last=False)
            return count

    def render_prompt(self, messages: list[Message]) -> tuple[str, int]:
        """The exact prompt the model sees for these messages, and its length in tokens."""
        reply = self._call({"op": "render", "messages": messages})
        return reply["prompt"], reply["prompt_tokens"]

    def prompt_head(self, messages: list[Message]) -> list[int]:
        """The first token ids of the rendered prompt (to check BOS handling)."""
        return self._call({"op": "render", "messages": messages})["head"]

    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float = 0.2,
                 stop: list[str] | None = None, json_schema: dict | None = None,
                 on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        if cancel is not None:
            cancel.raise_if_cancelled()
        started = time.perf_counter()
        if json_schema is None:
            event = self._generate(messages, max_tokens, temperature, stop, None, on_token, cancel)
            return self._completion(event, started, event["text"], None, {"attempts": 1})
        return self._structured(messages, max_tokens, temperature, stop, json_schema, on_token, cancel, started)

    def close(self) -> None:
        with self._lock:
            self._worker.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- internals ------------------------------------------------------------
    def _generate(self, messages, max_tokens, temperature, stop, schema, on_token, cancel) -> dict:
        request = {"op": "complete", "messages": messages, "max_tokens": int(max_tokens),
                   "temperature": float(temperature), "stop": list(stop or []), "json_schema": schema,
                   "stream": on_token is not None}
        event = self._call(request, on_token=on_token, cancel=cancel)
        if event.get("finish_reason") not in FINISH_REASONS or not isinstance(event.get("text"), str):
            raise TruncatedReplyError(f"the model worker for {self.path.name} ended a reply without a finish reason "
                                      f"({event.get('finish_reason')!r}): it is not known to be whole, so nothing of it "
                                      "was used")
        return event

    def _structured(self, messages, max_tokens, temperature, stop, schema, on_token, cancel, started):
        check = structured.validator(schema)
        if self.json_mode == "grammar":
            plan = [("grammar", False), ("grammar", True)]
        else:
            plan = [("free", True), ("free", True), ("grammar", True)]
        events, feedback = [], ""
        for mode, instruct in plan:
            prompt = structured.with_instruction(messages, schema, feedback) if instruct else messages
            event = self._generate(prompt, max_tokens, temperature, stop, schema if mode == "grammar" else None,
                                   on_token, cancel)
            events.append(event)
            value, feedback = structured.check(event["text"], check)
            if not feedback:
                return self._completion(event, started, event["text"], value,
                                        {"attempts": len(events), "json_mode": self.json_mode}, events)
        raise structured.StructuredOutputError(
            f"{self.model_id} gave no reply matching the JSON schema in {len(events)} attempts "
            f"(last problem: {feedback}; a larger max_tokens may help)")

    def _completion(self, event: dict, started: float, text: str, parsed, extra: dict,
                    events: list[dict] | None = None) -> Completion:
        events = events or [event]
        seconds = time.perf_counter() - started
        decode = sum(e["seconds"] - e["ttft_seconds"] for e in events)
        extra = {**extra, "cached_tokens": event["cached_tokens"], "load_seconds": sum(e["load_seconds"] for e in events),
                 "prefill_seconds": event["prefill_seconds"], "grammar_rejections": event["grammar_rejections"],
                 "decode_seconds": decode, "reply_tokens": event["completion_tokens"],
                 "decode_cpu_seconds": sum(e["decode_cpu_seconds"] for e in events),
                 # seconds after the first token of the first attempt: what retries really cost
                 "after_first_token_seconds": (events[0]["seconds"] - events[0]["ttft_seconds"])
                 + sum(e["seconds"] for e in events[1:])}
        return Completion(text=text, prompt_tokens=sum(e["prompt_tokens"] for e in events),
                          completion_tokens=sum(e["completion_tokens"] for e in events), seconds=seconds,
                          ttft_seconds=max(0.0, seconds - decode), finish_reason=event["finish_reason"],
                          model=self.model_id, parsed=parsed, extra=extra)
