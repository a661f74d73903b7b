"""`reverie mcp PATH`: serve a workspace to an agent over MCP on stdio."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("mcp", help="serve a workspace's memory tools to an agent over MCP (stdio)",
                       description="Run Reverie's MCP server on stdin/stdout. stdout carries only protocol "
                                   "messages; logs go to stderr or to --log-file.")
    p.add_argument("path", help="the memory workspace")
    p.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument("--log-file", default=None, help="write logs to this file instead of stderr")
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args) -> int:
    # First of all, before any import that could print: the protocol owns the real stdout.
    from core.mcp_server import configure_logging, reserve_stdout, run_stdio

    protocol_out = reserve_stdout()
    configure_logging(args.log_level, args.log_file)
    return run_stdio(args.path, protocol_out=protocol_out)
