"""Smoke-test a built bundle from the outside, as a person and an agent would use it.

    python packaging/smoke_test.py dist/reverie/reverie                    # Linux
    python packaging/smoke_test.py dist/Reverie.app/Contents/MacOS/Reverie  # macOS

Runs the executable with a clean environment (no virtualenv, no PYTHONPATH, cwd in a
temporary folder, Qt offscreen), so nothing outside the bundle can help it:
1. `--smoke-test`: the in-bundle checks (demo, keyword + hybrid search, tokenizer,
   llama.cpp with the bundled model, a Qt window) - see packaging/smoke.py;
2. the CLI: `demo`, `read`, `search` (when the CLI has it), `import claude-code`;
3. MCP: `mcp` driven by the official SDK's stdio client (tools listed, a search,
   a path escape refused).
Exits 0 only when everything passed. Needs this repository's venv only for the MCP client.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TIMEOUT_S = 600


# The tools `reverie mcp` serves (core/mcp/tools.py); the bundle must serve each of them.
MCP_TOOLS = {"memory_search", "memory_get", "memory_append", "memory_recent", "checkpoint_save", "checkpoint_load",
             "handoff_create", "handoff_read", "progress_update"}

def clean_env(home: Path) -> dict[str, str]:
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TMPDIR") if k in os.environ}
    return {**keep, "HOME": str(home), "QT_QPA_PLATFORM": "offscreen"}


def run(binary: Path, args: list[str], work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    start = time.perf_counter()
    done = subprocess.run([str(binary), *args], cwd=work, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    print(f"$ {binary.name} {' '.join(args)}  -> exit {done.returncode} in {time.perf_counter() - start:.1f} s",
          flush=True)
    return done


def check(condition: bool, what: str, done: subprocess.CompletedProcess | None = None) -> None:
    if not condition:
        if done is not None:
            sys.stdout.write(done.stdout[-4000:])
            sys.stderr.write(done.stderr[-8000:])
        raise SystemExit(f"bundle smoke: FAILED {what}")
    print(f"bundle smoke: ok {what}", flush=True)


def mcp_session(binary: Path, workspace: Path, work: Path, env: dict[str, str]) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session():
        params = StdioServerParameters(command=str(binary), args=["mcp", str(workspace)], env=env, cwd=str(work))
        with open(work / "mcp-stderr.log", "w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), read_timeout_seconds=300) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                check(names == MCP_TOOLS, f"mcp lists its {len(MCP_TOOLS)} tools ({sorted(names)})")
                found = await client.call_tool("memory_search", {"query": "tea", "mode": "keyword"})
                hits = found.structured_content["hits"]
                check(any(h["path"] == "MEMORY.md" for h in hits), "mcp memory_search finds 'tea' in MEMORY.md")
                escape = await client.call_tool("memory_get", {"path": "../../../../etc/passwd"})
                check(escape.is_error and "outside the workspace" in escape.content[0].text,
                      "mcp memory_get refuses a path outside the workspace")

    anyio.run(session)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    binary = Path(argv[0]).resolve()
    if not binary.is_file():
        print(f"no executable at {binary}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="reverie-bundle-smoke-"))
    env = clean_env(work / "home")
    (work / "home").mkdir()

    done = run(binary, ["--smoke-test", str(work / "inside")], work, env)
    print(done.stdout, end="")
    check(done.returncode == 0 and "smoke: all ok" in done.stdout, "in-bundle --smoke-test", done)

    demo = work / "demo"
    done = run(binary, ["demo", str(demo)], work, env)
    check(done.returncode == 0 and (demo / "MEMORY.md").is_file(), "cli demo", done)
    done = run(binary, ["read", str(demo), "MEMORY.md", "--lines", "1-1"], work, env)
    check(done.returncode == 0 and "# MEMORY" in done.stdout, "cli read", done)
    helptext = run(binary, ["--help"], work, env).stdout
    if re.search(r"[{,]search[,}]", helptext):      # argparse lists the commands as {agent,demo,...}
        done = run(binary, ["search", str(demo), "tea"], work, env)
        check(done.returncode == 0 and "MEMORY.md" in done.stdout, "cli search", done)
    else:
        print("bundle smoke: note: this build's CLI has no search command; searched through --smoke-test and MCP")

    transcript = work / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(r) for r in [
        {"type": "user", "uuid": "u1", "timestamp": "2026-05-26T07:00:00Z",
         "message": {"role": "user", "content": "The staging host is staging.orchard.internal."}},
        {"type": "assistant", "uuid": "u2", "timestamp": "2026-05-26T07:00:05Z",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]) + "\n{broken line\n", encoding="utf-8")
    done = run(binary, ["import", "claude-code", str(transcript), str(demo)], work, env)
    check(done.returncode == 0 and "cc-session: 2 message(s) imported" in done.stdout
          and (demo / "sessions" / "cc-session.log.jsonl").is_file(), "cli import claude-code", done)

    mcp_session(binary, demo, work, env)
    print("bundle smoke: all ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
