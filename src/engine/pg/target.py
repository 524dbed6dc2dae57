"""Which database, if any, a store keeps its index and state plane in.

Read from the environment and the store's configuration only; nothing here imports the driver,
so asking costs nothing for a store on SQLite (the default, when no URL is named).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from engine.files.config import (
    DEFAULT_EF_SEARCH,
    DEFAULT_VECTOR_INDEX,
    DEFAULT_WORK_MEM,
    Config,
    database_url,
)
from engine.redact import URL_VARIABLE, hide_passwords_of

__all__ = ["URL_VARIABLE", "DatabaseTarget", "TargetError", "database_target"]


@dataclass(frozen=True)
class DatabaseTarget:
    """A PostgreSQL database and the schema of it that holds one store."""

    url: str
    schema: str
    #: ``[database] vector_index``: "exact", or "hnsw" for an approximate pgvector index that
    #: the next index run builds (and a run under "exact" drops).
    vector_index: str = DEFAULT_VECTOR_INDEX
    #: ``[database] hnsw_ef_search``, set on every search connection.
    ef_search: int = DEFAULT_EF_SEARCH
    #: ``[database] work_mem``, set on every search connection.
    work_mem: str = DEFAULT_WORK_MEM

    def shown(self) -> str:
        """Where, for messages: host, database and schema, never the user or password."""
        try:
            parts = urlsplit(self.url)
            host = parts.hostname or "local socket"
            port = f":{parts.port}" if parts.port else ""
        except ValueError:  # a port that is not a number, an unclosed [IPv6 address
            return f"PostgreSQL (unreadable URL), schema {self.schema}"
        name = parts.path.lstrip("/") or "(default database)"
        return f"PostgreSQL {host}{port}/{name}, schema {self.schema}"


class TargetError(ValueError):
    """A database URL that cannot be used; the message names where it came from."""


def database_target(config: Config) -> DatabaseTarget | None:
    """The store's database, or None for the SQLite default.

    ``MEMSIFT_DATABASE_URL`` (it overrides ``[database] url``: the usual way to point several
    machines at one team store) wins; an empty variable is unset. Its password is remembered,
    so that no message quotes it (:mod:`engine.redact`)."""
    url = os.environ.get(URL_VARIABLE) or config.database_url
    if not url:
        return None
    hide_passwords_of(url)
    if os.environ.get(URL_VARIABLE) and (problem := database_url(url)):
        raise TargetError(f"{URL_VARIABLE} {problem}")
    return DatabaseTarget(
        url, config.database_schema, config.vector_index, config.hnsw_ef_search, config.work_mem
    )
