"""Serving a store: the HTTP API and web page (`videomem serve`) and the MCP server (`videomem mcp`).

Both are thin views over the agent and the memory registry: a memory or tool registered
later appears in them without changes here.
"""
