"""The stdio wire under the MCP SDK: every line that is not a JSON-RPC message gets its error reply.

The SDK drops a line it cannot parse or validate (it logs it and says nothing), so a client
that sent a malformed request waits forever. JSON-RPC 2.0 says what to answer: a line that
is not JSON gets -32700 "Parse error", and JSON that is not a valid message gets -32600
"Invalid Request", both with the request's id when it can be read (else null). Those
replies go out through the SDK's own writer, so lines on stdout never interleave. Blank
lines are not messages and are skipped.
"""
from __future__ import annotations

import json
import os
from io import TextIOWrapper
from typing import Any, AsyncIterator

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_reply(line: str):
    """The JSON-RPC error message to send back for `line`, or None when it is a valid message."""
    import mcp_types as types

    try:
        value: Any = json.loads(line)
    except ValueError as exc:
        return _error(types, None, PARSE_ERROR, f"Parse error: the line is not JSON ({exc.msg})")
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
    return isinstance(value, (int, str)) and not isinstance(value, bool)


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
        return 'the "id" member must be a string or an integer'
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
            if not line.strip():
                continue
            reply = error_reply(line)
            if reply is None:
                yield line
                continue
            await self._ready.wait()
            await self._write.send(SessionMessage(reply))


def claim_stdin():
    """The process's stdin as an async text stream; fd 0 then reads the null device, so a child
    process (the model worker) can never swallow protocol bytes."""
    import anyio

    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    # closefd=False: a reader thread may still block on it after the transport ends (as the SDK does).
    return anyio.wrap_file(TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8",
                                         errors="replace"))
