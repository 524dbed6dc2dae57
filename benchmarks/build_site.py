"""Build one MkDocs site once, with or without the arms-doc plugin: the process that
``docs_build.py`` starts and times.

    python benchmarks/build_site.py CONFIG SITE_DIR [--without-plugin [--drop-page PATH ...]]
                                    [--docs-dir DIR]
    python benchmarks/build_site.py CONFIG SITE_DIR --phases --drop-page PATH ...
    python benchmarks/build_site.py CONFIG SITE_DIR --write-pages DOCS --drop-page PATH ...

It imports only MkDocs and the standard library at its top, as ``mkdocs build`` does, so the
time of a process is MkDocs' time plus, with the plugin, the plugin's: the plugin is imported
only when MkDocs loads the config. ``--without-plugin`` gives MkDocs the config's own plugins
less ``arms-doc`` and its nav less ``--drop-page`` (the generated pages), as overrides, so the
plugin is never imported at all; ``--docs-dir`` points MkDocs at another docs folder (a copy
holding the generated pages as files). Every way reads the config file the same way, and all
build non-strictly (without the plugin, pages that link to the generated ones warn).

``--write-pages`` builds with the plugin and writes the pages it generated (the
``--drop-page`` paths, arms page first) into the folder DOCS, as Markdown files.

``--phases`` prints, as JSON on stdout, where the plugin's time goes in one process: it builds
the site without the plugin first (so what MkDocs and the site's other plugins import is
there), times the import of the plugin's modules one by one, then builds twice with the plugin
timing each step (both pages are written in plain Python: no template to compile).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.utils.yaml import yaml_load

PLUGIN = "arms-doc"

#: The modules the plugin's pages import, beyond the one MkDocs imports to load the plugin, in
#: the order a build first needs them; timed one by one in a fresh process (what one of them
#: already imported counts where it was first imported).
PAGE_MODULES = (
    "arms_doc.reader",
    "arms_doc.measured",
    "engine.measure.results_schema",
    "arms_doc.page",
    "arms_doc.statements",
    "engine.ranking.assemble",
    "arms_doc.prepare",
    "engine.sqlite.prepare",
    "arms_doc.arms_markdown",
    "arms_doc.measured_markdown",
)

#: The steps of a build with the plugin, timed by wrapping the function that does each:
#: (phase, module, function).
STEPS = (
    ("Read the registry", "arms_doc.reader", "read_registry"),
    ("Read the results files", "arms_doc.measured", "load_results"),
    ("Check the registry's quality", "arms_doc.checks", "quality_findings"),
    ("Assemble the statements", "arms_doc.statements", "assemble_statements"),
    ("Prepare every statement in SQLite", "arms_doc.prepare", "check_statements"),
    ("Ask git for the commit", "arms_doc.provenance", "git_info"),
    ("Render the arms page", "arms_doc.arms_markdown", "render_arms"),
    ("Lay out the Measured page", "arms_doc.measured", "measured_context"),
    ("Render the Measured page", "arms_doc.measured_markdown", "render_measured"),
)


def plugin_name(entry: object) -> str:
    """The plugin an entry of ``plugins:`` names ("search", or the key of ``{name: opts}``)."""
    return entry if isinstance(entry, str) else next(iter(entry))  # type: ignore[call-overload]


def without_pages(nav: list[Any], pages: set[str]) -> list[Any]:
    """``nav`` with every entry that points at one of ``pages`` left out."""
    kept: list[Any] = []
    for item in nav:
        if isinstance(item, dict):
            ((title, value),) = item.items()
            if isinstance(value, list):
                kept.append({title: without_pages(value, pages)})
            elif value not in pages:
                kept.append(item)
        elif item not in pages:
            kept.append(item)
    return kept


def overrides(config_file: Path, with_plugin: bool, pages: set[str]) -> dict[str, Any]:
    """What MkDocs is given beside the config file: nothing with the plugin; without it, the
    file's plugins less the plugin (MkDocs' default, search, when it lists none) and its nav
    less the generated pages."""
    with config_file.open(encoding="utf-8") as stream:
        raw = yaml_load(stream) or {}
    if with_plugin:
        return {}
    plugins = [p for p in raw.get("plugins", ["search"]) if plugin_name(p) != PLUGIN]
    changed: dict[str, Any] = {"plugins": plugins}
    if "nav" in raw:
        changed["nav"] = without_pages(raw["nav"], pages)
    return changed


def build_once(
    config_file: Path,
    site_dir: Path,
    with_plugin: bool,
    pages: set[str],
    docs_dir: Path | None = None,
) -> None:
    changed = overrides(config_file, with_plugin, pages)
    if docs_dir is not None:
        changed["docs_dir"] = str(docs_dir)
    config = load_config(
        config_file=str(config_file), site_dir=str(site_dir), strict=False, **changed
    )
    build(config)


# --------------------------------------------------------------------------- phases


class Clock:
    """Seconds spent in each phase, summed over calls, for the build under way."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)

    def timed(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[phase] += time.perf_counter() - start

        return run


def instrument(clock: Clock, generated: set[str]) -> None:
    """Wrap every step in :data:`STEPS` (in its module and wherever an ``arms_doc`` module
    imported it by name), the plugin's ``on_files``, and MkDocs' rendering of the generated
    pages."""
    from mkdocs.structure.pages import Page

    from arms_doc.plugin import ArmsDocPlugin

    for phase, module_name, name in STEPS:
        original = getattr(importlib.import_module(module_name), name)
        wrapped = clock.timed(phase, original)
        for module in list(sys.modules.values()):
            if module.__name__.startswith("arms_doc") and getattr(module, name, None) is original:
                setattr(module, name, wrapped)
    ArmsDocPlugin.on_files = clock.timed("on_files", ArmsDocPlugin.on_files)  # type: ignore[method-assign]
    render = Page.render

    def page_render(page: Page, *args: Any, **kwargs: Any) -> Any:
        if page.file.src_uri not in generated:
            return render(page, *args, **kwargs)
        return clock.timed("MkDocs renders the generated pages (Markdown)", render)(
            page, *args, **kwargs
        )

    Page.render = page_render  # type: ignore[method-assign]


def phases(config_file: Path, site_dir: Path, pages: set[str]) -> dict[str, Any]:
    """Build without the plugin, import its modules, build twice with it; seconds per phase."""
    build_once(config_file, site_dir, False, pages)
    imports: dict[str, float] = {}
    start = time.perf_counter()
    importlib.import_module("arms_doc.plugin")
    imports["arms_doc.plugin"] = time.perf_counter() - start
    for name in PAGE_MODULES:
        start = time.perf_counter()
        importlib.import_module(name)
        imports[name] = time.perf_counter() - start
    clock = Clock()
    instrument(clock, pages)
    builds = []
    for _ in range(2):
        clock.spent.clear()
        start = time.perf_counter()
        build_once(config_file, site_dir, True, pages)
        builds.append({"build": time.perf_counter() - start, **clock.spent})
    return {
        "imports": imports,
        "first": builds[0],
        "warm": builds[1],
    }


def write_pages(config_file: Path, site_dir: Path, pages: list[str], docs: Path) -> None:
    """Build with the plugin; write its arms page and Measured page to ``pages`` in ``docs``."""
    config = load_config(config_file=str(config_file), site_dir=str(site_dir), strict=False)
    build(config)
    plugin = config.plugins[PLUGIN]
    generated = (plugin.markdown, plugin.measured_markdown)  # type: ignore[attr-defined]
    for page, markdown in zip(pages, generated, strict=True):
        if markdown is None:
            raise SystemExit(f"{config_file}: the build with the plugin generated no {page}")
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text(markdown, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("site_dir", type=Path)
    parser.add_argument("--without-plugin", action="store_true")
    parser.add_argument("--drop-page", action="append", default=[], help="a generated page")
    parser.add_argument("--docs-dir", type=Path, help="build this docs folder instead")
    parser.add_argument("--phases", action="store_true", help="time the plugin's steps")
    parser.add_argument("--write-pages", type=Path, help="write the generated pages here")
    args = parser.parse_args(argv)
    pages = set(args.drop_page)
    if args.phases:
        print(json.dumps(phases(args.config, args.site_dir, pages)))
    elif args.write_pages:
        write_pages(args.config, args.site_dir, args.drop_page, args.write_pages)
    else:
        build_once(args.config, args.site_dir, not args.without_plugin, pages, args.docs_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
