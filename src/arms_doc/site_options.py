"""The arms-doc options as ``memsift docs`` finds them without MkDocs: the ``arms-doc`` entry
under ``plugins:`` in the site's ``mkdocs.yml`` (when there is one), then the command line's
flags over it.

The file is read as plain YAML, so a site whose generator is not MkDocs (Zensical reads the
same file) needs nothing else installed; tags that only MkDocs resolves (``!ENV``,
``!!python/name:``) read as empty values, which no arms-doc option uses. Paths in the file are
relative to its folder, as the plugin takes them; paths given as flags are relative to the
current folder, as on any command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arms_doc.pages import (
    DEFAULT_MEASURED_PAGE,
    DEFAULT_PAGE,
    DEFAULT_REGISTRY,
    DEFAULT_RESULTS,
    DEFAULT_VARIABLE,
    Sources,
)
from arms_doc.provenance import link_template

#: The plugin's name under ``plugins:``.
PLUGIN = "arms-doc"
#: The files looked for in the current folder when no config file is named, in MkDocs' order.
CONFIG_NAMES = ("mkdocs.yml", "mkdocs.yaml")
#: The options of the plugin's entry (the plugin's ``ArmsDocConfig``), each a string;
#: ``source_link`` and ``measured_page`` may also be null.
OPTIONS = ("registry", "variable", "page", "source_link", "results", "measured_page")
NULLABLE = frozenset({"source_link", "measured_page"})
#: How deep ``INHERIT:`` chains are followed before the file is called circular.
INHERIT_DEPTH = 10


class SiteConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the fix."""


class _Lenient(yaml.SafeLoader):
    """Safe YAML that reads a tag it does not know (``!ENV``, ``!!python/name:``) as null."""


def _unknown_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> None:
    return None


_Lenient.add_multi_constructor("!", _unknown_tag)
_Lenient.add_multi_constructor("tag:yaml.org,2002:python/", _unknown_tag)


@dataclass(frozen=True)
class Site:
    """What a site's config file says that the pages need."""

    #: The folder the file's paths are relative to; the current folder without a file.
    root: Path
    #: The config file, or None when there is none.
    file: Path | None = None
    #: The ``arms-doc`` entry's options, as written.
    options: dict[str, Any] = field(default_factory=dict)
    repo_url: str | None = None


def find_config(given: Path | None, cwd: Path) -> Path | None:
    """The config file to read: ``given`` (which must exist), else the first of
    :data:`CONFIG_NAMES` in ``cwd``, else None."""
    if given is not None:
        if not given.is_file():
            raise SiteConfigError(f"{given}: no such config file; name the site's mkdocs.yml")
        return given
    return next((cwd / name for name in CONFIG_NAMES if (cwd / name).is_file()), None)


def read_site(file: Path | None, cwd: Path) -> Site:
    """The site that ``file`` describes (nothing but the current folder when it is None)."""
    if file is None:
        return Site(root=cwd)
    document = load(file)
    repo_url = document.get("repo_url")
    return Site(
        root=file.parent,
        file=file,
        options=plugin_entry(document.get("plugins"), file),
        repo_url=repo_url if isinstance(repo_url, str) else None,
    )


def load(file: Path, depth: int = 0) -> dict[str, Any]:
    """The file's mapping, with what an ``INHERIT:``ed parent file sets and it does not."""
    try:
        document = yaml.load(file.read_text(encoding="utf-8"), Loader=_Lenient)  # a SafeLoader
    except OSError as exc:
        raise SiteConfigError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark is not None else str(file)
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise SiteConfigError(f"{where}: {problem}; fix the YAML there") from None
    except UnicodeDecodeError:
        raise SiteConfigError(f"{file}: not UTF-8 text; save it as UTF-8") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise SiteConfigError(f"{file}: not a mapping of settings (site_name:, plugins:, ...)")
    parent = document.get("INHERIT")
    if isinstance(parent, str):
        if depth >= INHERIT_DEPTH:
            raise SiteConfigError(
                f"{file}: INHERIT goes {INHERIT_DEPTH} files deep; is it circular?"
            )
        inherited = load(file.parent / parent, depth + 1)
        document = {**inherited, **document}
    return document


def plugin_entry(plugins: object, file: Path) -> dict[str, Any]:
    """The ``arms-doc`` entry's options in a ``plugins:`` value (a list of names and one-key
    mappings, or one mapping); none when the plugin is not listed."""
    entries: list[tuple[object, object]] = []
    if isinstance(plugins, dict):
        entries = list(plugins.items())
    elif isinstance(plugins, list):
        for item in plugins:
            if isinstance(item, dict):
                entries += list(item.items())
            else:
                entries.append((item, None))
    for name, options in entries:
        if name != PLUGIN:
            continue
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise SiteConfigError(f"{file}: the {PLUGIN} entry must be a mapping of options")
        for key, value in options.items():
            if key not in OPTIONS:
                raise SiteConfigError(
                    f"{file}: {PLUGIN} has no option {key!r}; its options are "
                    f"{', '.join(OPTIONS)}"
                )
            if not (isinstance(value, str) or (value is None and key in NULLABLE)):
                raise SiteConfigError(
                    f"{file}: {PLUGIN} option {key!r} must be a string"
                    + (" or null" if key in NULLABLE else "")
                )
        return dict(options)
    return {}


@dataclass(frozen=True)
class Flags:
    """What the command line gave; None where it gave nothing."""

    registry: Path | None = None
    variable: str | None = None
    page: str | None = None
    results: Path | None = None
    measured_page: str | None = None
    no_measured: bool = False
    source_link: str | None = None
    tabs: bool = False


def sources_for(site: Site, flags: Flags, cwd: Path) -> Sources:
    """The pages' sources for ``memsift docs``: a flag, else the site's option, else the
    plugin's default; written pages (no commit named). Not yet checked
    (:meth:`Sources.check`)."""
    options = site.options

    def path(flag: Path | None, option: str, default: str) -> Path:
        if flag is not None:
            return (cwd / flag).resolve()
        return (site.root / str(options.get(option) or default)).resolve()

    measured: str | None
    if flags.no_measured:
        measured = None
    elif flags.measured_page:
        measured = flags.measured_page
    elif "measured_page" in options and options["measured_page"] is None:
        measured = None  # measured_page: null turns the page off, as for the plugin
    else:
        measured = options.get("measured_page") or DEFAULT_MEASURED_PAGE
    return Sources(
        root=site.root.resolve(),
        registry=path(flags.registry, "registry", DEFAULT_REGISTRY),
        results=path(flags.results, "results", DEFAULT_RESULTS),
        variable=flags.variable or options.get("variable") or DEFAULT_VARIABLE,
        page=flags.page or options.get("page") or DEFAULT_PAGE,
        measured_page=measured,
        link_template=flags.source_link or link_template(options.get("source_link"), site.repo_url),
        tabs=flags.tabs,
        written=True,
    )
