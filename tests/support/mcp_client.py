"""Start the real `reverie mcp` as a subprocess and talk to it with the SDK's own stdio client."""
from __future__ import annotations

import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from tests.support.processes import ROOT

HERE = Path(__file__).resolve().parent
REVERIE = Path(sys.executable).with_name("reverie")   # the console script of this venv


def server_command(workspace: Path, *, capture: Path | None = None, audit_log: Path | None = None) -> list[str]:
    if audit_log is not None:
        command = [sys.executable, "-m", "tests.support.audited_mcp", str(audit_log), str(workspace)]
    else:
        command = [str(REVERIE), "mcp", str(workspace)]
    if capture is not None:
        command = [sys.executable, "-m", "tests.support.stdio_tee", str(capture)] + command
    return command


@asynccontextmanager
async def mcp_client(workspace: Path, errlog: Path, *, capture: Path | None = None,
                     audit_log: Path | None = None, noisy: bool = False, client_name: str | None = None):
    from mcp import Client
    from mcp_types import Implementation
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = server_command(workspace, capture=capture, audit_log=audit_log)
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": os.pathsep.join(([str(HERE / "noisy")] if noisy else []) + [str(ROOT)])}
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(ROOT))
    with open(errlog, "w", encoding="utf-8") as err:
        info = Implementation(name=client_name, version="1.0") if client_name else None
        async with Client(stdio_client(params, errlog=err), read_timeout_seconds=120, client_info=info) as client:
            yield client


def text_of(result) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def data_of(result):
    """A tool's structured result ({"result": ...} unwrapped for text-returning tools)."""
    data = result.structured_content
    if isinstance(data, dict) and set(data) == {"result"}:
        return data["result"]
    return data if data is not None else json.loads(text_of(result))

