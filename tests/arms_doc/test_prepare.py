"""SQLite's verdict at build time: every statement prepared against the engine's empty schema,
never run, and refused statements blamed on the arm and line that break them."""

from __future__ import annotations

import tempfile

import apsw
import pytest
from arms_doc_testing import ENGINE_REGISTRY, src

from arms_doc.prepare import (
    Problem,
    blame,
    combinations,
    covering,
    empty_index,
    statement_problem,
)
from arms_doc.prepare import check_statements as check
from arms_doc.reader import RegistryError, parse_registry, read_registry
from engine.arms import ARMS
from engine.sqlite.prepare import EmptyIndex


@pytest.fixture(scope="module")
def index():
    with empty_index() as empty:
        yield empty


def problem(index: EmptyIndex, sql: str, bound: int = 4) -> str | None:
    found = statement_problem(index, sql, bound)
    return None if found is None else found.message


# --- one statement --------------------------------------------------------------------------


def test_the_empty_index_has_the_engine_tables_the_vector_table_and_the_state_plane(index):
    sql = (
        "SELECT f.path FROM files AS f JOIN chunks_fts ON chunks_fts.rowid = f.id "
        "JOIN chunks AS c ON c.file_id = f.id JOIN embeddings AS e ON e.hash = c.hash "
        "JOIN vec_chunks AS v ON v.chunk_id = c.id LEFT JOIN state.access AS a ON a.path = f.path"
    )
    assert problem(index, sql) is None


def test_the_empty_index_is_made_in_memory_and_writes_no_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    with empty_index() as empty:
        assert problem(empty, "SELECT a.path FROM files AS f JOIN state.access AS a") is None

    assert list(tmp_path.iterdir()) == []


def test_the_state_plane_is_attached_read_only_as_a_search_attaches_it(index):
    with pytest.raises(apsw.ReadOnlyError):
        index.connection.execute("INSERT INTO state.access(path) VALUES ('x')")


def test_a_sound_statement_with_a_gap_in_its_numbers_is_fine(index):
    assert problem(index, "SELECT path FROM files WHERE title = ?1 LIMIT ?3") is None


def test_sql_sqlite_refuses_is_a_problem_with_sqlites_reason(index):
    assert problem(index, "SELEKT 1") == (
        'makes SQL that SQLite refuses: near "SELEKT": syntax error'
    )


def test_a_missing_table_is_a_problem(index):
    assert problem(index, "SELECT * FROM nope") == (
        "makes SQL that SQLite refuses: no such table: nope"
    )


def test_a_second_statement_is_a_problem_and_is_never_prepared_or_run(index):
    message = problem(index, "SELECT path FROM files; DROP TABLE files; --")

    assert message is not None and message.startswith(
        "ends the statement early: a `;` leaves `DROP TABLE files; --` as a second statement"
    )
    tables = index.connection.execute("SELECT count(*) FROM sqlite_master WHERE name = 'files'")
    assert tables.fetchone() == (1,)


def test_a_statement_that_writes_is_a_problem_and_is_not_run(index):
    sql = (
        "INSERT INTO meta(key, value) VALUES ('planted', 'x') "
        "ON CONFLICT(key) DO UPDATE SET value = 'x'"
    )
    assert problem(index, sql) == "makes a statement that writes; an arm's SQL only reads"
    planted = index.connection.execute("SELECT count(*) FROM meta WHERE key = 'planted'")
    assert planted.fetchone() == (0,)


@pytest.mark.parametrize(
    "sql",
    ["SELECT ?1, ?", "SELECT ?, ?2", "SELECT ?1, ?, ?3", "WITH x AS (SELECT ?) SELECT ?4 FROM x"],
)
def test_a_bare_question_mark_is_a_problem_even_where_it_fills_a_gap(index, sql):
    message = problem(index, sql)
    assert message is not None and message.startswith("uses a bare `?`")


@pytest.mark.parametrize("marker", [":evil", "@evil", "$evil"])
def test_a_named_placeholder_is_a_problem_naming_it_as_written(index, marker):
    message = problem(index, f"SELECT path FROM files WHERE title = {marker}")
    assert message is not None and message.startswith(f"uses the named placeholder `{marker}`")


def test_a_number_past_what_the_search_binds_is_a_problem(index):
    assert problem(index, "SELECT ?5", bound=5) is None
    message = problem(index, "SELECT ?6", bound=5)
    assert message is not None and message.startswith("uses ?6, which this search never binds")


