"""arms_doc: an MkDocs plugin that renders memsift's arms reference page from the registry.

The plugin needs packages memsift's core install leaves out; they come with the docs extra.
Without them, importing the plugin (as MkDocs does for ``plugins: - arms-doc``) stops with one
line naming the extra, reported by MkDocs as a configuration error, not as a traceback from
deep inside an import.
"""

from importlib.util import find_spec

#: The modules the plugin imports beyond memsift's core.
NEEDS = ("mkdocs", "jinja2")
INSTALL = "pip install 'memsift[docs]'"

try:  # MkDocs reports a ValidationError raised while it loads a plugin as one line
    from mkdocs.config.base import ValidationError as _Reported
except ImportError:
    _Reported = Exception  # type: ignore[assignment,misc]


class DocsExtraMissing(ImportError, _Reported):  # type: ignore[misc,valid-type]
    """A package of the docs extra is not installed; ``missing`` names them (``memsift docs``
    words its own line with them)."""

    missing: tuple[str, ...] = ()


if missing := [name for name in NEEDS if find_spec(name) is None]:
    _error = DocsExtraMissing(
        f"the arms-doc plugin needs the docs extra: {INSTALL} (missing: {', '.join(missing)})"
    )
    _error.missing = tuple(missing)
    raise _error
