"""LLMClient over an OpenAI-compatible server the person already runs.

LM Studio, Ollama, llama-server and llama-cpp-python's own server keep a big
model loaded; loading a second copy would not fit. Streaming over SSE;
structured output through `response_format` where the server takes it
(json_schema, else json_object with a schema, else the schema in the prompt),
always validated here; a clear ServerUnavailableError when nothing answers.
Plain urllib: no client library to match against each server's quirks.

A reply counts only when it is whole: a stream must end with `[DONE]` and the reply must
carry a finish reason. A server that dies mid-reply (the connection closes, or the stream
just stops) raises TruncatedReplyError, so no caller ever stores half a reply as a whole one.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Iterator

from core.cancel import CancelToken, Cancelled
from core.config import ModelSettings
from core.errors import ContextOverflowError, ModelError, ServerUnavailableError, TruncatedReplyError
from core.llm import structured
from core.llm.protocol import Completion, Message, TokenCallback
from core.tokens import count_tokens as estimate_tokens

_OVERFLOW = re.compile(r"context_length_exceeded|context length|maximum context|token limit|too many tokens|"
                       r"exceed(s|ed)? (the )?context", re.IGNORECASE)
PER_MESSAGE_TOKENS = 4     # role markers and separators a chat template adds per message
FORMATS = ("json_schema", "json_object", "prompt")


class _Rejected(Exception):
    """The server refused the request shape (400/422): try the next structured-output format."""


class OpenAIClient:
    def __init__(self, settings: ModelSettings | None = None):
        self.settings = settings = settings or ModelSettings()
        self.base_url = settings.base_url.rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ModelError(f"[model] base_url must start with http:// or https://, not {settings.base_url!r}")
        self._server_model = settings.server_model
        self.model_id = settings.server_model or settings.model
        self._format: str | None = None           # the structured-output format this server took
        self._tokenizer: str | None = None        # "extras" | "llama-server" | "estimate"
        self._lock = threading.Lock()

    # -- HTTP ------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def _open(self, url: str, body: dict | None = None, timeout: float | None = None):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST" if data else "GET")
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.settings.request_timeout_s)
        except urllib.error.HTTPError:
            raise
        except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError, http.client.HTTPException,
                OSError) as exc:
            reason = getattr(exc, "reason", None) or _transport(exc)
            raise ServerUnavailableError(
                f"no model server answers at {self.base_url} ({reason}). Start it (LM Studio, Ollama, "
                "llama-server) or set [model] backend = \"local\"") from exc

    def _json(self, url: str, body: dict | None = None, timeout: float = 10.0) -> Any:
        with self._open(url, body, timeout) as response:
            try:
                data = response.read()
            except (http.client.HTTPException, OSError) as exc:
                raise ServerUnavailableError(f"the server at {self.base_url} broke off its answer "
                                             f"({_transport(exc)})") from exc
            return json.loads(data.decode("utf-8"))

    def list_models(self) -> list[str]:
        """The ids of the models the server offers (ServerUnavailableError when nothing answers)."""
        try:
            listed = self._json(f"{self.base_url}/models").get("data") or []
        except urllib.error.HTTPError as exc:
            raise ModelError(f"{self.base_url}/models answered HTTP {exc.code}; is this an OpenAI-compatible "
                             f"server?") from exc
        except (ValueError, AttributeError) as exc:
            raise ModelError(f"{self.base_url}/models did not answer with a model list ({exc})") from exc
        return [str(m.get("id")) for m in listed if isinstance(m, dict) and m.get("id")]

    def server_model(self) -> str:
        """The model name to send: the setting, else the first model the server lists."""
        if not self._server_model:
            try:
                listed = self._json(f"{self.base_url}/models").get("data") or []
            except urllib.error.HTTPError as exc:
                raise ModelError(f"{self.base_url}/models answered HTTP {exc.code}; set [model] server_model") from exc
            if not listed:
                raise ModelError(f"the server at {self.base_url} lists no models; load one or set [model] server_model")
            self._server_model = str(listed[0].get("id"))
            self.model_id = self._server_model
        return self._server_model

    # -- LLMClient -----------------------------------------------------------
    @property
    def context_length(self) -> int:
        return self.settings.context_length

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        root = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        attempts = {"extras": (f"{root}/extras/tokenize/count", {"input": text}, lambda r: int(r["count"])),
                    "llama-server": (f"{root}/tokenize", {"content": text}, lambda r: len(r["tokens"]))}
        order = [self._tokenizer] if self._tokenizer else list(attempts) + ["estimate"]
        for name in order:
            if name == "estimate":
                break
            url, body, read = attempts[name]
            try:
                count = read(self._json(url, body))
            except ServerUnavailableError:
                return estimate_tokens(text)   # down now: estimate, and ask again next time
            except (urllib.error.HTTPError, KeyError, TypeError, ValueError):
                continue
            self._tokenizer = name
            return count
        self._tokenizer = "estimate"
        return estimate_tokens(text)

    def _prompt_tokens(self, messages: list[Message]) -> int:
        return sum(self.count_tokens(str(m.get("content") or "")) + PER_MESSAGE_TOKENS for m in messages)

    def complete(self, messages: list[Message], *, max_tokens: int = 512, temperature: float = 0.2,
                 stop: list[str] | None = None, json_schema: dict | None = None,
                 on_token: TokenCallback | None = None, cancel: CancelToken | None = None) -> Completion:
        if cancel is not None:
            cancel.raise_if_cancelled()
        started = time.perf_counter()
        prompt_tokens = self._prompt_tokens(messages)
        if prompt_tokens + max_tokens > self.context_length:
            raise ContextOverflowError(
                f"context length exceeded: the prompt has about {prompt_tokens} tokens and up to {max_tokens} more "
                f"were asked for; [model] context_length is {self.context_length}",
                prompt_tokens=prompt_tokens, context_length=self.context_length)
        with self._lock:
            if json_schema is None:
                text, reply = self._stream(messages, max_tokens, temperature, stop, None, on_token, cancel)
                return self._completion(reply, text, None, started, prompt_tokens, {"attempts": 1})
            return self._structured(messages, max_tokens, temperature, stop, json_schema, on_token, cancel,
                                    started, prompt_tokens)

    def close(self) -> None:
        pass   # nothing held: the server is the person's

    # -- internals -----------------------------------------------------------
    def _structured(self, messages, max_tokens, temperature, stop, schema, on_token, cancel, started, prompt_tokens):
        check = structured.validator(schema)
        feedback, attempts = "", 0
        formats = [self._format] if self._format else list(FORMATS)
        while attempts < 3:
            fmt = formats[0]
            prompt = structured.with_instruction(messages, schema, feedback) if (fmt == "prompt" or feedback) \
                else messages
            try:
                text, reply = self._stream(prompt, max_tokens, temperature, stop, (fmt, schema), on_token, cancel)
            except _Rejected:
                formats.pop(0)
                if not formats:
                    raise ModelError(f"the server at {self.base_url} refused every structured-output request")
                continue
            self._format = fmt
            attempts += 1
            value, feedback = structured.check(text, check)
            if not feedback:
                return self._completion(reply, text, value, started, prompt_tokens,
                                        {"attempts": attempts, "json_mode": fmt})
        raise structured.StructuredOutputError(
            f"{self.model_id} gave no reply matching the JSON schema in {attempts} attempts (last problem: {feedback})")

    def _body(self, messages, max_tokens, temperature, stop, fmt) -> dict:
        body: dict[str, Any] = {"model": self.server_model(), "messages": messages, "max_tokens": int(max_tokens),
                                "temperature": float(temperature), "stream": True}
        if stop:
            body["stop"] = list(stop)
        if fmt is not None:
            kind, schema = fmt
            if kind == "json_schema":
                body["response_format"] = {"type": "json_schema",
                                           "json_schema": {"name": "reply", "schema": schema, "strict": True}}
            elif kind == "json_object":
                body["response_format"] = {"type": "json_object", "schema": schema}
        return body

    def _stream(self, messages, max_tokens, temperature, stop, fmt, on_token, cancel, stream=True):
        body = self._body(messages, max_tokens, temperature, stop, fmt)
        body["stream"] = stream
        reply: dict[str, Any] = {"finish_reason": None, "completion_tokens": 0, "usage": None,
                                 "ttft": 0.0, "sent": time.perf_counter()}
        ended = {"done": False}             # set by _sse when the stream's [DONE] arrives
        try:
            response = self._open(f"{self.base_url}/chat/completions", body)
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc, fmt) from exc
        watcher = _CancelWatcher(response, cancel)
        pieces: list[str] = []
        chunks = 0
        try:
            for chunk in _sse(response, ended):
                chunks += 1
                if cancel is not None and cancel.cancelled:
                    break
                if chunk.get("usage"):
                    reply["usage"] = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        if not pieces:
                            reply["ttft"] = time.perf_counter() - reply["sent"]
                        pieces.append(piece)
                        reply["completion_tokens"] += 1
                        if on_token is not None:
                            on_token(piece)
                    if choice.get("finish_reason"):
                        reply["finish_reason"] = choice["finish_reason"]
        except (OSError, ValueError, AttributeError, http.client.HTTPException) as exc:
            if not (cancel is not None and cancel.cancelled):
                if pieces or isinstance(exc, http.client.IncompleteRead):
                    raise TruncatedReplyError(f"the model server at {self.base_url} broke off the reply after "
                                              f"{len(pieces)} token(s) ({_transport(exc)}); nothing of it was "
                                              "used") from exc
                raise ServerUnavailableError(f"the model server at {self.base_url} broke off the reply "
                                             f"({_transport(exc)})") from exc
        finally:
            watcher.stop()
            response.close()
        if cancel is not None and cancel.cancelled:
            raise Cancelled(cancel.reason or "cancelled")
        if not chunks:
            if not stream:
                raise ModelError(f"the server at {self.base_url} sent an empty reply")
            # Some servers (llama_cpp.server) end a failed stream silently with 200; asking
            # again without streaming gets the error itself (a context overflow, usually).
            return self._stream(messages, max_tokens, temperature, stop, fmt, on_token, cancel, stream=False)
        if not ended["done"]:
            raise TruncatedReplyError(f"the reply from {self.base_url} stopped after {len(pieces)} token(s) without "
                                      "its end marker ([DONE]): it was cut off (the server stopped?); nothing of it "
                                      "was used")
        if not reply["finish_reason"]:
            raise TruncatedReplyError(f"the reply from {self.base_url} carries no finish reason: it is not known to "
                                      "be whole, so nothing of it was used")
        return "".join(pieces), reply

    def _http_error(self, exc: urllib.error.HTTPError, fmt) -> Exception:
        try:
            detail = exc.read().decode("utf-8", errors="replace")[:500]
        except OSError:
            detail = ""
        if _OVERFLOW.search(detail):
            return ContextOverflowError(f"context length exceeded (the server said: {detail})",
                                        context_length=self.context_length)
        if fmt is not None and fmt[0] != "prompt" and exc.code in (400, 422, 500, 501):
            return _Rejected(detail)
        if exc.code in (401, 403):
            return ModelError(f"the server at {self.base_url} refused the key (HTTP {exc.code}); check [model] api_key")
        return ModelError(f"the server at {self.base_url} answered HTTP {exc.code}: {detail}")

    def _completion(self, reply, text, parsed, started, prompt_tokens, extra) -> Completion:
        usage = reply.get("usage") or {}
        seconds = time.perf_counter() - started
        finish = str(reply["finish_reason"])
        return Completion(text=text, prompt_tokens=int(usage.get("prompt_tokens") or prompt_tokens),
                          completion_tokens=int(usage.get("completion_tokens") or reply["completion_tokens"]),
                          seconds=seconds, ttft_seconds=min(seconds, reply["ttft"] + (reply["sent"] - started)),
                          finish_reason=finish, model=self.model_id, parsed=parsed,
                          extra={**extra, "backend": "openai", "base_url": self.base_url})


def _transport(exc: BaseException) -> str:
    """A transport failure in a few words (an IncompleteRead's repr carries the bytes it got)."""
    if isinstance(exc, http.client.IncompleteRead):
        return f"the body ended after {len(exc.partial):,} bytes" + \
            (f", {exc.expected:,} more were announced" if exc.expected else "")
    text = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _sse(response, ended: dict) -> Iterator[dict]:
    """The JSON events of a server-sent-event stream (a non-streaming JSON reply is accepted too).

    `ended["done"]` becomes True only when the stream's `[DONE]` arrives (or a whole JSON reply
    was read): a stream that simply stops is a cut reply, not a finished one."""
    if "text/event-stream" not in (response.headers.get("Content-Type") or ""):
        whole = json.loads(response.read().decode("utf-8"))
        for choice in whole.get("choices") or []:
            choice["delta"] = choice.get("message") or {}
        ended["done"] = True
        yield whole
        return
    for raw in response:
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            ended["done"] = True
            return
        try:
            yield json.loads(data)
        except ValueError:
            continue


class _CancelWatcher:
    """Closes the connection as soon as the token fires, even while the server is still reading the prompt."""

    def __init__(self, response, cancel: CancelToken | None):
        self._done = threading.Event()
        self._thread = None
        if cancel is not None:
            self._thread = threading.Thread(target=self._watch, args=(response, cancel), daemon=True)
            self._thread.start()

    def _watch(self, response, cancel: CancelToken) -> None:
        while not self._done.is_set():
            if cancel.wait(0.05):
                try:
                    response.fp.raw._sock.shutdown(socket.SHUT_RDWR)
                except (AttributeError, OSError):
                    pass
                return

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
