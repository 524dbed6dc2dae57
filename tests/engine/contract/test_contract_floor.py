"""The store floor, on SQLite and on PostgreSQL: abstention's similarity floor is measured on the
store itself (engine.floor), kept with its index, measured again when the store changes enough,
and overridden by a floor set for one search or in config.toml.

The embedder puts texts at chosen angles, so every similarity below is exact: memories of the
"near" store sit 0.71 from the probes (its floor is the highest allowed, 0.45), memories of the
"far" store are orthogonal to them (its floor is the lowest, 0.25), and the nonsense query is
0.3 similar to either kind of memory: answered by the old fixed floor, by the far store, and
withheld by the near one.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from backends import memory
from engine.backend import open_backend
from engine.indexing.incremental import index_paths
from engine.indexing.indexer import index_store
from engine.ranking.coverage import MIN_CHUNKS
from engine.ranking.floor import MAX_FLOOR, META_KEY, MIN_FLOOR, PROBES, read_record
from engine.ranking.names import store_names
from engine.search import Searcher, search

#: Words the store holds, though no memory holds them all: the similarity floor decides, not
#: the words (a query of words the store has never seen is withheld by its coverage, below).
NONSENSE = "lamps 0 1"
UNSEEN = "zib zab zob"
#: Unseen words too, but as near in meaning to the "far" memories as a paraphrase (0.7).
UNSEEN_PARAPHRASE = "zib zab wumble"
#: A seen word beside an unseen one that carries most of the query, 0.4 similar to the "far"
#: memories: without "wumbat" the query is "lamps", which points elsewhere (the memory said
#: the unseen word in other words); without "quorble" it is "far", which the memories are
#: nearer to (they never said it).
CARRIED = "lamps wumbat"
NOT_CARRIED = "far quorble"
#: A name no memory holds beside two rare words they do hold: little of the query's weight.
UNSEEN_NAME = "7 8 Zibbo"
#: ... whose rest is as near the "far" memories as the paraphrase: they never said the name.
UNSEEN_NAME_WITHOUT_IT = "7 8"
NEAR, FAR = [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]
#: The module (``engine.search`` the name is the package's ``search`` function).
search_module = importlib.import_module("engine.search")


class AngleEmbedder:
    """Probes point between the first two axes, "far" texts along the third, the nonsense
    query at 0.3 to both memory kinds, everything else along the first axis."""

    name, dim = "angle-test", 3

    def __init__(self) -> None:
        self.probe_calls = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        rows = []
        for text in texts:
            if text in PROBES:
                self.probe_calls += 1
                rows.append([math.sqrt(0.5), math.sqrt(0.5), 0.0])
            elif "wumbat" in text or "quorble" in text:
                rows.append([0.0, math.sqrt(0.84), 0.4])
            elif UNSEEN_PARAPHRASE in text or text == UNSEEN_NAME_WITHOUT_IT:
                rows.append([0.0, math.sqrt(0.51), 0.7])
            elif NONSENSE in text or UNSEEN in text or "Zibbo" in text:
                rows.append([0.3, math.sqrt(1 - 0.18), 0.3])
            elif "far" in text.lower():
                rows.append(FAR)
            else:
                rows.append(NEAR)
        return np.array(rows, dtype=np.float32)


def notes(kind: str, count: int) -> dict[str, str]:
    return {
        f"{kind}{i}.md": memory(f"{kind} note {i}", f"{kind} body number {i} about lamps")
        for i in range(count)
    }


@pytest.fixture
def embedder() -> AngleEmbedder:
    return AngleEmbedder()


def record_of(backend, store):  # type: ignore[no-untyped-def]
    rows = backend.rows(store, f"SELECT value FROM meta WHERE key = '{META_KEY}'")
    return read_record(rows[0][0]) if rows else None


def test_an_index_run_records_the_store_floor(backend, backend_store, embedder):
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    record = record_of(backend, store)
    assert record is not None
    assert (record.value, record.probes, record.model, record.chunks) == (
        MAX_FLOOR,
        len(PROBES),
        embedder.name,
        3,
    )


def test_a_store_near_its_probes_withholds_nonsense_the_fixed_floor_answered(
    backend_store, embedder
):
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    own = search(store, NONSENSE, embedder=embedder)
    fixed = search(store, NONSENSE, embedder=embedder, min_similarity=0.25)
    assert (own.abstained, own.hits, own.best_similarity) == (True, [], 0.3)
    assert own.floor == f"store floor {MAX_FLOOR:.2f} from {len(PROBES)} probes"
    assert own.floor in own.notes[-1]
    assert (fixed.abstained, len(fixed.hits)) == (False, 3)
    assert fixed.floor == "floor 0.25 set for this search"


def test_a_store_far_from_its_probes_keeps_the_lowest_floor_and_answers(backend_store, embedder):
    store = backend_store(notes("far", 3))
    index_store(store, embedder=embedder)
    result = search(store, NONSENSE, embedder=embedder)
    assert (result.abstained, len(result.hits)) == (False, 3)
    assert result.floor == f"store floor {MIN_FLOOR:.2f} from {len(PROBES)} probes"


def test_words_the_store_never_saw_are_withheld_above_the_store_floor(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN, embedder=embedder, withhold_unseen=True)
    assert (result.abstained, result.hits, result.best_similarity) == (True, [], 0.3)
    assert "'zib', 'zab', 'zob' (100% of the query)" in result.notes[-1]
    assert "appear nowhere in the store" in result.notes[-1]


def test_unseen_words_still_get_a_memory_near_in_meaning(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_PARAPHRASE, embedder=embedder, withhold_unseen=True)
    assert (result.abstained, result.best_similarity) == (False, 0.7)


def test_a_store_too_small_to_have_a_vocabulary_is_not_judged_by_it(backend_store, embedder):
    store = backend_store(notes("far", 3))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN, embedder=embedder, withhold_unseen=True)
    assert (result.abstained, len(result.hits)) == (False, 3)


def test_words_the_store_never_saw_are_withheld_by_default(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN, embedder=embedder)
    assert (result.abstained, result.withheld_by) == (True, "coverage")


def test_answer_unseen_turns_the_coverage_test_off(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN, embedder=embedder, withhold_unseen=False)
    assert (result.abstained, len(result.hits) > 0) == (False, True)


def test_unseen_words_the_nearest_memory_says_otherwise_are_answered(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, CARRIED, embedder=embedder)
    assert (result.abstained, result.best_similarity) == (False, 0.4)
    assert "the store never wrote 'wumbat' (" in result.notes[-1]
    assert result.notes[-1].endswith(
        "the memory nearest in meaning says them otherwise, so it answers"
    )


def test_unseen_words_the_nearest_memory_does_not_say_are_withheld(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, NOT_CARRIED, embedder=embedder)
    assert (result.abstained, result.withheld_by) == (True, "coverage")
    assert "'quorble'" in result.notes[-1]


def test_an_unseen_name_of_little_weight_is_withheld_by_default(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_NAME, embedder=embedder)
    assert (result.abstained, result.withheld_by) == (True, "coverage")
    assert "the store never mentions 'zibbo'" in result.notes[-1]


def test_an_unseen_name_is_withheld_even_when_the_nearest_memory_carries_it(
    backend_store, embedder
):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    query = "9 10 Zibbo"  # "9 10" alone points elsewhere: the memories are nearer with Zibbo
    named = search(store, query, embedder=embedder)
    worded = search(store, query, embedder=embedder, withhold_unseen="words")
    assert (named.withheld_by, worded.abstained) == ("coverage", False)


def test_the_words_rule_alone_answers_an_unseen_name_of_little_weight(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_NAME, embedder=embedder, withhold_unseen="words")
    assert (result.abstained, len(result.hits) > 0) == (False, True)


def test_words_in_config_toml_keeps_the_words_rule_alone(backend, backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    backend.configure(store, '[limits]\nwithhold_unseen = "words"\n')
    named = search(store, UNSEEN_NAME, embedder=embedder)
    worded = search(store, UNSEEN, embedder=embedder)
    assert (named.abstained, worded.withheld_by) == (False, "coverage")


def test_a_name_the_store_writes_spelt_otherwise_counts_as_written(backend_store, embedder):
    files = notes("far", MIN_CHUNKS)
    files["zibo.md"] = memory("far note about a friend", "Zibo lit the far lamps")
    store = backend_store(files)
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_NAME, embedder=embedder)
    assert (result.abstained, len(result.hits) > 0) == (False, True)
    assert "the store never wrote 'zibbo': taken for its 'Zibo'" in result.notes


def test_withhold_unseen_withholds_an_unseen_name_of_little_weight(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_NAME, embedder=embedder, withhold_unseen=True)
    assert (result.abstained, result.withheld_by) == (True, "coverage")
    assert "the store never mentions 'zibbo'" in result.notes[-1]


def test_withhold_unseen_in_config_toml_turns_the_names_rule_on(
    backend, backend_store, embedder
):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    backend.configure(store, "[limits]\nwithhold_unseen = true\n")
    result = search(store, UNSEEN_NAME, embedder=embedder)
    assert (result.abstained, result.withheld_by) == (True, "coverage")


def test_withhold_unseen_false_in_config_toml_turns_the_coverage_test_off(
    backend, backend_store, embedder
):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    backend.configure(store, "[limits]\nwithhold_unseen = false\n")
    result = search(store, UNSEEN, embedder=embedder)
    assert (result.abstained, len(result.hits) > 0) == (False, True)


def test_a_floor_set_for_the_search_is_the_whole_rule(backend_store, embedder):
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN, embedder=embedder, min_similarity=0.25, withhold_unseen=True)
    assert (result.abstained, len(result.hits) > 0) == (False, True)


@pytest.mark.parametrize("floor", [math.nan, -0.5, 1.5, math.inf])
def test_a_floor_set_for_the_search_is_checked_as_config_toml_checks_it(
    backend_store, embedder, floor
):
    # nan compared false with every similarity, so it silently never withheld anything
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    with pytest.raises(ValueError, match=r"^min_similarity .*: must be between 0 and 1"):
        search(store, NONSENSE, embedder=embedder, min_similarity=floor)


@pytest.mark.parametrize("rule", [0, 1, "Words", "yes", "false"])
def test_a_coverage_rule_set_for_the_search_is_checked_as_config_toml_checks_it(
    backend_store, embedder, rule
):
    # 0 turned the coverage test on, "Words" both its rules: any value but False was "on"
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    with pytest.raises(ValueError, match=r'^withhold_unseen .*: must be true, false or "words"'):
        search(store, NONSENSE, embedder=embedder, withhold_unseen=rule)


def test_a_floor_in_config_toml_overrides_the_store_floor(backend, backend_store, embedder):
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    backend.configure(store, "[limits]\nmin_similarity = 0.25\n")
    result = search(store, NONSENSE, embedder=embedder)
    assert (result.abstained, len(result.hits)) == (False, 3)
    assert result.floor == "floor 0.25 from [limits] min_similarity"


def test_a_memory_holding_every_query_word_is_never_withheld_by_a_high_floor(
    backend_store, embedder
):
    store = backend_store(
        {**notes("near", 3), "odd.md": memory("Odd", f"the words {NONSENSE} are here")}
    )
    index_store(store, embedder=embedder)
    result = search(store, NONSENSE, embedder=embedder)
    assert result.fts_form == "all"
    assert result.abstained is False
    assert result.hits[0].path == "odd.md"
    assert result.floor is None  # no floor was needed


def test_a_one_word_query_no_memory_holds_is_withheld_like_a_longer_one(backend_store, embedder):
    # one word binds the same full-text form as "all" and "any": it was reported as "all" (a
    # memory holds every word) without asking, so a word no memory holds was never withheld
    store = backend_store(notes("near", 3))
    index_store(store, embedder=embedder)
    result = search(store, "Zibbo", embedder=embedder)
    assert (result.fts_form, result.abstained, result.withheld_by) == ("any", True, "floor")


def test_a_one_word_query_a_memory_holds_is_never_withheld(backend_store, embedder):
    store = backend_store({**notes("near", 3), "odd.md": memory("Odd", "Zibbo is here")})
    index_store(store, embedder=embedder)
    result = search(store, "Zibbo", embedder=embedder)
    assert (result.fts_form, result.abstained, result.hits[0].path) == ("all", False, "odd.md")


def test_the_record_is_kept_while_the_store_barely_changes(
    backend, backend_store, embedder, tmp_path
):
    store = backend_store(notes("near", 60))
    index_store(store, embedder=embedder)
    first = record_of(backend, store)
    calls = embedder.probe_calls
    (store.root / "extra.md").write_text(memory("Extra", "one more near note"))
    index_store(store, embedder=embedder)
    after = record_of(backend, store)
    assert after is not None and first is not None
    assert (after.value, after.chunks, after.changed) == (first.value, 60, 1)
    assert embedder.probe_calls == calls  # nothing measured again (and probes embed once)


def test_the_floor_is_measured_again_when_the_store_changes_materially(
    backend, backend_store, embedder
):
    store = backend_store(notes("far", 10))
    index_store(store, embedder=embedder)
    assert record_of(backend, store).value == MIN_FLOOR
    for i in range(40):  # most of the store is now near its probes
        (store.root / f"near{i}.md").write_text(memory(f"Near {i}", f"near body {i}"))
    for i in range(5):
        (store.root / f"far{i}.md").unlink()
    index_store(store, embedder=embedder)
    record = record_of(backend, store)
    assert (record.value, record.chunks, record.changed) == (MAX_FLOOR, 45, 0)
    assert search(store, NONSENSE, embedder=embedder).abstained is True


def test_writing_a_few_memories_counts_them_into_the_record(backend, backend_store, embedder):

    store = backend_store(notes("near", 60))
    index_store(store, embedder=embedder)
    for i in range(2):
        (store.root / f"new{i}.md").write_text(memory(f"New {i}", f"new near body {i}"))
    index_paths(store, ["new0.md", "new1.md"], embedder=embedder)
    record = record_of(backend, store)
    assert (record.chunks, record.changed) == (60, 2)


def test_a_names_sample_reads_as_many_chunks_when_edits_left_gaps_in_their_ids(
    backend_store, embedder
):
    # an edited file's chunks get new ids past the others: evenly spread ids then fell into
    # the freed ones and read a fraction of the sample asked for
    store = backend_store(notes("far", 60))
    index_store(store, embedder=embedder)
    for i in range(0, 60, 2):
        (store.root / f"far{i}.md").write_text(memory(f"far note {i}", f"edited body {i}"))
    index_store(store, embedder=embedder)
    session = open_backend(store).open_search(store)
    session.open()
    try:
        span = session.chunk_span()
        texts = session.sample_texts(20, span)
        assert (len(texts), len(set(texts)), len(session.sample_texts(1000, span))) == (20, 20, 60)
    finally:
        session.close()


def test_a_searcher_reads_the_names_sample_once_until_a_chunk_is_written(
    backend_store, embedder, monkeypatch
):
    files = notes("far", MIN_CHUNKS)
    files["zibo.md"] = memory("far note about a friend", "Zibo lit the far lamps")
    store = backend_store(files)
    index_store(store, embedder=embedder)
    reads: list[int] = []
    real = store_names

    def counting(texts):  # type: ignore[no-untyped-def]
        texts = list(texts)
        reads.append(len(texts))
        return real(texts)

    monkeypatch.setattr(search_module, "store_names", counting)
    with Searcher(store, embedder=embedder) as searcher:
        first = [searcher.search(UNSEEN_NAME).abstained for _ in range(3)]
        sampled = reads.count(MIN_CHUNKS + 1)
        (store.root / "new.md").write_text(memory("far new", "far body about lamps"))
        index_paths(store, ["new.md"], embedder=embedder)
        searcher.search(UNSEEN_NAME)
    assert (first, sampled, reads.count(MIN_CHUNKS + 2)) == ([False] * 3, 1, 1)


def test_the_words_rule_alone_reads_no_names(backend_store, embedder, monkeypatch):
    files = notes("far", MIN_CHUNKS)
    files["zibo.md"] = memory("far note about a friend", "Zibo lit the far lamps")
    store = backend_store(files)
    index_store(store, embedder=embedder)
    monkeypatch.setattr(search_module, "store_names", None)  # any call would fail
    result = search(store, UNSEEN_NAME, embedder=embedder, withhold_unseen="words")
    assert (result.abstained, len(result.hits) > 0) == (False, True)


def test_asking_for_the_coverage_test_under_a_floor_set_for_the_search_says_it_does_not_apply(
    backend_store, embedder
):
    # a floor set is the whole rule: --withhold-unseen --min-similarity 0.1 answered without a word
    store = backend_store(notes("far", MIN_CHUNKS))
    index_store(store, embedder=embedder)
    result = search(store, UNSEEN_NAME, embedder=embedder, min_similarity=0.1, withhold_unseen=True)
    assert "the coverage test does not apply under a floor set for this search" in " ".join(
        result.notes
    )
