"""The static reader: registry source in, arm records (or an error naming file and line) out."""

from __future__ import annotations

from pathlib import Path

import pytest
from arms_doc_testing import src

from arms_doc.reader import Registry, RegistryError, parse_registry, read_registry

ONE_ARM = src('''
    """Why the arms are data."""

    ARMS = (
        Arm(
            name="fts",
            weight=1.0,
            needs=(
                "query_terms",
            ),
            prose="Ranks by words.",
            sql="SELECT 1",
            label="full-text ranking",
        ),
    )
''')


@pytest.fixture
def read():
    """Parse dedented registry source as the file ``arms.py``."""

    def parse(text: str, variable: str = "ARMS") -> Registry:
        return parse_registry(src(text), "arms.py", variable)

    return parse


def fails(read, text: str) -> RegistryError:
    with pytest.raises(RegistryError) as caught:
        read(text)
    return caught.value


def test_reads_every_field_of_an_arm(read):
    (arm,) = read(ONE_ARM).arms

    assert (arm.name, arm.weight, arm.prose, arm.sql) == ("fts", 1.0, "Ranks by words.", "SELECT 1")
    assert arm.label == "full-text ranking"
    assert arm.needs == ("query_terms",)


def test_reads_arms_in_registry_order(read):
    registry = read(
        """
        ARMS = (
            Arm(name="b", label="b", weight=1, needs=(),
                prose="p", sql="s"),
            Arm(name="a", label="a", weight=1, needs=(),
                prose="p", sql="s"),
        )
        """
    )

    assert [arm.name for arm in registry.arms] == ["b", "a"]


@pytest.mark.parametrize("written", ["1.0", "1", "0.50", "2e-1", "+0.4"])
def test_keeps_the_weight_as_written(read, written):
    (arm,) = read(ONE_ARM.replace("weight=1.0", f"weight={written}")).arms

    assert arm.weight_text == written
    assert arm.weight == float(written)


def test_keeps_the_weight_as_written_after_wider_characters_on_its_line(read):
    # Python counts columns in UTF-8 bytes; the text is cut by them, not by characters.
    text = ONE_ARM.replace('label="full-text ranking",', "").replace(
        "weight=1.0,", 'label="ранжирование — ü", weight=0.25,'
    )

    (arm,) = read(text).arms

    assert (arm.label, arm.weight_text) == ("ранжирование — ü", "0.25")


def test_dedents_indented_prose_and_keeps_raw_prose(read):
    text = ONE_ARM.replace(
        'prose="Ranks by words."',
        'prose="""\n        First line.\n\n          Indented more.\n    """',
    )
    (arm,) = read(text).arms

    assert arm.prose == "First line.\n\n  Indented more."
    assert arm.raw_prose.startswith("\n        First line.")


def test_keeps_sql_exactly_as_written(read):
    (arm,) = read(ONE_ARM.replace('sql="SELECT 1"', 'sql="""\nSELECT path\n  FROM f\n"""')).arms

    assert arm.sql == "\nSELECT path\n  FROM f\n"


def test_gives_each_entry_its_line_range(read):
    (arm,) = read(ONE_ARM).arms

    assert (arm.start_line, arm.end_line) == (4, 13)
    assert arm.field_lines["prose"] == 10


def test_reads_the_module_docstring(read):
    assert read(ONE_ARM).docstring == "Why the arms are data."


def test_a_registry_without_docstring_reads_as_none(read):
    assert read(ONE_ARM.replace('"""Why the arms are data."""', "")).docstring is None


def test_reads_an_annotated_assignment(read):
    registry = read(ONE_ARM.replace("ARMS = (", "ARMS: tuple[Arm, ...] = ("))

    assert [arm.name for arm in registry.arms] == ["fts"]
    assert registry.line == 3


def test_reads_a_list_literal(read):
    text = ONE_ARM.replace("ARMS = (", "ARMS = [").replace("    ),\n)", "    ),\n]")

    assert [arm.name for arm in read(text).arms] == ["fts"]


def test_reads_a_registry_under_another_name(read):
    registry = read(ONE_ARM.replace("ARMS =", "RANKERS ="), variable="RANKERS")

    assert registry.variable == "RANKERS"


def test_implicitly_concatenated_strings_are_literals(read):
    (arm,) = read(ONE_ARM.replace('prose="Ranks by words."', 'prose="Ranks " "by words."')).arms

    assert arm.prose == "Ranks by words."


def test_accepts_a_qualified_arm_call(read):
    (arm,) = read(ONE_ARM.replace("Arm(", "arms.Arm(")).arms

    assert arm.name == "fts"


def test_ignores_everything_but_the_registry(read):
    text = ONE_ARM + "\nOTHER = compute()\n\ndef helper():\n    ARMS = None\n"

    assert [arm.name for arm in read(text).arms] == ["fts"]


# Errors: each names the file and the line to fix.


