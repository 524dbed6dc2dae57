"""What an agent talks to: the service (plain functions on JSON-ready data), the write
path, and the MCP server with its stdio transport and tool reference.
"""
