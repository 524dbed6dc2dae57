"""Both generated pages from one description of their sources: the one path by which the MkDocs
plugin and ``memsift docs write`` make them, so a written page holds what the plugin renders.

:class:`Sources` says where everything is (the registry, the results folder, the pages' paths)
and how to render (content tabs, line links, written or built); :func:`render_pages` reads,
checks and renders, and returns the pages' Markdown with the warnings and notes a caller logs
or prints. It raises :class:`~arms_doc.reader.RegistryError` or the results schema's
``ResultsError`` for sources that cannot be read; the caller turns them into its own kind of
error (a ``PluginError``, a one-line message and exit code 2).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from arms_doc.provenance import GitInfo, check_link_template
from arms_doc.reader import Registry, RegistryError, read_registry

if TYPE_CHECKING:
    from arms_doc.measured import Results
    from arms_doc.remembered import Stored

# The options' defaults, shared by the plugin's config and ``memsift docs``.
DEFAULT_REGISTRY = "src/engine/arms.py"
DEFAULT_VARIABLE = "ARMS"
DEFAULT_PAGE = "reference/rrf-arms.md"
DEFAULT_RESULTS = "benchmarks/results"
DEFAULT_MEASURED_PAGE = "reference/measured.md"


#: What :func:`render_pages` raises for sources that cannot be read (a registry, a results
#: file); ``str()`` names the file, the line or field, and the fix.
def read_errors() -> tuple[type[Exception], ...]:
    """The errors of sources that cannot be read: a registry's, a results file's. A function,
    so the results schema is imported only by a caller that catches them."""
    from engine.measure.results_schema import ResultsError

    return (RegistryError, ResultsError)


class OptionError(ValueError):
    """An option that cannot be used; the message names the option and the fix."""


def markdown_path(option: str, value: str, example: str) -> str:
    """A generated page's path, normalized; an OptionError unless it ends in .md."""
    path = value.replace("\\", "/").strip("/")
    if not path.endswith(".md"):
        raise OptionError(
            f"{option} {value!r} must be a Markdown path ending in .md, e.g. {example}"
        )
    if ".." in path.split("/"):
        raise OptionError(f"{option} {value!r} must stay inside the docs folder, e.g. {example}")
    return path


@dataclass(frozen=True)
class Sources:
    """Where the pages come from and go, and how they are rendered."""

    #: The folder paths are shown relative to: the folder of ``mkdocs.yml``.
    root: Path
    registry: Path
    results: Path
    variable: str = DEFAULT_VARIABLE
    #: The arms page's path inside the docs folder.
    page: str = DEFAULT_PAGE
    #: The Measured page's path inside the docs folder; None turns the page off.
    measured_page: str | None = DEFAULT_MEASURED_PAGE
    link_template: str | None = None
    #: Each dialect's SQL in a content tab (pymdownx.tabbed) rather than under a bold heading.
    tabs: bool = False
    #: The pages as ``memsift docs write`` puts them in files: naming no commit, and saying
    #: they were written rather than built.
    written: bool = False

    def check(self) -> Sources:
        """These sources with the pages' paths normalized; OptionError for an option that
        cannot be used."""
        page = markdown_path("page", self.page, DEFAULT_PAGE)
        measured = self.measured_page
        if measured is not None:
            measured = markdown_path("measured_page", measured, DEFAULT_MEASURED_PAGE)
            if measured == page:
                raise OptionError(
                    f"page and measured_page are both {page}; give the Measured page another path"
                )
        if self.link_template and (problem := check_link_template(self.link_template)):
            raise OptionError(f"source_link {self.link_template!r}: {problem}")
        return replace(self, page=page, measured_page=measured)

    def shown(self, path: Path) -> str:
        """``path`` as readers and messages see it: relative to :attr:`root` when inside it."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()

    @property
    def measuring(self) -> bool:
        """Whether there are benchmark results to show: the results folder exists."""
        return self.results.is_dir()

    @property
    def measured_path(self) -> str | None:
        """Where the Measured page goes, or None when there is none (turned off, or no results
        folder: a site that measures nothing gets no page and no advice to run benchmarks)."""
        return self.measured_page if self.measuring else None


@dataclass(frozen=True)
class Pages:
    """The generated pages' Markdown, the registry they came from, and what to tell."""

    arms: str
    #: None when there is no Measured page.
    measured: str | None
    registry: Registry
    #: Problems that leave usable pages (the registry's quality, stale results): a strict
    #: build fails on them.
    warnings: tuple[str, ...]
    #: Worth knowing, not wrong: a results file that does not exist.
    notes: tuple[str, ...]