def test_error_reads_file_line_message():
    error = RegistryError("src/engine/arms.py", 12, "something is wrong")

    assert str(error) == "src/engine/arms.py:12: something is wrong"


def test_registry_that_is_not_a_literal(read):
    error = fails(read, ONE_ARM.replace("ARMS = (", "ARMS = tuple(make_arms()) or (", 1))

    assert (error.file, error.line) == ("arms.py", 3)
    assert "must be a tuple or list literal" in error.message


def test_registry_built_by_a_comprehension(read):
    error = fails(read, "ARMS = tuple(Arm(name=n) for n in NAMES)\n")

    assert error.line == 1
    assert "tuple or list literal" in error.message


def test_missing_registry_variable(read):
    error = fails(read, ONE_ARM.replace("ARMS =", "RANKERS ="))

    assert (error.file, error.line) == ("arms.py", None)
    assert "no module-level assignment to ARMS" in error.message
    assert "`variable` option" in error.message


def test_registry_assigned_twice(read):
    error = fails(read, ONE_ARM + "ARMS = ARMS + ()\n")

    assert error.line == 15
    assert "assigned again (first on line 3)" in error.message


def test_unpacked_entries(read):
    error = fails(read, "ARMS = (*BASE_ARMS,)\n")

    assert error.line == 1
    assert "unpacks entries" in error.message


def test_entry_that_is_not_an_arm_call(read):
    error = fails(read, "ARMS = (\n    make_arm('fts'),\n)\n")

    assert error.line == 2
    assert "is not an Arm(...) call" in error.message


def test_non_literal_field_value(read):
    error = fails(read, ONE_ARM.replace("weight=1.0", "weight=DEFAULT_WEIGHT"))

    assert error.line == 6
    assert "field 'weight' is `DEFAULT_WEIGHT`, not a number literal" in error.message


def test_computed_weight_is_not_a_literal(read):
    error = fails(read, ONE_ARM.replace("weight=1.0", "weight=1.0 / 2"))

    assert error.line == 6
    assert "not a number literal" in error.message


def test_f_string_prose_is_not_a_literal(read):
    error = fails(read, ONE_ARM.replace('prose="Ranks by words."', 'prose=f"Ranks by {X}."'))

    assert error.line == 10
    assert "not a string literal" in error.message


def test_literal_of_the_wrong_type(read):
    error = fails(read, ONE_ARM.replace('"query_terms",', '"query_terms", 3,'))

    assert error.line == 8
    assert "field 'needs' is `(" in error.message
    assert "not a tuple of string literals" in error.message


def test_a_need_that_is_not_an_input_is_refused_on_its_line(read):
    error = fails(read, ONE_ARM.replace('"query_terms",', '"query_words",'))

    assert error.line == 8
    assert "needs 'query_words', which is not an input; the inputs are query_terms" in error.message


@pytest.mark.parametrize("prose", ['""', '"   "', '"""\n\n"""'])
def test_arm_with_empty_prose(read, prose):
    error = fails(read, ONE_ARM.replace('"Ranks by words."', prose))

    assert error.line == 10
    assert "arm 'fts' has no prose" in error.message


def test_arm_without_prose_field(read):
    error = fails(read, ONE_ARM.replace('        prose="Ranks by words.",\n', ""))

    assert error.line == 4
    assert "Arm(...) is missing prose" in error.message


@pytest.mark.parametrize(
    ("label", "problem"),
    [('""', "empty"), ('"  "', "empty"), ('"full-text\\nranking"', "not on one line")],
)
def test_a_label_a_user_cannot_read_on_one_line_is_refused_on_its_line(read, label, problem):
    error = fails(read, ONE_ARM.replace('label="full-text ranking"', f"label={label}"))

    assert error.line == 12
    assert problem in error.message
    assert "; a label is a few plain words on one line" in error.message


def test_arm_without_a_label_is_missing_it(read):
    error = fails(read, ONE_ARM.replace('        label="full-text ranking",\n', ""))

    assert "Arm(...) is missing label" in error.message


def test_arm_with_empty_sql(read):
    error = fails(read, ONE_ARM.replace('sql="SELECT 1"', 'sql=""'))

    assert error.line == 11
    assert "arm 'fts' has no SQL" in error.message


def test_unknown_field(read):
    error = fails(read, ONE_ARM.replace("weight=1.0,", "weight=1.0,\n        boost=2.0,"))

    assert error.line == 7
    assert "unknown field 'boost'" in error.message
    assert "the fields are name, label, weight" in error.message


def test_field_given_twice(read):
    error = fails(read, ONE_ARM.replace("weight=1.0,", "weight=1.0,\n        weight=2.0,"))

    assert error.line == 7
    assert "field 'weight' is given twice" in error.message


def test_positional_argument(read):
    error = fails(read, ONE_ARM.replace('name="fts"', '"fts"'))

    assert error.line == 5
    assert "positional argument" in error.message


