"""The stdio wire under the MCP SDK: every line that is not a JSON-RPC message gets its error reply.

The SDK drops a line it cannot parse or validate (it logs it and says nothing), so a client
that sent a malformed request waits forever. JSON-RPC 2.0 says what to answer: a line that
is not JSON gets -32700 "Parse error", and JSON that is not a valid message gets -32600
"Invalid Request", both with the request's id when it can be read (else null). Those
replies go out through the SDK's own writer, so lines on stdout never interleave. Blank
lines are not messages and are skipped.

Nothing on the wire may stop the server: a line longer than MAX_LINE_BYTES is never held in
memory (it is skipped as it streams in and refused), nesting deeper than MAX_DEPTH, numbers
past Python's digit limit and ids that are not short strings or safe integers are refused
with the reason, and a failure inside this check answers the line rather than ending the
transport.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, AsyncIterator

from core.store.jsonsafe import json_depth

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
MAX_LINE_BYTES = 4 * 1024 * 1024    # one request; a search query or a fact is a few kilobytes
MAX_DEPTH = 64                      # nesting of arrays and objects in one message
MAX_ID_CHARS = 256
MAX_SAFE_INT = 2 ** 53 - 1          # what every JSON client reads back exactly
READ_CHUNK = 64 * 1024



@dataclass(frozen=True)
class Oversize:
    """A line that was longer than the limit; only its size was kept."""
    size: int


def error_reply(line: str | Oversize):
    """The JSON-RPC error message to send back for `line`, or None when it is a valid message."""
    import mcp_types as types

    try:
        return _check(types, line)
    except Exception as exc:   # noqa: BLE001 - whatever went wrong, the line is answered and the server goes on
        return _error(types, None, INTERNAL_ERROR, f"Internal error: the message could not be checked "
                                                   f"({type(exc).__name__})")


def _check(types, line: str | Oversize):
    if isinstance(line, Oversize):
        return _error(types, None, INVALID_REQUEST, f"Invalid Request: the message is {line.size:,} bytes; "
                                                    f"at most {MAX_LINE_BYTES:,} are read")
    if json_depth(line, MAX_DEPTH) > MAX_DEPTH:
        return _error(types, None, INVALID_REQUEST,
                      f"Invalid Request: arrays and objects nest more than {MAX_DEPTH} levels deep")
    try:
        value: Any = json.loads(line)
    except (ValueError, RecursionError) as exc:
        why = getattr(exc, "msg", None) or str(exc).split("\n")[0][:200]
        return _error(types, None, PARSE_ERROR, f"Parse error: the line is not JSON Reverie can read ({why})")
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        if not (isinstance(value, dict) and "id" in value and not _good_id(value["id"])):
            return None     # (an object id would pass as a notification's extra member: it is not one)
    except Exception:   # noqa: BLE001 - any failure to validate is answered below
        pass
    request_id = value.get("id") if isinstance(value, dict) else None
    if not _good_id(request_id):
        request_id = None
    return _error(types, request_id, INVALID_REQUEST, f"Invalid Request: {_why(value)}")


def _good_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) <= MAX_SAFE_INT
    return isinstance(value, str) and len(value) <= MAX_ID_CHARS


def _why(value: Any) -> str:
    if isinstance(value, list):
        return "batches are not supported; send one JSON-RPC object per line"
    if not isinstance(value, dict):
        return f"a JSON-RPC message is an object, not {type(value).__name__}"
    if value.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be exactly "2.0"'
    if "method" in value and not isinstance(value["method"], str):
        return 'the "method" member must be a string'
    if "id" in value and not _good_id(value["id"]) and value["id"] is not None:
        return (f'the "id" member must be a string of at most {MAX_ID_CHARS} characters or an integer '
                f'of at most {MAX_SAFE_INT}')
    if "params" in value and not isinstance(value["params"], (dict, list)):
        return 'the "params" member must be an object'
    return "not a request, notification or response"


def _error(types, request_id, code: int, message: str):
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class CheckedLines:
    """The stdin lines the SDK reads, minus the malformed ones, which are answered here."""

    def __init__(self, stdin):
        import anyio

        self._stdin = stdin
        self._write = None
        self._ready = anyio.Event()

    def attach(self, write_stream) -> None:
        """The SDK's write stream, once the transport is up: error replies go out through it."""
        self._write = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        from mcp.shared.message import SessionMessage

        async for line in self._stdin:
            if isinstance(line, str) and not line.strip():
                continue
            reply = error_reply(line)
            if reply is None:
                yield line
                continue
            await self._ready.wait()
            await self._write.send(SessionMessage(reply))


class BoundedLines:
    """Lines of a binary file descriptor as text, each at most `limit` bytes; a longer line is
    skipped as it streams in (never held whole) and comes out as Oversize."""

    def __init__(self, fd: int, limit: int = MAX_LINE_BYTES):
        self._fd = fd
        self._limit = limit

    def __aiter__(self):
        return self._lines()

    async def _lines(self):
        import anyio

        buffer = bytearray()
        skipped = 0          # bytes of an oversize line dropped so far (0: not skipping)
        while True:
            chunk = await anyio.to_thread.run_sync(os.read, self._fd, READ_CHUNK, abandon_on_cancel=True)
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if skipped:
                    skipped += len(piece)
                else:
                    buffer += piece
                    if len(buffer) > self._limit:
                        skipped, buffer = len(buffer), bytearray()
                if end < 0:
                    break
                start = end + 1
                if skipped:
                    yield Oversize(skipped)
                    skipped = 0
                else:
                    yield buffer.decode("utf-8", errors="replace")
                    buffer = bytearray()
        if skipped:
            yield Oversize(skipped)
        elif buffer:
            yield buffer.decode("utf-8", errors="replace")


def claim_stdin():
    """The process's stdin as bounded lines; fd 0 then reads the null device, so a child
    process (the model worker) can never swallow protocol bytes."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return BoundedLines(private)
