"""`memsift serve` on a team store: the same server, its index and state plane in PostgreSQL.

One server subprocess, driven by the MCP SDK's own client, with ``MEMSIFT_DATABASE_URL`` set as
a user would set it; the real embedding model (starting a server is slow, so one test walks
the whole life of a memory)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mcp_harness import ServerSession

from engine.files.store import open_store
from engine.indexing.indexer import index_store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WRITTEN_WHILE_DOWN = """---
title: Llama feeding schedule
kind: semantic
---
The office llama is fed at 07:30 and 16:00; never after dark.
"""
WRITTEN_BEHIND_ITS_BACK = """---
title: Aquarium cleaning rota
kind: semantic
---
The office aquarium's filter is cleaned every second Thursday by whoever booked the boardroom.
"""


def hit_paths(server: ServerSession, query: str) -> list[str]:
    return [hit["path"] for hit in server.ok("memory_search", {"query": query})["hits"]]


def test_a_server_on_a_team_store_catches_up_watches_remembers_and_forgets(
    tmp_path, pg_url, monkeypatch
):
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns(".memsift"))
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    index_store(open_store(root), embed=False)
    (root / "facts" / "llama.md").write_text(WRITTEN_WHILE_DOWN)

    server = ServerSession(root, env={"MEMSIFT_DATABASE_URL": pg_url})
    try:
        status = server.wait_until_fresh()
        assert status["index_db"].startswith("PostgreSQL")
        assert hit_paths(server, "when is the llama fed")[0] == "facts/llama.md"
        searched = server.ok("memory_search", {"query": "rotate the staging database credentials"})
        assert "procedures/rotate-staging-db-credentials.md" in [
            hit["path"] for hit in searched["hits"][:3]
        ]
        assert searched["degraded"] is False

        remembered = server.ok(
            "memory_remember",
            {
                "title": "Boardroom projector needs the blue HDMI adapter",
                "body": "Only the blue adapter in the top drawer works with that projector.",
                "kind": "semantic",
            },
        )
        path = remembered["path"]
        assert remembered["embedded"] is True
        assert hit_paths(server, "which adapter for the boardroom projector")[0] == path

        (root / "facts" / "aquarium.md").write_text(WRITTEN_BEHIND_ITS_BACK)
        assert server.wait_for(
            lambda: hit_paths(server, "who cleans the aquarium filter")[:1]
            == ["facts/aquarium.md"]
        )

        assert server.ok("memory_forget", {"path": path})["archived"] is True
        assert path not in hit_paths(server, "which adapter for the boardroom projector")
        assert not list(root.glob(".memsift/*.db"))  # (remember stages files in .memsift/tmp)
    finally:
        server.close()
