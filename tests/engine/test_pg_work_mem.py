"""A team store's searches run with enough work_mem that the full-text arm's bitmap of
matching chunks stays exact on a large store; config.toml may set another amount."""

from __future__ import annotations

import pytest

from engine.files.config import ConfigError, load_config
from engine.indexing.indexer import index_store
from engine.pg.search import PgSearchBackend
from engine.pg.target import database_target


@pytest.mark.parametrize("value", ['"64"', '"64 MB"', '"lots"', "64", '"0MB"', '"64mb"'])
def test_a_bad_work_mem_is_refused_naming_the_key(tmp_path, value):
    path = tmp_path / "config.toml"
    path.write_text(f"[database]\nwork_mem = {value}\n")
    with pytest.raises(
        ConfigError, match=r"config\.toml: \[database\] work_mem = .*e\.g\. \"64MB\""
    ):
        load_config(path)


def test_64mb_is_the_default(tmp_path):
    assert load_config(tmp_path / "config.toml").work_mem == "64MB"


def test_a_search_connection_runs_with_the_configured_work_mem(make_store, pg_url, monkeypatch):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    store = make_store({"a.md": "# Alpha\n\nThe alpha note.\n"})
    (store.root / ".memsift").mkdir(exist_ok=True)
    (store.root / ".memsift" / "config.toml").write_text('[database]\nwork_mem = "48MB"\n')
    index_store(store, embed=False)
    target = database_target(store.config())
    assert target is not None
    backend = PgSearchBackend(target)
    try:
        (shown,) = backend.conn.run("SHOW work_mem").fetchone()
    finally:
        backend.close()

    assert shown == "48MB"
