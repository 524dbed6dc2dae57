"""Where the page came from: the registry file, each arm's lines, the commit.

Git is asked, never required: without git, or outside a work tree, the page simply does not
name a commit.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

#: Placeholders a ``source_link`` template may use.
LINK_FIELDS = ("commit", "path", "start", "end")
#: The commit-ish used in links when the commit is not known.
FALLBACK_REF = "HEAD"
GIT_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class GitInfo:
    """The registry's place in a git work tree."""

    commit: str
    #: The registry's path relative to the work tree root.
    path: str
    #: True when the registry file differs from the commit (or is not committed at all).
    dirty: bool


def git_info(file: Path) -> GitInfo | None:
    """What git knows about ``file``; None without git, outside a work tree, before a commit."""
    folder = str(file.parent)
    # One process for both: it fails outside a work tree and before the first commit.
    found = run_git(folder, "rev-parse", "--show-toplevel", "--short", "HEAD")
    if found is None or len(found.splitlines()) != 2:
        return None
    top, commit = found.splitlines()
    status = run_git(folder, "status", "--porcelain", "--", file.name)
    try:
        relative = file.resolve().relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        return None
    return GitInfo(commit=commit, path=relative, dirty=bool(status))


def run_git(folder: str, *args: str) -> str | None:
    """Stripped stdout of a git command, or None if it cannot run or fails."""
    try:
        done = subprocess.run(
            ["git", "-C", folder, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip()


def link_template(source_link: str | None, repo_url: str | None) -> str | None:
    """The template for line links: the option, else a GitHub-style one from ``repo_url``."""
    if source_link:
        return source_link
    if repo_url:
        return repo_url.rstrip("/") + "/blob/{commit}/{path}#L{start}-L{end}"
    return None


def check_link_template(template: str) -> str | None:
    """Why ``template`` cannot be formatted, or None when it can."""
    try:
        template.format(commit="0", path="p", start=1, end=2)
    except KeyError as exc:
        return f"unknown placeholder {{{exc.args[0]}}}; use " + ", ".join(
            "{" + name + "}" for name in LINK_FIELDS
        )
    except (IndexError, ValueError) as exc:
        return f"not a valid format string ({exc}); use named placeholders like {{path}}"
    return None


def line_link(template: str | None, *, commit: str | None, path: str, start: int, end: int) -> str:
    """The URL of lines ``start``..``end`` of ``path``; empty without a template."""
    if not template:
        return ""
    return template.format(commit=commit or FALLBACK_REF, path=path, start=start, end=end)


def file_link(template: str | None, *, commit: str | None, path: str) -> str:
    """The URL of the whole file ``path``: a line link without its fragment (what follows
    ``#``, where the template puts the lines); empty without a template."""
    url = line_link(template, commit=commit, path=path, start=1, end=1)
    head, hash_mark, _ = url.partition("#")
    return head if hash_mark and head.endswith(path) else url
