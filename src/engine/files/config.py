"""A store's trusted settings, ``.memsift/config.toml``, and the one table that says what it
may hold.

The file belongs to whoever owns the store: it may set what a search caller never can (arm
weights, the embedding model, the size limit for a memory). A typo in it must not be ignored:
``[weight]`` or ``modle`` silently doing nothing makes a user tune a setting that never takes
effect. So the whole file is checked once, when the store is opened, against :data:`SETTINGS`:
an unknown section or key is an error naming the nearest valid one, every value has a type (a
boolean is not a number, ``inf`` and ``nan`` are not weights), and every error names the file
and the key. The documentation's configuration table lists these same rows, and a test keeps
the two in step.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import reprlib
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from engine.arms import ARMS
from engine.indexing.default_model import DEFAULT_MODEL
from engine.ranking.arm_rules import weight_problem
from engine.ranking.coverage import WORDS_RULE
from engine.redact import hide_passwords_of, redact

#: What other packages (the docs plugin, the benchmarks) may rely on; the rest is internal.
__all__ = [
    "DEFAULT_EF_SEARCH",
    "DEFAULT_EMBED_CHUNKS_PER_FILE",
    "DEFAULT_WORK_MEM",
    "Config",
    "database_url",
]

DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
#: At most this many chunks of one file get a vector, every s-th (engine.indexing.budget); the
#: rest are found by full text only. Chosen by benchmarks/budget_lab.py on indexing.py's store of
#: 145 real documents (3,022 chunks, a 1,225-chunk copyright file among them): at 40 this rule
#: embeds 1,165 distinct texts, fewer than the first 32 chunks of each file did (1,190, a fully
#: indexed store at 0.39x the CPU of the code before budgets; issue 22: at most half), and ranks
#: deep answers higher through the vector arm alone (nDCG@10 of sentences drawn uniformly from
#: the big files' chunks 0.505 against 0.425, of their five-word gist 0.334 against 0.265;
#: 0.808 and 0.618 with every chunk embedded); fused, exact questions move by a question or two
#: (full text finds them). No document of any shared set has more than 9 chunks, so their
#: indexes are the same.
DEFAULT_EMBED_CHUNKS_PER_FILE = 40
#: The schema a team store's tables live in when config.toml names none.
DEFAULT_SCHEMA = "memsift"
#: How a team store's vector arm finds the nearest chunks: "exact" compares the query with
#: every vector; "hnsw" walks a pgvector HNSW graph (faster on large stores, approximate).
VECTOR_INDEXES = ("exact", "hnsw")
DEFAULT_VECTOR_INDEX = "exact"
#: pgvector's hnsw.ef_search for the search connection: the width of the walk through the
#: graph. pgvector's own default is 40; 100 found more of the exact nearest memories on every
#: store benchmarks/scale.py measured (see the Measured page).
DEFAULT_EF_SEARCH = 100
#: work_mem for a team store's searches. PostgreSQL's own default (4MB) turns the full-text
#: arm's bitmap of matching chunks lossy on a large store, and every chunk on a lossy page is
#: then read again and rechecked: on eight searches of a 1,000,000-memory store, three took
#: 3-4x as long as with 64MB and one 1.5x (the median 2.7 s against 1.1 s); four were as fast.
DEFAULT_WORK_MEM = "64MB"
MEMORY_AMOUNT = re.compile(r"[1-9][0-9]{0,6}(kB|MB|GB)")


class ConfigError(ValueError):
    """``config.toml`` is not valid; the message names the file, the key and the fix."""


def finite_weight(value: object) -> str | None:
    """A weight is a finite number >= 0 (0 drops the arm): the registry's own rule
    (:func:`engine.ranking.arm_rules.weight_problem`), worded for a configuration key."""
    problem = weight_problem(value)
    return None if problem is None else f"must be a finite number >= 0 ({problem})"


def model_name(value: object) -> str | None:
    if not isinstance(value, str):
        return 'must be a string: a model name, or "none"'
    if not value.strip():
        return 'must not be empty; write "none" for a lexical store'
    return None


def similarity_floor(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number between 0 and 1 (not a boolean or a string)"
    if not 0 <= float(value) <= 1:
        return "must be between 0 and 1 (0 never abstains)"
    return None


def boolean(value: object) -> str | None:
    if not isinstance(value, bool):
        return "must be true or false (not a string or a number)"
    return None


def unseen_rule(value: object) -> str | None:
    """What ``withhold_unseen`` may be, in config.toml and for one search: a bool, or "words"
    spelt so; the search reads any other value (0, "Words", "yes") as "both rules"."""
    if isinstance(value, bool) or value == WORDS_RULE:
        return None
    return 'must be true, false or "words" (the words rule alone)'


def database_url(value: object) -> str | None:
    """The URL itself is never part of the answer: it may hold a password."""
    if not isinstance(value, str):
        return "must be a string: a PostgreSQL URL such as postgresql://host/dbname"
    if not value.startswith(("postgresql://", "postgres://")):
        if "=" in value and "://" not in value:
            return (
                "is a keyword connection string (host=... dbname=...); write it as a URL: "
                "postgresql://host/dbname, with user:password@ before the host"
            )
        return "must be a PostgreSQL URL starting postgresql:// (or postgres://)"
    try:
        _ = urlsplit(value).port
    except ValueError:
        authority = value.split("://", 1)[1].split("/", 1)[0]
        if "@" not in authority and not authority.startswith("["):
            return (
                "has a port that is not a number, or user:password with no @host after it; "
                "write postgresql://host/dbname, with user:password@ before the host"
            )
        return "has a port that is not a number or an unclosed '[' in its host; check the URL"
    return None


#: A schema name is inlined into SQL as an identifier, so it is a plain lower-case word.
SCHEMA_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def schema_name(value: object) -> str | None:
    if not isinstance(value, str) or not SCHEMA_PATTERN.fullmatch(value):
        return (
            "must be a lower-case word of letters, digits and _ (at most 63), starting with a "
            "letter or _"
        )
    if value.startswith("pg_"):
        return "must not start with pg_ (PostgreSQL keeps those names for itself)"
    return None


def vector_index(value: object) -> str | None:
    if value not in VECTOR_INDEXES:
        return (
            'must be "exact" (compare with every vector, the default) or "hnsw" (an approximate '
            "pgvector index)"
        )
    return None


def ef_search(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return "must be a whole number from 1 to 1000 (not a boolean or a string)"
    if not 1 <= value <= 1000:
        return "must be from 1 to 1000 (pgvector's range for hnsw.ef_search)"
    return None


def memory_amount(value: object) -> str | None:
    if not isinstance(value, str) or not MEMORY_AMOUNT.fullmatch(value):
        return 'must be an amount of memory as PostgreSQL writes it, e.g. "64MB" (kB, MB or GB)'
    return None


#: The largest whole number a limit may be: TOML's own bound, which ``tomllib`` does not
#: enforce, and the largest both SQLite and PostgreSQL can bind (a larger one raised
#: OverflowError at the first statement that bound it).
LARGEST_WHOLE = 2**63 - 1


def positive_whole(unit: str = "") -> Callable[[object], str | None]:
    """A check of a whole number from 1 to :data:`LARGEST_WHOLE` (of ``unit``s, when the
    number counts something the message should name: "bytes")."""
    of = f" of {unit}" if unit else ""

    def check(value: object) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be a whole number{of} (not a boolean or a string)"
        if value < 1:
            return "must be at least 1"
        if value > LARGEST_WHOLE:
            return f"must be at most {LARGEST_WHOLE} (a 64-bit whole number)"
        return None

    return check


@dataclass(frozen=True)
class Setting:
    """One key ``config.toml`` accepts: where it goes, what it holds, what it does."""

    section: str
    key: str
    kind: str
    default: str
    doc: str
    check: Callable[[object], str | None] = field(repr=False, compare=False)


#: Every setting, in the order the documentation lists them. Arm weights come from the
#: registry, so a new arm is configurable (and documented as such) without touching this file.
SETTINGS: tuple[Setting, ...] = (
    *(
        Setting(
            "weights",
            arm.name,
            "number >= 0",
            repr(arm.weight),
            f"Weight of the {arm.name} arm in the fusion; 0 drops the arm.",
            finite_weight,
        )
        for arm in ARMS
    ),
    Setting(
        "embedder",
        "model",
        "string",
        f'"{DEFAULT_MODEL}"',
        'The embedding model for the vector arm; "none" makes a lexical-only store.',
        model_name,
    ),
    Setting(
        "limits",
        "max_file_bytes",
        "integer >= 1",
        str(DEFAULT_MAX_FILE_BYTES),
        "Files larger than this many bytes are skipped with a reason.",
        positive_whole("bytes"),
    ),
    Setting(
        "limits",
        "embed_chunks_per_file",
        "integer >= 1",
        str(DEFAULT_EMBED_CHUNKS_PER_FILE),
        "A file of more chunks gets at most this many vectors, on every s-th chunk from the "
        "first (s the smallest power of two leaving at most this many); the rest are found by "
        "full text only (status counts them). A huge file (a 5 MB log is thousands of chunks) "
        "then costs seconds of embedding instead of minutes, and a chunk left out whose text "
        "another chunk embeds shares that vector.",
        positive_whole(),
    ),
    Setting(
        "limits",
        "min_similarity",
        "number in [0, 1]",
        "none (the store's own floor)",
        "A search answers nothing when no memory holds every query word and none is this "
        "similar to the query; 0 always answers. Unset, the floor is measured on the store "
        "itself (how similar queries nothing in it answers get) and kept with the index.",
        similarity_floor,
    ),
    Setting(
        "limits",
        "withhold_unseen",
        'true, false or "words"',
        "unset (true)",
        "Unset or true, a search also answers nothing when the store never wrote what the "
        "query is about, unless a memory is 0.6 similar (the coverage test): a name the query "
        "gives that the store never wrote, not even spelt otherwise (\"Muhammad\" is taken for "
        "a chat's \"Muhhamed\", \"Aqib\" for \"Akib\"), or words it never wrote carrying half of "
        "the query when the memory nearest in meaning does not say them otherwise. \"words\" "
        "keeps the second rule alone (for questions that name things the store calls "
        "otherwise); false turns the test off.",
        unseen_rule,
    ),
    Setting(
        "database",
        "url",
        "string",
        "none (SQLite files in .memsift/)",
        "A PostgreSQL URL: the store's index and state plane live in that database instead of "
        "in .memsift/ (a team store); MEMSIFT_DATABASE_URL overrides it.",
        database_url,
    ),
    Setting(
        "database",
        "schema",
        "identifier",
        f'"{DEFAULT_SCHEMA}"',
        "The schema of that database holding this store's tables; stores sharing a database "
        "each name their own.",
        schema_name,
    ),
    Setting(
        "database",
        "vector_index",
        '"exact" or "hnsw"',
        f'"{DEFAULT_VECTOR_INDEX}"',
        'How a team store finds the nearest vectors: "exact" compares the query with each one; '
        '"hnsw" builds a pgvector HNSW index on the next `memsift index` (faster on large '
        "stores, approximate: status and search --json say so, the Measured page gives its "
        "recall). SQLite stores are always exact.",
        vector_index,
    ),
    Setting(
        "database",
        "hnsw_ef_search",
        "integer in [1, 1000]",
        str(DEFAULT_EF_SEARCH),
        'With vector_index = "hnsw": how wide a search walks the graph (pgvector\'s '
        "hnsw.ef_search); wider finds more of the true nearest, slower.",
        ef_search,
    ),
    Setting(
        "database",
        "work_mem",
        'amount such as "64MB"',
        f'"{DEFAULT_WORK_MEM}"',
        "Memory each sort, hash and bitmap of a team store's search may use (PostgreSQL's "
        "work_mem, set on the search connection only). Below about 64MB the full-text arm "
        "rechecks whole pages of chunks on a large store, and searches with common words took "
        "up to 4 times as long at 1,000,000 memories.",
        memory_amount,
    ),
)

SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(s.section for s in SETTINGS))


@dataclass(frozen=True)
class Config:
    """Trusted settings from ``.memsift/config.toml``."""

    weights: dict[str, float] = field(default_factory=dict)
    model: str | None = DEFAULT_MODEL
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    #: ``[limits] embed_chunks_per_file``: at most this many chunks of a file get a vector
    #: (:mod:`engine.indexing.budget`); the others are full-text only.
    embed_chunks_per_file: int = DEFAULT_EMBED_CHUNKS_PER_FILE
    #: The abstention floor set in ``[limits]``; None (unset): the store measures its own.
    min_similarity: float | None = None
    #: ``[limits] withhold_unseen``: which rules of the coverage test join the store floor
    #: (engine.ranking.coverage): None (unset) and True both, "words" the words rule alone,
    #: False none.
    withhold_unseen: bool | str | None = None
    #: A PostgreSQL URL from ``[database] url`` (MEMSIFT_DATABASE_URL is applied by the store).
    database_url: str | None = None
    database_schema: str = DEFAULT_SCHEMA
    vector_index: str = DEFAULT_VECTOR_INDEX
    hnsw_ef_search: int = DEFAULT_EF_SEARCH
    work_mem: str = DEFAULT_WORK_MEM


def load_config(path: Path) -> Config:
    """Read and check ``config.toml``; a missing file means defaults, a broken one is an error
    naming the file and the key."""
    if (problem := not_a_file(path)) is not None:
        if problem == "":
            return Config()
        raise ConfigError(f"{path}: {problem}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}); fix or delete the file") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise ConfigError(
            f"{path}: arrays or inline tables nested too deeply to read (no setting nests "
            "more than one level); fix or delete the file"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    database = data.get("database")
    hide_passwords_of(database.get("url") if isinstance(database, dict) else None)
    problem = first_problem(data)
    if problem:
        raise ConfigError(f"{path}: {problem}")
    weights = data.get("weights", {})
    model = data.get("embedder", {}).get("model", DEFAULT_MODEL)
    return Config(
        weights={name: float(value) for name, value in weights.items()},
        model=None if model == "none" else model,
        max_file_bytes=data.get("limits", {}).get("max_file_bytes", DEFAULT_MAX_FILE_BYTES),
        embed_chunks_per_file=data.get("limits", {}).get(
            "embed_chunks_per_file", DEFAULT_EMBED_CHUNKS_PER_FILE
        ),
        min_similarity=configured_floor(data.get("limits", {}).get("min_similarity")),
        withhold_unseen=data.get("limits", {}).get("withhold_unseen"),
        database_url=data.get("database", {}).get("url"),
        database_schema=data.get("database", {}).get("schema", DEFAULT_SCHEMA),
        vector_index=data.get("database", {}).get("vector_index", DEFAULT_VECTOR_INDEX),
        hnsw_ef_search=data.get("database", {}).get("hnsw_ef_search", DEFAULT_EF_SEARCH),
        work_mem=data.get("database", {}).get("work_mem", DEFAULT_WORK_MEM),
    )


def not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as the configuration: "" when there is none at all (the
    defaults), None when it is a file (or a link to one). Anything else in its place is an
    error, never the defaults: a team store's ``[database] url`` lives in this file, and read as
    absent (a link to a share not mounted) the store would quietly be indexed into local
    SQLite files instead; a pipe would never finish reading."""
    try:
        info = path.stat()
    except FileNotFoundError:
        if not path.is_symlink():
            return ""
        return (
            f"a link to {os.readlink(path)}, which does not exist; point it at the TOML "
            "file, or delete it for the defaults"
        )
    except OSError as exc:
        return f"cannot read it ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return (
            "a folder, not a TOML file; move it away (memsift reads its settings from a file "
            "of this name)"
        )
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (a pipe or a device); make it a TOML file, or delete it"
    return None


