"""benchmarks/abstention.py's corpora and stores: documents become memory files that parse,
a kept store follows its corpus, and every question list names files the builders can make."""

from __future__ import annotations

import json

import pytest
from abstention import HELD_OUT, QUESTIONS, SOURCES, EmptyCorpus, build_corpus, main, write_store
from abstention_corpora import chat_docs, memory_text

from engine.files.memory import parse_memory


def test_a_document_becomes_a_memory_with_its_title_even_with_front_matter_inside():
    text = memory_text('A "quoted" title', "intro\n---\nnot a header\n")
    parsed = parse_memory("x.md", text.encode("utf-8"))
    assert parsed.title == 'A "quoted" title'
    assert "not a header" in parsed.body


def test_a_chat_message_is_a_memory_titled_by_its_speaker(tmp_path):
    row = {"_id": "D1:2", "text": "elise: hi there", "event_at": "2023-12-30T00:32:20"}
    (tmp_path / "corpus.jsonl").write_text(json.dumps(row) + "\n")
    assert chat_docs(tmp_path) == {
        "chat/D1_2.md": ("elise, 2023-12-30T00:32:20", "elise: hi there")
    }


def test_a_kept_store_loses_the_files_its_corpus_no_longer_has(tmp_path):
    write_store(tmp_path, {"a/x.md": ("X", "x body"), "y.md": ("Y", "y body")})
    write_store(tmp_path, {"y.md": ("Y", "y body")})
    assert sorted(p.name for p in tmp_path.rglob("*.md")) == ["y.md"]


def test_every_corpus_has_its_question_list_with_enough_of_each_kind():
    for source in SOURCES:
        questions = json.loads((QUESTIONS / f"{source.name}.json").read_text(encoding="utf-8"))
        assert len(questions["answerable"]) >= 20 and len(questions["foreign"]) >= 20
        assert all(q["expect"].startswith(f"{source.name}/") for q in questions["answerable"])


def test_every_corpus_has_a_held_out_list_that_repeats_no_question_of_its_main_list():
    for source in SOURCES:
        main_list = json.loads((QUESTIONS / f"{source.name}.json").read_text(encoding="utf-8"))
        held = json.loads((HELD_OUT / f"{source.name}.json").read_text(encoding="utf-8"))
        assert len(held["answerable"]) >= 10 and len(held["foreign"]) >= 10
        assert all(q["expect"].startswith(f"{source.name}/") for q in held["answerable"])
        asked = {q["q"] for kind in ("answerable", "foreign") for q in main_list[kind]}
        assert not asked & {q["q"] for kind in ("answerable", "foreign") for q in held[kind]}


def test_a_chat_set_that_is_not_there_stops_the_run_naming_where_it_looked(tmp_path, capsys):
    chat = next(s for s in SOURCES if s.name == "chat")
    with pytest.raises(EmptyCorpus, match=str(tmp_path / "realtalk")):
        build_corpus(chat, tmp_path)
    assert main(["--corpus", "chat", "--data", str(tmp_path), "--cache", str(tmp_path)]) == 2
    assert "--data" in capsys.readouterr().err
