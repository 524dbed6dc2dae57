"""When a team schema is another store's: it holds memories, none of them here by path or by
content."""

from __future__ import annotations

import hashlib

from engine.pg.ownership import is_foreign, shares_content


def never() -> bool:
    raise AssertionError("contents are read only when no path is shared")


def test_an_empty_schema_is_nobodys():
    assert not is_foreign(set(), lambda path: False, lambda: False)


def test_one_shared_path_makes_it_ours_without_reading_a_file():
    assert not is_foreign({"a.md", "b.md"}, lambda path: path == "b.md", never)


def test_no_shared_path_and_no_shared_content_makes_it_foreign():
    assert is_foreign({"a.md"}, lambda path: False, lambda: False)


def test_a_folder_of_renamed_files_is_still_the_same_store():
    assert not is_foreign({"a.md"}, lambda path: False, lambda: True)


def test_shares_content_finds_a_file_with_a_known_digest(tmp_path):
    (tmp_path / "x.md").write_bytes(b"other")
    (tmp_path / "y.md").write_bytes(b"kept words")
    known = {hashlib.sha256(b"kept words").hexdigest()}

    assert shares_content([tmp_path / "x.md", tmp_path / "y.md"], known, 1000)
    assert not shares_content([tmp_path / "x.md"], known, 1000)


def test_shares_content_passes_over_missing_and_oversized_files(tmp_path):
    (tmp_path / "big.md").write_bytes(b"kept words")
    known = {hashlib.sha256(b"kept words").hexdigest()}

    assert not shares_content([tmp_path / "gone.md", tmp_path / "big.md"], known, 5)
