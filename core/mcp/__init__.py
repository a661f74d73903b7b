"""The MCP server's tools (plain methods over a Workspace); the wiring is core/mcp_server.py."""