def configured_floor(value: object) -> float | None:
    """``[limits] min_similarity`` as a number, or None when the file does not set it: unset
    and set to any value (even the old default) are different things, since unset means the
    store's own floor."""
    return None if value is None else float(value)  # type: ignore[arg-type]


def first_problem(data: dict[str, object]) -> str | None:
    """What is wrong with parsed ``config.toml`` content, starting with ``[section] key``, or
    None when every section, key and value is valid."""
    by_section = {
        section: {s.key: s for s in SETTINGS if s.section == section} for section in SECTIONS
    }
    for section, table in data.items():
        if not isinstance(table, dict):
            if section in by_section:
                return (
                    f"{section} = {shown(table)}: must be a section: write [{section}] on its "
                    "own line, then key = value lines"
                )
            return f"{section} = {shown(table)}: {misplaced_key(section)}"
        if section not in by_section:
            return f"[{section}]: unknown section; {suggest(section, SECTIONS, '[', ']')}"
        settings = by_section[section]
        for key, value in table.items():
            setting = settings.get(key)
            if setting is None:
                return f"[{section}] {key}: {unknown_key(section, key, tuple(settings))}"
            problem = setting.check(value)
            if problem:
                return f"[{section}] {key} = {shown(value)}: {problem}"
    return None


def unknown_key(section: str, key: str, valid: tuple[str, ...]) -> str:
    what = "unknown arm" if section == "weights" else "unknown key"
    close = difflib.get_close_matches(key, valid, n=1)
    if close:
        return f"{what}; did you mean {close[0]}?"
    elsewhere = [s for s in SETTINGS if s.key == key]
    if elsewhere:
        return f"{what} here; did you mean [{elsewhere[0].section}] {key}?"
    return f"{what}; [{section}] accepts {', '.join(valid)}"


