"""The installed memsift's version, for ``memsift --version`` and the MCP server's handshake
(a module of its own, so the server does not import the command line for it)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def memsift_version() -> str:
    """The installed distribution's version (a source checkout without metadata says so)."""
    try:
        return version("memsift")
    except PackageNotFoundError:
        return "unknown (not installed)"
