"""The project's site as a reader sees it: the arms page and the Measured page opened in a real
headless browser (Debian's chromium, driven by Playwright), not read as HTML source.

What a browser shows can differ from what the HTML holds: a fence the Markdown did not take
shows its backticks, a table that did not parse shows its pipes, a role the plugin left alone
shows as ``:mod:`...```. So the checks read the page's rendered text (``innerText``, what is
visible) and its elements after the page has loaded, and each page is saved as a full-page
screenshot under ``artifacts/browser/`` for a person to look at.

The browser comes from the system (``make test`` installs Debian's ``chromium`` where apt can,
``scripts/ensure_browser.sh``); Playwright only drives it, through ``executable_path``: its own
browser download is never used. Without either, the tests skip and say which is missing. The
page loads nothing from outside this machine: every request not to the local server is
refused.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import struct
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arms_doc_testing import ENGINE_REGISTRY, REPO
from mkdocs.commands.build import build
from mkdocs.config import load_config

from arms_doc.reader import read_registry
from engine.arms import ARMS

#: Where the screenshots are left (ignored by git).
ARTIFACTS = REPO / "artifacts" / "browser"
#: The names Debian and others give the browser on PATH.
CHROMIUM = ("chromium", "chromium-browser")
#: A quiet, offline, throwaway browser: no sandbox (CI runs as root), no GPU, no calls home.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PAGES = {"arms": "reference/rrf-arms/", "measured": "reference/measured/"}
#: Markdown or template syntax that a rendered page never shows; an entity shown as text is
#: HTML escaped twice.
RAW = ("```", "**", "| ---", "|---", "{{", "{%", "&lt;", "&gt;", "&amp;")
#: A Sphinx role as written in a docstring (``:mod:`x```, ``:py:func:`y```), or as Markdown
#: shows one it was given raw (the role's name, then its target as code: ``:mod:x``).
ROLE = re.compile(
    r":(?:py:)?(?:mod|func|data|class|meth|attr|obj|exc|const|term|ref|any|doc):`?(?=[\w~`!])"
)
#: Every table in the page's article: its header cells and its rows' cells, as shown.
TABLES = """tables => tables.map(table => ({
    head: [...table.querySelectorAll("thead th")].map(cell => cell.innerText.trim()),
    rows: [...table.querySelectorAll("tbody tr")].map(
        row => [...row.querySelectorAll("td")].map(cell => cell.innerText.trim())),
}))"""


def chromium() -> str | None:
    return next((found for name in CHROMIUM if (found := shutil.which(name))), None)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site_dir = tmp_path_factory.mktemp("browser-site")
    build(load_config(config_file=str(REPO / "mkdocs.yml"), strict=True, site_dir=str(site_dir)))
    return site_dir


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # the test's output stays its own
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on an ephemeral port of this machine."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture(scope="module")
def driver() -> tuple[Any, str]:
    """Playwright's sync API and the browser it drives; a skip naming what is missing (before
    the site is built for nothing)."""
    executable = chromium()
    if executable is None:
        pytest.skip(
            "no chromium on PATH; `make test` installs Debian's chromium where apt can "
            "(scripts/ensure_browser.sh), or install it: apt-get install chromium"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed: pip install -e '.[test]'"
    )
    return sync_api, executable


@pytest.fixture(scope="module")
def pages(
    driver: tuple[Any, str], served: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Both pages, loaded in one fresh browser profile."""
    sync_api, executable = driver
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("browser-profile")),
            executable_path=executable,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.route(
            "**/*",
            lambda route: route.continue_()
            if route.request.url.startswith(served)
            else route.abort(),
        )
        opened = {}
        for name, path in PAGES.items():
            page = context.new_page()
            page.goto(served + path, wait_until="load")
            page.wait_for_selector("article h1")
            opened[name] = page
        yield opened
        context.close()


def visible_text(page: Any) -> str:
    return str(page.locator("article").inner_text())


def tables(page: Any) -> list[dict[str, list[Any]]]:
    return list(page.eval_on_selector_all("article table", TABLES))


def test_the_arms_table_has_one_row_per_arm_of_the_registry(pages: dict[str, Any]):
    (table,) = [t for t in tables(pages["arms"]) if t["head"][:2] == ["Arm", "Weight"]]

    assert [row[0] for row in table["rows"]] == [arm.name for arm in ARMS]
    # Each weight as the registry writes it ("1.0" stays "1.0").
    assert [row[1] for row in table["rows"]] == [
        arm.weight_text for arm in read_registry(ENGINE_REGISTRY).arms
    ]


def test_every_arms_sql_is_shown_in_a_code_block(pages: dict[str, Any]):
    blocks = pages["arms"].eval_on_selector_all(
        "article pre > code", "codes => codes.map(code => code.textContent)"
    )

    for arm in ARMS:
        first_line = textwrap.dedent(arm.sql).strip().splitlines()[0].strip()
        assert any(first_line in block for block in blocks), arm.name
    assert any("WITH" in block and "arm_fts" in block for block in blocks)  # the statement


@pytest.mark.parametrize("name", PAGES)
def test_no_markdown_template_or_role_text_is_visible(pages: dict[str, Any], name: str):
    text = visible_text(pages[name])

    assert [mark for mark in RAW if mark in text] == []
    assert ROLE.findall(text) == []
    assert len(text) > 2000  # the page's content itself, not an empty shell


def test_the_measured_page_has_a_row_per_arm_alone(pages: dict[str, Any]):
    firsts = [[row[0] for row in t["rows"] if row] for t in tables(pages["measured"])]

    assert any(all(f"{arm.name} alone" in first for arm in ARMS) for first in firsts)


@pytest.mark.parametrize("name", PAGES)
def test_a_full_page_screenshot_is_saved(pages: dict[str, Any], name: str):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"

    pages[name].screenshot(path=str(path), full_page=True)

    print(f"screenshot: {path}")
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert width == 1280 and height > 900  # the whole page, past the first screen
