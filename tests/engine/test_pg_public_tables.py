"""A team store's schema is looked up in that schema only. Its connections also search
``public`` (where pgvector lives), so a table of the same name there, another application's
``files`` or ``meta`` or the tables of a store that chose ``schema = "public"``, must never be
taken for the store's own: not as its index, not as its state plane, not as its layout."""

from __future__ import annotations

import pytest

from backends import named_store as make
from engine import state as state_plane
from engine.errors import IndexMissing
from engine.indexing.indexer import index_store
from engine.search import search


def another_apps_tables(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.meta(key text, value text)")
        conn.execute("INSERT INTO public.meta VALUES ('schema_version', '7')")
        conn.execute("CREATE TABLE public.files(id int, name text)")
        conn.execute("INSERT INTO public.files VALUES (1, 'payroll.xlsx')")
        conn.execute("CREATE TABLE public.chunks(id int)")


def public_rows(url: str) -> list[object]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [
            conn.execute("SELECT * FROM public.meta").fetchall(),
            conn.execute("SELECT * FROM public.files").fetchall(),
        ]


def test_a_new_store_beside_another_apps_public_tables_says_it_has_no_index_yet(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    another_apps_tables(pg_url)
    store = make(tmp_path, "alpha")

    with pytest.raises(IndexMissing, match="no index yet"):
        search(store, "store holds")


def test_a_store_indexes_and_searches_beside_another_apps_public_tables(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    another_apps_tables(pg_url)
    before = public_rows(pg_url)
    store = make(tmp_path, "alpha")

    index_store(store)
    result = search(store, "store holds")

    assert [h.path for h in result.hits] == ["alpha.md"]
    assert "fts" in result.arms_fired
    assert public_rows(pg_url) == before


def test_a_store_on_its_own_schema_never_reads_a_public_stores_index_or_state(
    tmp_path, pg_url, monkeypatch
):
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    public, own = make(tmp_path, "alpha", "public"), make(tmp_path, "beta")
    index_store(public)
    state_plane.reinforce(public, "alpha.md", 1)

    with pytest.raises(IndexMissing):
        search(own, "store holds")
    assert state_plane.lookup(own, "alpha.md").outcome_score == 0
    index_store(own)

    assert [h.path for h in search(own, "store holds").hits] == ["beta.md"]
    assert "fts" in search(own, "store holds").arms_fired
    assert [h.path for h in search(public, "store holds").hits] == ["alpha.md"]


def test_a_store_told_to_use_a_schema_holding_another_apps_tables_is_refused_naming_them(
    tmp_path, pg_url, monkeypatch
):
    import psycopg

    from engine.pg.driver import PgError

    monkeypatch.setenv("MEMSIFT_DATABASE_URL", pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.files(id int, name text)")
        conn.execute("INSERT INTO public.files VALUES (1, 'payroll.xlsx')")
    store = make(tmp_path, "alpha", "public")

    with pytest.raises(PgError, match=r"schema public.*'files'.*\[database\] schema"):
        index_store(store)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT * FROM public.files").fetchall() == [(1, "payroll.xlsx")]
        assert conn.execute("SELECT to_regclass('public.chunks')").fetchone() == (None,)
