"""Does a search answer nothing when the store holds no answer, and never when it holds one?

Three stores of real documents nobody on this project wrote (see ``abstention_corpora.py``):
the installed Python packages' descriptions and docs, Debian's docs under /usr/share/doc, and
one REALTALK conversation from ../shared/data. Each is written as a memsift store of Markdown
files in a cache folder, indexed by the real indexer with the default embedder, and asked this
project's own questions (``benchmarks/abstention/<corpus>.json``): answerable ones, each naming
the file whose text answers it, and foreign ones that nothing in the store answers (nonsense
word strings, off-topic everyday questions, people and things the corpus never mentions, and
near misses in the corpus's own domain).

Every question goes through the normal search twice: with today's fixed floor
(``--min-similarity 0.25``) and with the floor the store's own configuration gives (the store
floor, unless ``[limits] min_similarity`` is set). Per corpus and floor: foreign questions
answered (the goal: at most 10 %), answerable questions silenced (the goal: none), and how many
answerable questions have their file in the top 10 when the search answers at all.

    python benchmarks/abstention.py                  # every corpus, writes results/abstention.json
    python benchmarks/abstention.py --corpus chat    # one corpus (writes nothing unless --out)
    python benchmarks/abstention.py --cache DIR      # where the stores are kept between runs
    python benchmarks/abstention.py --questions benchmarks/abstention/held-out --out FILE
                                                     # the held-out lists (see their "about")
    python benchmarks/abstention.py --data DIR       # the evaluation sets, when not beside the
                                                     # checkout (a worktree elsewhere)

A corpus that comes out empty (the chat set not found, no Python docs installed) stops the run
with the place it looked: measured on no documents, every foreign question would count as
withheld by nothing and every answerable one as missing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from abstention_corpora import Corpus, chat_docs, debian_docs, memory_text, python_docs
from stamp import make_stamp

from engine.files.store import open_store
from engine.indexing.indexer import index_store
from engine.measure.results_schema import (
    ABSTENTION,
    AbstentionCorpus,
    AbstentionResults,
    FloorOutcome,
    QuestionOutcome,
    write_results,
)
from engine.ranking.coverage import WORDS_RULE
from engine.search import Searcher

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
QUESTIONS = REPO / "benchmarks" / "abstention"
#: Questions written after the lists above and before any rule was chosen on them, kept apart
#: so a rule tuned on the first lists can be checked on questions it never saw.
HELD_OUT = QUESTIONS / "held-out"
OUT = REPO / "benchmarks" / "results" / ABSTENTION.name
#: Today's floor before the store floor: the fixed default of ``[limits] min_similarity``.
FIXED_FLOOR = 0.25
CHAT_SET = "realtalk/chat-01"
#: The rules every question is asked under: (label, floor, coverage test). "fixed" is the old
#: default floor; "store" the store's own floor alone (``[limits] withhold_unseen = false``);
#: "words" the store floor and the coverage test's words rule alone (``withhold_unseen =
#: "words"``, the default before names spelt otherwise counted as written); "default" today's
#: default, the store floor and both rules of the coverage test (``withhold_unseen`` unset).
RULES: tuple[tuple[str, float | None, bool | str | None], ...] = (
    ("fixed", FIXED_FLOOR, False),
    ("store", None, False),
    ("words", None, WORDS_RULE),
    ("default", None, None),
)
#: How each rule's coverage test is said beside its floor.
COVERAGE_TEXT: dict[bool | str | None, str] = {
    False: "",
    WORDS_RULE: " and the coverage test's words rule",
    None: " and the coverage test (names and words)",
}
#: One mtime for every written file, so a kept store re-indexes nothing on the next run.
CORPUS_MTIME_NS = 1_700_000_000 * 10**9


@dataclass(frozen=True)
class Source:
    name: str
    what: str
    #: The corpus, given the folder of the evaluation sets (only the chat corpus reads it).
    build: Callable[[Path], Corpus]


SOURCES = (
    Source(
        "python",
        "the installed Python packages' METADATA descriptions and shipped .md/.rst/.txt docs "
        "(the benchmark's own virtual environment)",
        lambda data: python_docs(),
    ),
    Source(
        "debian",
        "READMEs, Markdown and copyright files under /usr/share/doc (decompressed)",
        lambda data: debian_docs(),
    ),
    Source(
        "chat",
        f"one REALTALK conversation ({CHAT_SET}), one message a memory",
        lambda data: chat_docs(data / CHAT_SET),
    ),
)


def write_store(root: Path, corpus: Corpus) -> None:
    """The corpus as Markdown memory files under ``root``; files of an earlier corpus that are
    no longer in it are removed (only ``.md`` files this benchmark wrote live there)."""
    root.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for key, (title, text) in corpus.items():
        path = root / key
        wanted.add(path)
        content = memory_text(title, text)
        if not path.is_file() or path.read_text(encoding="utf-8") != content:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            os.utime(path, ns=(CORPUS_MTIME_NS, CORPUS_MTIME_NS))
    for stale in root.rglob("*.md"):
        if stale not in wanted and ".memsift" not in stale.parts:
            stale.unlink()


def load_questions(name: str, folder: Path = QUESTIONS) -> dict[str, list[dict[str, str]]]:
    return json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))


class EmptyCorpus(Exception):
    """A corpus with no document: nothing to measure abstention on."""


def build_corpus(source: Source, data: Path) -> Corpus:
    """The source's documents; :class:`EmptyCorpus` naming where they were looked for when
    there are none (a chat set not beside this checkout, no docs installed)."""
    corpus = source.build(data)
    if corpus:
        return corpus
    if source.name == "chat":
        raise EmptyCorpus(
            f"chat: no messages in {data / CHAT_SET / 'corpus.jsonl'}; give the folder of "
            "the evaluation sets with --data"
        )
    raise EmptyCorpus(f"{source.name}: no documents found ({source.what})")


def ask(
    searcher: Searcher,
    question: str,
    floor: float | None,
    expect: str | None,
    unseen: bool | str | None,
) -> QuestionOutcome:
    result = searcher.search(question, limit=10, min_similarity=floor, withhold_unseen=unseen)
    paths = [hit.path for hit in result.hits]
    return QuestionOutcome(
        question=question,
        answered=not result.abstained,
        fts_form=result.fts_form,
        best_similarity=result.best_similarity,
        expected_rank=(paths.index(expect) + 1) if expect in paths else None,
        floor=result.floor,
        withheld_by=result.withheld_by,
    )


def outcome(
    label: str,
    floor_text: str,
    answerable: list[QuestionOutcome],
    foreign: list[QuestionOutcome],
) -> FloorOutcome:
    return FloorOutcome(
        floor=label,
        floor_text=floor_text,
        foreign_answered=sum(q.answered for q in foreign),
        answerable_silenced=sum(not q.answered for q in answerable),
        expected_in_top_10=sum(q.expected_rank is not None for q in answerable),
        answerable=tuple(answerable),
        foreign=tuple(foreign),
    )


def measure(
    source: Source,
    cache: Path,
    say: Callable[[str], None],
    data: Path = DATA,
    questions_folder: Path = QUESTIONS,
) -> AbstentionCorpus:
    started = time.monotonic()
    corpus = build_corpus(source, data)
    root = cache / source.name
    write_store(root, corpus)
    store = open_store(root)
    say(f"{source.name}: {len(corpus)} documents, indexing")
    report = index_store(store)
    questions = load_questions(source.name, questions_folder)
    present = [q for q in questions["answerable"] if q["expect"] in corpus]
    missing = [q["expect"] for q in questions["answerable"] if q["expect"] not in corpus]
    floors: list[FloorOutcome] = []
    with Searcher(store) as searcher:
        for label, floor, unseen in RULES:
            answerable = [ask(searcher, q["q"], floor, q["expect"], unseen) for q in present]
            foreign = [ask(searcher, q["q"], floor, None, unseen) for q in questions["foreign"]]
            used = [q.floor for q in answerable + foreign if q.floor]
            text = floor_used(used, floor) + COVERAGE_TEXT[unseen]
            floors.append(outcome(label, text, answerable, foreign))
        chunks = int(store_meta(store).get("chunks") or 0)
    say(
        f"{source.name}: "
        + "; ".join(
            f"{f.floor}: foreign answered {f.foreign_answered}/{len(f.foreign)}, answerable "
            f"silenced {f.answerable_silenced}/{len(f.answerable)}, in top 10 "
            f"{f.expected_in_top_10}"
            for f in floors
        )
    )
    return AbstentionCorpus(
        name=source.name,
        source=source.what,
        documents=len(corpus),
        chunks=chunks,
        embedded_this_run=report.embedded,
        missing_expected=tuple(missing),
        floors=tuple(floors),
        seconds=round(time.monotonic() - started, 1),
    )


def floor_used(used: list[str], floor: float | None) -> str:
    """The floor as the searches reported it (a store floor names its origin)."""
    if floor is not None:
        return f"fixed {floor:g}, as before"
    return max(set(used), key=used.count) if used else "none needed"


def store_meta(store) -> dict[str, str]:  # type: ignore[no-untyped-def]
    from engine.sqlite.db import open_index_reader

    conn = open_index_reader(store.index_path)
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", choices=[s.name for s in SOURCES])
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "memsift-abstention"
    )
    parser.add_argument("--out", type=Path, default=None, help="the results file to write")
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the evaluation sets' folder (for the chat set)"
    )
    parser.add_argument(
        "--questions",
        type=Path,
        default=QUESTIONS,
        help=f"the folder of question lists (held out: {HELD_OUT.relative_to(REPO)})",
    )
    args = parser.parse_args(argv)
    chosen = [s for s in SOURCES if not args.corpus or s.name in args.corpus]
    os.environ.pop("MEMSIFT_DATABASE_URL", None)  # the stores are SQLite stores of the cache

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        corpora = tuple(
            measure(source, args.cache, say, args.data, args.questions) for source in chosen
        )
    except EmptyCorpus as exc:
        say(f"abstention: {exc}")
        return 2
    # The results file holds every corpus asked the project's own lists, nothing less.
    whole = not args.corpus and args.questions.resolve() == QUESTIONS.resolve()
    out = args.out or (OUT if whole else None)
    if out is None:
        say("a partial run (chosen corpora or other questions): nothing written (give --out)")
        return 0
    write_results(
        AbstentionResults(
            stamp=make_stamp(ABSTENTION.benchmark), fixed_floor=FIXED_FLOOR, corpora=corpora
        ),
        out,
    )
    say(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
