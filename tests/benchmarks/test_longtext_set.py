"""The long-text set is built from the machine's own licence files: identical copyright files
are one document, named after the first package holding it, and a question may name any of
its packages."""

from __future__ import annotations

import json
from pathlib import Path

import longtext_set as lt

ZLIB = "Files: *\nLicense: Zlib\n This software is provided 'as-is'.\n"


def doc_tree(root: Path) -> Path:
    for package, text in {
        "zlib1g": ZLIB,
        "zlib1g-dev": ZLIB,
        "libperl": "Perl: Artistic\n",
    }.items():
        (root / package).mkdir(parents=True)
        (root / package / "copyright").write_text(text, encoding="utf-8")
    return root


def test_identical_copyright_files_are_one_document_named_after_the_first_package(tmp_path):
    rows, _ = lt.copyright_docs(doc_tree(tmp_path / "doc"))
    assert sorted(rows) == ["debian/libperl", "debian/zlib1g"]
    assert rows["debian/zlib1g"]["text"] == ZLIB


def test_a_question_may_name_any_package_of_a_group_of_copies(tmp_path):
    rows, owner = lt.copyright_docs(doc_tree(tmp_path / "doc"))
    assert lt.resolve("debian:zlib1g-dev", rows, owner) == "debian/zlib1g"
    assert lt.resolve("debian:absent", rows, owner) is None


def test_a_licence_alias_is_not_a_document_of_its_own(tmp_path):
    folder = tmp_path / "licenses"
    folder.mkdir()
    (folder / "GPL-3").write_text("GNU GENERAL PUBLIC LICENSE\n", encoding="utf-8")
    (folder / "GPL").symlink_to("GPL-3")
    assert list(lt.licence_docs(folder)) == ["licenses/GPL-3"]


def test_every_question_names_a_document_in_a_form_the_builder_reads():
    spec = json.loads(lt.QUESTIONS.read_text(encoding="utf-8"))
    expects = [e for item in spec["questions"] for e in item["expect"]]
    assert expects
    assert all(e.startswith(("debian:", "licenses/")) for e in expects)