def misplaced_key(key: str) -> str:
    """A ``key = value`` line above every section header."""
    owners = [s for s in SETTINGS if s.key == key]
    close = difflib.get_close_matches(key, [s.key for s in SETTINGS], n=1)
    if not owners and close:
        owners = [s for s in SETTINGS if s.key == close[0]]
    if owners:
        return f"outside any section; did you mean [{owners[0].section}] {owners[0].key}?"
    return f"outside any section; sections are {', '.join(f'[{s}]' for s in SECTIONS)}"


def suggest(name: str, valid: tuple[str, ...], before: str = "", after: str = "") -> str:
    close = difflib.get_close_matches(name, valid, n=1)
    if close:
        return f"did you mean {before}{close[0]}{after}?"
    return "valid ones are " + ", ".join(f"{before}{v}{after}" for v in valid)


def shown(value: object) -> str:
    """A value as it was written in TOML, kept short (a 400-digit number is not echoed), any
    password in it redacted before it is cut (a cut password would no longer be recognised)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int) and abs(value) >= 10**15:
        digits = len(str(abs(value)))
        return f"{str(value)[:8]}… ({digits} digits)"
    text = f'"{redact(value)}"' if isinstance(value, str) else redact(SHORT.repr(value))
    return text if len(text) <= 40 else text[:39] + "…"


#: Shows a list or a table a few levels deep: ``str`` of a table that dotted keys nest 10,000
#: levels deep (``a.a.a…= 1``, which tomllib reads without recursing) raises RecursionError.
SHORT = reprlib.Repr()
SHORT.maxlevel, SHORT.maxlist, SHORT.maxdict, SHORT.maxstring, SHORT.maxother = 3, 20, 20, 40, 40
