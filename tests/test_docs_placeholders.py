"""The hand-written pages quote the statement's placeholder numbers; they must be the numbers
``engine.ranking.contract`` binds (a new input once moved the scope's values from ?5 to ?7 and three
pages went on saying ?5)."""

from __future__ import annotations

import re
from pathlib import Path

from engine.ranking.contract import FIRST_SCOPE_PARAM, PARAMS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_scopes_page_binds_kinds_and_tags_from_the_first_scope_placeholder():
    text = (DOCS / "concepts" / "scopes.md").read_text(encoding="utf-8")

    numbers = sorted({int(n) for n in re.findall(r"json_each\(\?(\d+)\)", text)})

    assert numbers == [FIRST_SCOPE_PARAM, FIRST_SCOPE_PARAM + 1]
    assert f"(`?{FIRST_SCOPE_PARAM}` and up)" in text


def test_the_fusion_page_names_every_placeholder_and_where_scope_values_start():
    text = " ".join((DOCS / "concepts" / "arms-and-fusion.md").read_text(encoding="utf-8").split())

    for param in PARAMS:
        assert f"`?{param.number}`" in text, param.name
    assert f"`?{FIRST_SCOPE_PARAM}` and up the scope's values" in text


def test_the_plugin_page_says_which_numbers_a_search_binds():
    text = " ".join((DOCS / "arms-doc.md").read_text(encoding="utf-8").split())

    last = max(p.number for p in PARAMS)
    assert f"(`?1`–`?{last}`, then one per scope value from `?{FIRST_SCOPE_PARAM}`)" in text
