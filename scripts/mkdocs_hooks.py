"""MkDocs hooks for memsift's own site.

``<!-- memsift:mcp-tools -->`` in a page becomes the MCP tool reference, rendered from the
tool definitions the server itself lists (see :mod:`engine.agents.tool_docs`), so the page cannot
drift from the code. A page that names the marker but cannot render it fails the build.
"""

from __future__ import annotations

from typing import Any

from mkdocs.exceptions import PluginError

MARKER = "<!-- memsift:mcp-tools -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    try:
        from engine.agents.mcp_server import tool_definitions
        from engine.agents.tool_docs import render_tools
    except ImportError as exc:
        raise PluginError(
            f"{page.file.src_path}: cannot render the MCP tool list ({exc}); install memsift "
            "with its core dependencies (pip install -e .)"
        ) from None
    return markdown.replace(MARKER, render_tools(tool_definitions()))
