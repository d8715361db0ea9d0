"""Serving a store: the HTTP API and web page (`videomem serve`), the MCP server (`videomem mcp`)
and the summary of a store both `videomem info` and `/info` show (summary.py).

All are thin views over the agent and the memory registry: a memory or tool registered
later appears in them without changes here.
"""