def test_duplicate_arm_name(read):
    text = ONE_ARM.replace("    ),\n)", "    ),\n" + ONE_ARM.split("ARMS = (\n")[1])

    error = fails(read, text)

    assert error.line == 15
    assert "duplicate arm name 'fts' (first defined on line 5)" in error.message


def test_arm_name_that_cannot_be_an_sql_identifier(read):
    error = fails(read, ONE_ARM.replace('name="fts"', 'name="full text"'))

    assert error.line == 5
    assert "cannot be part of a SQL identifier" in error.message


def test_arm_name_with_a_leading_underscore_is_refused_on_its_own_line(read):
    error = fails(read, ONE_ARM.replace('name="fts"', 'name="_fts"'))

    assert error.line == 5
    assert error.message == (
        "arm name '_fts' cannot be part of a SQL identifier; a name starts with a lower-case "
        "letter and holds only lower-case letters, digits and _"
    )


def test_the_reader_and_the_assembler_share_one_name_rule(read):
    from engine.ranking.arm_rules import NAME_PATTERN

    for name in ("fts", "title_len", "a1", "_fts", "1fts", "Fts", "title-len", "é"):
        try:
            read(ONE_ARM.replace('name="fts"', f'name="{name}"'))
            accepted = True
        except RegistryError:
            accepted = False
        assert accepted == bool(NAME_PATTERN.fullmatch(name)), name


@pytest.mark.parametrize("digits", [401, 5000])
def test_a_weight_too_large_for_a_number_is_an_error_on_its_line(read, digits):
    error = fails(read, ONE_ARM.replace("weight=1.0", f"weight=1{'0' * (digits - 1)}"))

    assert error.line == 6
    assert "too large for a number" in error.message
    assert error.message.endswith("; a weight is a finite number >= 0")
    assert len(error.message) < 200


def test_negative_weight(read):
    error = fails(read, ONE_ARM.replace("weight=1.0", "weight=-0.5"))

    assert error.line == 6
    assert "weight -0.5, which is negative; a weight is a finite number >= 0" in error.message


def test_empty_registry(read):
    error = fails(read, "ARMS = ()\n")

    assert error.line == 1
    assert "holds no arms" in error.message


def test_syntax_error_names_its_line(read):
    error = fails(read, ONE_ARM.replace("weight=1.0,", "weight=1.0 +,"))

    assert error.line == 6
    assert "not valid Python" in error.message


def test_missing_registry_file(tmp_path: Path):
    with pytest.raises(RegistryError) as caught:
        read_registry(tmp_path / "arms.py", display="src/engine/arms.py")

    assert str(caught.value).startswith("src/engine/arms.py: no such file")


def test_an_offset_into_triple_quoted_sql_maps_to_its_line_in_the_file(read):
    text = ONE_ARM.replace('sql="SELECT 1"', 'sql="""\nSELECT 1\nFROM files\n"""')

    (arm,) = read(text).arms

    assert (arm.sql_line(), arm.sql_line(arm.sql.index("FROM"))) == (11, 13)


@pytest.mark.parametrize(
    "literal", ['"SELECT 1\\nFROM files"', '"SELECT 1\\n" "FROM files"'], ids=["escape", "concat"]
)
def test_an_offset_into_sql_that_is_not_verbatim_maps_to_the_sql_line(read, literal):
    (arm,) = read(ONE_ARM.replace('sql="SELECT 1"', f"sql={literal}")).arms

    assert arm.sql_line(arm.sql.index("FROM")) == 11


def test_reads_an_arms_postgresql_sql_with_its_line(read):
    (arm,) = read(
        ONE_ARM.replace('sql="SELECT 1",', 'sql="SELECT 1",\n            pg_sql="SELECT 2",')
    ).arms

    assert (arm.sql, arm.pg_sql) == ("SELECT 1", "SELECT 2")
    assert arm.field_lines["pg_sql"] == arm.field_lines["sql"] + 1


def test_an_arm_without_postgresql_sql_reads_as_having_none(read):
    (arm,) = read(ONE_ARM).arms

    assert arm.pg_sql == ""


def test_postgresql_sql_must_be_a_literal_too(read):
    error = fails(
        read, ONE_ARM.replace('sql="SELECT 1",', 'sql="SELECT 1",\n            pg_sql=SQL,')
    )

    assert "field 'pg_sql' is `SQL`, not a string literal" in error.message


def test_a_fields_span_runs_from_its_opening_to_its_closing_quotes(read):
    with_pg = 'sql="SELECT 1",\n            pg_sql="""\nSELECT 2\n""",'
    (arm,) = read(ONE_ARM.replace('sql="SELECT 1",', with_pg)).arms

    start = arm.field_lines["pg_sql"]
    assert arm.field_span("pg_sql") == (start, start + 2)
    assert arm.field_span("sql") == (start - 1, start - 1)


def test_a_field_the_entry_leaves_out_has_no_span(read):
    (arm,) = read(ONE_ARM).arms

    assert arm.field_span("pg_sql") is None