# --- every statement of a registry ----------------------------------------------------------

REGISTRY = '''
    """Why the arms are data."""

    ARMS = (
        Arm(
            name="words",
            weight=1.0,
            needs=(
                "query_terms",
            ),
            prose="Ranks by words.",
            sql="""
    SELECT f.id AS id, row_number() OVER (ORDER BY f.path) AS rank
    FROM chunks_fts JOIN files AS f ON f.id = chunks_fts.rowid
    WHERE chunks_fts MATCH ?1 AND {scope}
    LIMIT ?2
    """,
            label="word ranking",
        ),
        Arm(
            name="newest",
            weight=0.5,
            needs=(
                # none: a prior
            ),
            prose="Ranks by time.",
            sql="""
    SELECT f.id AS id, rank() OVER (ORDER BY f.updated_at DESC) AS rank
    FROM files AS f
    WHERE {scope} AND f.id IN (SELECT id FROM candidates)
    """,
            label="newest first",
        ),
    )
'''


def check_text(text: str) -> None:
    check(parse_registry(src(text), "arms.py"))


def failure(text: str) -> RegistryError:
    with pytest.raises(RegistryError) as caught:
        check_text(text)
    return caught.value


def test_the_engines_own_registry_prepares():
    check(read_registry(ENGINE_REGISTRY, display="src/engine/arms.py"))


def test_a_sound_registry_prepares():
    check_text(REGISTRY)


def test_a_refused_arm_is_blamed_on_the_line_sqlite_names():
    error = failure(REGISTRY.replace("FROM files AS f\n", "FROM filez AS f\n"))

    assert (error.file, error.line) == ("arms.py", 28)
    assert error.message.startswith(
        "arm 'newest' makes SQL that SQLite refuses: no such table: filez (the statement of a "
        "search without scope options, prepared against an empty index, never run)"
    )


def test_a_refused_arm_whose_spot_cannot_be_found_is_blamed_on_its_sql_line():
    error = failure(REGISTRY.replace("LIMIT ?2\n", "LIMIT ?2)\n"))

    assert (error.line, error.message.startswith("arm 'words' makes SQL")) == (11, True)


def test_an_arm_weighted_0_is_prepared_too():
    text = REGISTRY.replace("weight=0.5", "weight=0").replace("ORDER BY f.updated_at", "ORDER BY")

    assert failure(text).message.startswith("arm 'newest' makes SQL that SQLite refuses")


def test_a_placeholder_of_an_input_the_arm_does_not_need_is_refused_on_its_line():
    error = failure(REGISTRY.replace("LIMIT ?2\n", "LIMIT ?2 OFFSET ?5\n"))

    assert error.line == 15
    assert error.message.startswith(
        "arm 'words' uses ?5: ?5 belongs to the input 'query_time', which the arm does not need"
    )


def test_a_placeholder_past_the_contracts_is_refused_on_its_line():
    error = failure(REGISTRY.replace("LIMIT ?2\n", "LIMIT ?2 OFFSET ?9\n"))

    assert error.line == 15
    assert error.message.startswith("arm 'words' uses ?9: ?9 is not the arm's to use")


def test_an_arm_that_needs_another_arms_cte_is_blamed_when_assembled_alone():
    broken = REGISTRY.replace(
        "FROM files AS f\n", "FROM files AS f JOIN arm_words AS w ON w.id = f.id\n"
    )

    assert failure(broken).message.startswith(
        "arm 'newest' makes SQL that SQLite refuses: no such table: arm_words"
    )


def test_a_failure_in_company_names_the_company():
    message = blame("newest", ["words", "meaning"], "a search", Problem("makes SQL that fails"))

    assert message.startswith("arm 'newest' (assembled with words, meaning) makes SQL that fails")


def test_every_combination_is_checked_smallest_first():
    names = [[arm.name for arm in combo] for combo in combinations(ARMS)]

    assert names[:5] == [["fts"], ["vector"], ["recency"], ["salience"], ["time"]]
    assert (len(names), names[-1]) == (31, ["fts", "vector", "recency", "salience", "time"])


def test_a_build_prepares_each_arm_alone_then_all_together():
    names = ["".join(arm.name[0] for arm in combo) for combo in covering(ARMS)]

    assert names == ["f", "v", "r", "s", "t", "fvrst"]