def render_pages(sources: Sources) -> Pages:
    """Read the registry and the results, check them, render both pages; one of
    :func:`read_errors` for sources that cannot be read. Pages rendered from the same sources
    before are not rendered again (:mod:`arms_doc.remembered`)."""
    from arms_doc.provenance import git_info
    from arms_doc.remembered import code_folders, pages_key, recall_or_render
    from arms_doc.targets import source_root

    display = sources.shown(sources.registry)
    # Read on every build: a registry that cannot be read stops it the same way each time.
    registry = read_registry(sources.registry, sources.variable, display=display)
    git = git_info(sources.registry)
    key = pages_key(
        repr(sources),
        sources.registry,
        sources.results,
        git,
        code_folders(source_root(sources.registry)),
    )
    stored = recall_or_render(key, lambda: fresh_pages(sources, registry, git))
    return Pages(stored.arms, stored.measured, registry, stored.warnings, stored.notes)


def fresh_pages(sources: Sources, registry: Registry, git: GitInfo | None) -> Stored:
    """Both pages rendered from their sources, with what to tell; ``git`` is what git says
    of the registry now."""
    # Imported here, not with the module: MkDocs imports every plugin a config lists before
    # it knows what it will do, and only the pages need the engine and the modules that
    # write them.
    from arms_doc.page import page_from_registry
    from arms_doc.remembered import Stored

    display = sources.shown(sources.registry)
    warnings: list[str] = []
    notes: list[str] = []
    results = read_results(sources, registry, warnings, notes) if sources.measuring else None
    measured_page = sources.measured_path
    generated = page_from_registry(
        registry,
        sources.registry,
        link_template=sources.link_template,
        results=results,
        measured_link=(
            posixpath.relpath(measured_page, posixpath.dirname(sources.page) or ".")
            if measured_page is not None
            else None
        ),
        tabs=sources.tabs,
        measuring=sources.measuring,
        written=sources.written,
        git=git,
    )
    warnings += [f"{display}:{finding.line}: {finding.message}" for finding in generated.findings]
    measured = None
    if measured_page is not None and results is not None:
        from arms_doc.measured import measured_context  # a site with results only
        from arms_doc.measured_markdown import render_measured

        measured = render_measured(
            measured_context(
                results,
                display,
                [arm.name for arm in generated.registry.arms],
                written=sources.written,
            )
        )
    return Stored(generated.markdown, measured, tuple(warnings), tuple(notes))


def read_results(
    sources: Sources, registry: Registry, warnings: list[str], notes: list[str]
) -> Results:
    """The results folder's files; a stale one and a tuning record the registry does not hold
    added to ``warnings``, a missing one to ``notes``."""
    from arms_doc.measured import load_results, stale_message, tuning_drift
    from engine.measure.fingerprint import ranking
    from engine.measure.results_schema import QUALITY
    from engine.ranking.assemble import RRF_K

    display = sources.shown(sources.registry)
    results = load_results(
        sources.results,
        display=sources.shown(sources.results),
        current=ranking(registry.arms, authority=registry.authority),
    )
    warnings += [stale_message(stale, display) for stale in results.stale]
    weights = {arm.name: arm.weight for arm in registry.arms}
    if drift := tuning_drift(results.quality, weights, RRF_K):
        warnings.append(
            f"{results.results_of(QUALITY).shown}: its tuning record chose another setting "
            f"than {display} holds ({'; '.join(drift)}); put the chosen setting in the "
            "registry, or run the fusion lab and the quality benchmark again"
        )
    notes += [
        f"{missing.shown} does not exist, so the pages say it was not measured; run "
        f"`{missing.kind.command}` to make it"
        for missing in results.missing
    ]
    return results
