"""Sphinx roles in a registry's docstring and prose reach the page as links (or code), never as
raw role text; one the page cannot render or resolve is a finding at its line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from arms_doc_testing import SNAPSHOT_REGISTRY, src

from arms_doc.page import generate_page
from arms_doc.roles import roles_to_markdown, target_name
from arms_doc.targets import Location, SourceTree, source_root

LINKS = "https://x.org/r/blob/{commit}/{path}#L{start}-L{end}"


def no_report(line: int, message: str) -> None:
    raise AssertionError(f"unexpected report on line {line}: {message}")


def code_only(target: str) -> str:
    return ""


@pytest.mark.parametrize(
    ("text", "page"),
    [
        ("see :mod:`engine.ranking.assemble`", "see `engine.ranking.assemble`"),
        (":data:`engine.ranking.contract.INPUTS`", "`engine.ranking.contract.INPUTS`"),
        (":py:func:`engine.ranking.arm_rules.validate`", "`engine.ranking.arm_rules.validate`"),
        (":func:`~engine.ranking.arm_rules.validate`", "`validate`"),
        (":class:`the arm <engine.arms.Arm>`", "`the arm`"),
        ("``{scope}`` and `code` stay", "``{scope}`` and `code` stay"),
    ],
)
def test_a_role_with_nowhere_to_link_becomes_a_code_span(text, page):
    assert roles_to_markdown(text, code_only, no_report) == page


@pytest.mark.parametrize(
    ("target", "name"),
    [
        ("engine.ranking.assemble", "engine.ranking.assemble"),
        ("~engine.ranking.arm_rules.validate", "engine.ranking.arm_rules.validate"),
        ("the arm <engine.arms.Arm>", "engine.arms.Arm"),
        ("!engine.arms.ARMS", "engine.arms.ARMS"),
        ("engine.ranking.arm_rules.validate()", "engine.ranking.arm_rules.validate"),
    ],
)
def test_the_name_a_target_points_at(target, name):
    assert target_name(target) == name


def test_a_resolved_role_is_a_link_showing_its_code():
    links = {"engine.ranking.assemble": "https://x.org/assemble.py", "fts": "#fts"}

    page = roles_to_markdown(
        "see :mod:`~engine.ranking.assemble` and :data:`fts`", links.get, no_report
    )

    assert page == "see [`assemble`](https://x.org/assemble.py) and [`fts`](#fts)"


def test_an_unresolved_role_is_code_and_reported_with_its_line():
    seen: list[tuple[int, str]] = []
    text = "first line\nsecond :func:`engine.gone` here"

    page = roles_to_markdown(text, lambda target: None, lambda *found: seen.append(found))

    assert page == "first line\nsecond `engine.gone` here"
    assert [(line, message.split(",")[0]) for line, message in seen] == [
        (1, "the role :func:`engine.gone` names engine.gone")
    ]


def test_an_unknown_role_is_code_and_reported_with_its_line():
    seen: list[tuple[int, str]] = []
    text = "first line\nsecond :issue:`42` here"

    page = roles_to_markdown(text, code_only, lambda *found: seen.append(found))

    assert page == "first line\nsecond `42` here"
    assert [(line, message.split(" is not")[0]) for line, message in seen] == [
        (1, "the role :issue:`42`")
    ]


# --- the source tree ------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> SourceTree:
    """src/pkg/{__init__,arms,rules}.py and src/pkg/sub/{__init__,contract}.py."""
    files = {
        "pkg/__init__.py": "",
        "pkg/arms.py": "from pkg.rules import validate as check\n\nARMS = ()\n",
        "pkg/rules.py": src(
            """
            import os


            def validate(arms):
                return None


            class Rule:
                limit: int = 3

                def apply(self):
                    pass
            """
        ),
        "pkg/sub/__init__.py": "from .contract import INPUTS\n",
        "pkg/sub/contract.py": "NAMES = 1\nINPUTS = (\n    'query',\n)\n",
    }
    for name, text in files.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text, encoding="utf-8")
    registry = tmp_path / "src" / "pkg" / "arms.py"
    return SourceTree(source_root(registry), registry)


def test_the_source_root_is_the_folder_above_the_top_package(tree: SourceTree, tmp_path: Path):
    assert tree.root == (tmp_path / "src").resolve()
    assert tree.registry_module == "pkg.arms"


@pytest.mark.parametrize(
    ("target", "file", "lines"),
    [
        ("pkg.rules", "pkg/rules.py", (None, None)),
        ("pkg.sub", "pkg/sub/__init__.py", (None, None)),
        ("pkg.rules.validate", "pkg/rules.py", (4, 5)),
        ("pkg.rules.Rule", "pkg/rules.py", (8, 12)),
        ("pkg.rules.Rule.limit", "pkg/rules.py", (9, 9)),
        ("pkg.rules.Rule.apply", "pkg/rules.py", (11, 12)),
        ("pkg.sub.contract.INPUTS", "pkg/sub/contract.py", (2, 4)),
        ("pkg.sub.INPUTS", "pkg/sub/contract.py", (2, 4)),  # through the package's import
        ("pkg.arms.check", "pkg/rules.py", (4, 5)),  # through an import's alias
        ("ARMS", "pkg/arms.py", (3, 3)),  # a bare name: the registry's own module
    ],
)
def test_a_target_is_found_where_it_is_defined(tree: SourceTree, target, file, lines):
    assert tree.find(target) == Location(tree.root / file, *lines)


@pytest.mark.parametrize(
    "target",
    ["pkg.gone", "pkg.rules.gone", "pkg.rules.validate.inner", "os.path", "sqlite3", "a b"],
)
def test_a_target_not_defined_in_the_tree_is_not_found(tree: SourceTree, target):
    assert tree.find(target) is None


# --- the page -------------------------------------------------------------------------------


def registry_with(tmp_path: Path, old: str, new: str) -> Path:
    """The snapshot registry as src/engine/arms.py, with a module beside it to link to."""
    registry = tmp_path / "src" / "engine" / "arms.py"
    registry.parent.mkdir(parents=True)
    (registry.parent / "__init__.py").write_text("", encoding="utf-8")
    (registry.parent / "rules.py").write_text("\n\ndef validate(arms):\n    pass\n", "utf-8")
    shutil.copyfile(SNAPSHOT_REGISTRY, registry)
    text = registry.read_text(encoding="utf-8")
    assert old in text
    registry.write_text(text.replace(old, new, 1), encoding="utf-8")
    return registry


def line_of(registry: Path, text: str) -> int:
    lines = registry.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


@pytest.fixture
def no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))


@pytest.mark.usefixtures("no_git")
def test_the_page_links_modules_names_and_arms_and_shows_no_role_text(tmp_path: Path):
    registry = registry_with(
        tmp_path,
        "The semantic arm finds memories",
        "The :mod:`engine.rules`, :func:`~engine.rules.validate` and :data:`fts` semantic arm "
        "finds memories",
    )

    page = generate_page(registry, display="src/engine/arms.py", link_template=LINKS)

    assert ":mod:" not in page.markdown and ":func:" not in page.markdown
    assert (
        "The [`engine.rules`](https://x.org/r/blob/HEAD/src/engine/rules.py), "
        "[`validate`](https://x.org/r/blob/HEAD/src/engine/rules.py#L3-L4) and "
        "[`fts`](#fts) semantic arm finds memories"
    ) in page.markdown
    assert page.findings == []


@pytest.mark.usefixtures("no_git")
def test_a_site_without_source_links_shows_a_found_module_as_code(tmp_path: Path):
    registry = registry_with(tmp_path, "The semantic arm", "The :mod:`engine.rules` semantic arm")

    page = generate_page(registry, display="src/engine/arms.py")

    assert "The `engine.rules` semantic arm" in page.markdown
    assert page.findings == []


@pytest.mark.usefixtures("no_git")
def test_the_page_names_an_unresolved_and_an_unknown_role_at_their_lines(tmp_path: Path):
    registry = registry_with(
        tmp_path,
        "The semantic arm finds memories",
        "The :mod:`engine.knn` and :gh:`7` semantic arm finds memories",
    )

    page = generate_page(registry, display="arms.py", link_template=LINKS)

    assert "The `engine.knn` and `7` semantic arm finds memories" in page.markdown
    line = line_of(registry, ":gh:")
    assert [(f.line, f.message.split(",")[0].split(" is not")[0]) for f in page.findings] == [
        (line, "the role :mod:`engine.knn` names engine.knn"),
        (line, "the role :gh:`7`"),
    ]


@pytest.mark.usefixtures("no_git")
def test_a_written_page_links_roles_as_the_built_one_does(tmp_path: Path):
    registry = registry_with(tmp_path, "The semantic arm", "The :func:`engine.rules.validate` arm")

    built = generate_page(registry, display="src/engine/arms.py", link_template=LINKS)
    written = generate_page(
        registry, display="src/engine/arms.py", link_template=LINKS, written=True
    )

    link = "[`engine.rules.validate`](https://x.org/r/blob/HEAD/src/engine/rules.py#L3-L4)"
    assert link in built.markdown and link in written.markdown
