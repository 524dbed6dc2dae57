"""``config.toml`` is checked as a whole, for every command: no typo is silently ignored, no
value of the wrong type is coerced, and every error names the file and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.arms import ARMS
from engine.cli import cli
from engine.files.config import SETTINGS, Config, ConfigError, load_config
from engine.files.store import open_store
from engine.indexing.embedder import DEFAULT_MODEL

DOCS = Path(__file__).resolve().parents[2] / "docs"


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_for(tmp_path: Path, text: str) -> str:
    path = config_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "\n" not in message
    return message.removeprefix(f"{path}: ")


def test_a_missing_file_means_the_defaults(tmp_path):
    assert load_config(tmp_path / "config.toml") == Config()


def test_a_config_that_is_a_link_to_nothing_is_an_error_not_the_defaults(tmp_path):
    # A team store's [database] url lives in this file: read as absent, the store would
    # quietly be indexed into local SQLite files instead.
    path = tmp_path / "config.toml"
    path.symlink_to(tmp_path / "shared" / "memsift.toml")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: a link to {tmp_path / 'shared' / 'memsift.toml'}, which does not exist; "
        "point it at the TOML file, or delete it for the defaults"
    )


def test_a_config_that_is_a_folder_is_an_error_not_the_defaults(tmp_path):
    path = tmp_path / "config.toml"
    path.mkdir()
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (
        f"{path}: a folder, not a TOML file; move it away (memsift reads its settings from "
        "a file of this name)"
    )


def test_a_complete_valid_file_is_read(tmp_path):
    text = (
        "[weights]\nfts = 1\nrecency = 0.25\nsalience = 0\n"
        '[embedder]\nmodel = "none"\n[limits]\nmax_file_bytes = 1024\n'
    )
    config = load_config(config_file(tmp_path, text))
    assert config.weights == {"fts": 1.0, "recency": 0.25, "salience": 0.0}
    assert (config.model, config.max_file_bytes) == (None, 1024)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[weight]\nfts = 1\n", "[weight]: unknown section; did you mean [weights]?"),
        ('[embeder]\nmodel = "x"\n', "[embeder]: unknown section; did you mean [embedder]?"),
        (
            "[mystery]\nx = 1\n",
            "[mystery]: unknown section; valid ones are "
            "[weights], [embedder], [limits], [database]",
        ),
        ('[embedder]\nmodle = "x"\n', "[embedder] modle: unknown key; did you mean model?"),
        (
            "[limits]\nmax_results = 5\n",
            "[limits] max_results: unknown key; [limits] accepts max_file_bytes, "
            "embed_chunks_per_file, min_similarity, withhold_unseen",
        ),
        ("[weights]\nftz = 1\n", "[weights] ftz: unknown arm; did you mean fts?"),
        (
            "[weights]\npopularity = 1\n",
            "[weights] popularity: unknown arm; [weights] accepts fts, vector, recency, salience, "
            "time",
        ),
        (
            '[limits]\nmodel = "x"\n',
            "[limits] model: unknown key here; did you mean [embedder] model?",
        ),
        ('model = "x"\n', 'model = "x": outside any section; did you mean [embedder] model?'),
        (
            "weights = 3\n",
            "weights = 3: must be a section: write [weights] on its own line, then key = value "
            "lines",
        ),
    ],
)
def test_unknown_names_are_errors_with_the_nearest_valid_name(tmp_path, text, message):
    assert error_for(tmp_path, text) == message


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("inf", "inf"),
        ("-inf", "-inf"),
        ("nan", "nan"),
        ("1e400", "inf"),
        ("9" * 400, "99999999… (400 digits)"),
        ("-1", "-1"),
        ("true", "true"),
        ('"1.0"', '"1.0"'),
        ("[1]", "[1]"),
    ],
)
def test_a_weight_must_be_a_finite_number_at_least_zero(tmp_path, value, shown):
    message = error_for(tmp_path, f"[weights]\nfts = {value}\n")
    assert message.startswith(f"[weights] fts = {shown}: must be a finite number >= 0")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("true", "must be a whole number of bytes"),
        ("1.5", "must be a whole number of bytes"),
        ('"5MB"', "must be a whole number of bytes"),
        ("0", "must be at least 1"),
        ("-10", "must be at least 1"),
    ],
)
def test_max_file_bytes_must_be_a_positive_integer_and_not_a_boolean(tmp_path, value, problem):
    message = error_for(tmp_path, f"[limits]\nmax_file_bytes = {value}\n")
    assert message.startswith(f"[limits] max_file_bytes = {value}: {problem}")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("true", "must be a whole number"),
        ("2.5", "must be a whole number"),
        ("0", "must be at least 1"),
    ],
)
def test_the_embedding_budget_must_be_a_positive_whole_number(tmp_path, value, problem):
    message = error_for(tmp_path, f"[limits]\nembed_chunks_per_file = {value}\n")
    assert message.startswith(f"[limits] embed_chunks_per_file = {value}: {problem}")


@pytest.mark.parametrize("key", ["embed_chunks_per_file", "max_file_bytes"])
@pytest.mark.parametrize("value", ["9223372036854775808", "9" * 20])
def test_a_limit_past_64_bits_is_named_not_an_overflow_later(tmp_path, key, value):
    # tomllib reads any whole number; SQLite and PostgreSQL bind at most 2**63 - 1.
    message = error_for(tmp_path, f"[limits]\n{key} = {value}\n")
    assert message.startswith(f"[limits] {key} = ")
    assert "must be at most 9223372036854775807" in message


def test_the_largest_64_bit_limit_is_accepted(tmp_path):
    (tmp_path / "config.toml").write_text("[limits]\nembed_chunks_per_file = 9223372036854775807\n")
    assert load_config(tmp_path / "config.toml").embed_chunks_per_file == 2**63 - 1


def test_the_embedding_budget_is_read_from_limits(tmp_path):
    (tmp_path / "config.toml").write_text("[limits]\nembed_chunks_per_file = 7\n")
    assert load_config(tmp_path / "config.toml").embed_chunks_per_file == 7


@pytest.mark.parametrize(("value", "problem"), [("1", "must be a string"), ('""', "empty")])
def test_the_model_must_be_a_name(tmp_path, value, problem):
    assert problem in error_for(tmp_path, f"[embedder]\nmodel = {value}\n")


def test_a_number_too_long_to_parse_is_invalid_toml_not_a_crash(tmp_path):
    assert error_for(tmp_path, "[weights]\nfts = " + "9" * 5000 + "\n").startswith("not valid TOML")


def test_every_weight_key_is_an_arm_of_the_registry():
    weights = [s.key for s in SETTINGS if s.section == "weights"]
    assert weights == [arm.name for arm in ARMS]


def test_the_defaults_in_the_table_match_the_config():
    table = {(s.section, s.key): s.default for s in SETTINGS}
    assert table[("embedder", "model")] == f'"{DEFAULT_MODEL}"'
    assert table[("limits", "max_file_bytes")] == str(Config().max_file_bytes)


def test_the_configuration_docs_list_every_setting():
    page = (DOCS / "concepts" / "index-and-state.md").read_text(encoding="utf-8")
    section = page[page.index("## Configuration") :]
    for setting in SETTINGS:
        assert f"`[{setting.section}]`" in section, setting.section
        assert re.search(rf"`{setting.key}`", section), setting.key


DEEP = 10_000


@pytest.mark.parametrize(
    "value",
    ["[" * DEEP + "]" * DEEP, "{a = " * DEEP + "1" + "}" * DEEP],
    ids=["arrays", "inline tables"],
)
def test_a_config_nested_10000_deep_is_an_error_naming_the_file(tmp_path, value):
    """tomllib recurses once per level and raises RecursionError, which is no TOML error."""
    (tmp_path / ".memsift").mkdir()
    config = tmp_path / ".memsift" / "config.toml"
    config.write_text(f"[weights]\nfts = {value}\n")
    result = CliRunner().invoke(cli, ["--store", str(tmp_path), "status"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"memsift: {config}: arrays or inline tables nested too deeply to read (no setting "
        "nests more than one level); fix or delete the file\n"
    )


def test_a_value_dotted_keys_nest_10000_deep_is_shown_a_few_levels_deep(tmp_path):
    """Dotted keys nest without recursing in tomllib, but ``str`` of the table they make
    raises RecursionError; the message shows the first levels."""
    message = error_for(tmp_path, "[limits]\nmax_file_bytes" + ".a" * DEEP + " = 1\n")
    assert message == (
        "[limits] max_file_bytes = {'a': {'a': {'a': {...}}}}: must be a whole number of bytes "
        "(not a boolean or a string)"
    )


def test_opening_a_store_checks_its_config(tmp_path):
    (tmp_path / ".memsift").mkdir()
    (tmp_path / ".memsift" / "config.toml").write_text("[weight]\nfts = 1\n")
    with pytest.raises(ConfigError, match=r"config\.toml: \[weight\]: unknown section"):
        open_store(tmp_path)


@pytest.mark.parametrize(
    "command",
    [
        ("index", "--no-embed"),
        ("search", "alpha"),
        ("read", "a.md"),
        ("reinforce", "a.md", "--outcome", "1"),
        ("status",),
        ("state", "prune", "--dry-run"),
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_every_command_refuses_a_bad_config_naming_the_file_and_key(tmp_path, command):
    (tmp_path / "a.md").write_text("# Alpha\n\nalpha\n")
    (tmp_path / ".memsift").mkdir()
    config = tmp_path / ".memsift" / "config.toml"
    config.write_text("[limits]\nmax_file_bytes = true\n")
    result = CliRunner().invoke(cli, ["--store", str(tmp_path), *command])
    assert result.exit_code == 2
    assert result.stderr == (
        f"memsift: {config}: [limits] max_file_bytes = true: must be a whole number of bytes "
        "(not a boolean or a string)\n"
    )
    assert not (tmp_path / ".memsift" / "state.db").exists()
    assert not (tmp_path / ".memsift" / "index.db").exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[database]\nurl = "mysql://db/team"\n', "must be a PostgreSQL URL"),
        ("[database]\nurl = 5432\n", "must be a string"),
        ('[database]\nschema = "Team-A"\n', "must be a lower-case word"),
        ('[database]\nschema = "pg_team"\n', "must not start with pg_"),
        ('[database]\nschema = "x; DROP TABLE files"\n', "must be a lower-case word"),
    ],
)
def test_the_database_settings_are_checked(tmp_path, text, problem):
    assert problem in error_for(tmp_path, text)


def test_the_database_settings_are_read(tmp_path):
    path = config_file(tmp_path, '[database]\nurl = "postgresql://db/team"\nschema = "team_a"\n')

    config = load_config(path)
    assert (config.database_url, config.database_schema) == ("postgresql://db/team", "team_a")


def test_no_database_setting_means_the_sqlite_files(tmp_path):
    assert (Config().database_url, Config().database_schema) == (None, "memsift")


def test_the_environment_url_wins_and_is_checked(monkeypatch):
    from engine.pg.target import TargetError, database_target

    config = Config(database_url="postgresql://file/db")
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "postgresql://env/db")
    assert database_target(config).url == "postgresql://env/db"
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "sqlite:///x.db")
    with pytest.raises(TargetError, match=r"^MEMSIFT_DATABASE_URL must be a PostgreSQL URL"):
        database_target(config)
    monkeypatch.setenv("MEMSIFT_DATABASE_URL", "")
    assert database_target(config).url == "postgresql://file/db"
