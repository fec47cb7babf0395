"""What a Markdown extension of this site knows of the page it renders, under MkDocs or Zensical.

Python-Markdown gives an extension the text, not the page. Each engine leaves the page on the `Markdown` instance it
renders with: MkDocs its ``relpath`` treeprocessor (which holds the page's `File`), Zensical its rendering-context
preprocessor (which holds the page). `page_of` reads whichever is there; the extensions need the page's path (a link
relative to it) and its URL (the live page's URL relative to it).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from markdown import Markdown

ROOT = Path(__file__).resolve().parent.parent
"""The repository these extensions belong to."""


@dataclass(frozen=True)
class PageInfo:
    """A page: its path in the docs folder (``attention/scores.md``) and its URL (``attention/scores.html``)."""

    path: str
    url: str


def page_of(md: Markdown) -> PageInfo | None:
    """The page `md` renders (None when it renders text outside a site, e.g. in a test)."""
    if "relpath" in md.treeprocessors:  # MkDocs
        file = md.treeprocessors["relpath"].file
        return PageInfo(file.src_uri, file.url)
    for processor in md.preprocessors:  # Zensical's zensical.extensions.context.ContextPreprocessor
        if type(processor).__name__ == "ContextPreprocessor" and (page := getattr(processor, "page", None)) is not None:
            return PageInfo(str(page.path).replace("\\", "/"), str(page.url))
    return None


def relative(target: str, page: PageInfo) -> str:
    """The URL of `target` (a path in the built site, ``live.html``) from `page`."""
    url = page.url.lstrip("/")
    folder = url if url.endswith("/") else posixpath.dirname(url)
    return posixpath.relpath(target, folder or ".")


def per_version(load: Callable[[Path], object]) -> Callable[[Path], object]:
    """`load(path)`, read once per version of the file (its modification time; 0 when there is none)."""
    cached = functools.cache(lambda path, changed: load(path))
    return lambda path: cached(path, path.stat().st_mtime if path.is_file() else 0.0)


def stop_build(load: Callable[[Path], object], path: Path) -> None:
    """For a MkDocs hook's `on_config`: a malformed file stops the build with its one line before any page renders."""
    from json_files import FileError
    from mkdocs.exceptions import PluginError

    try:
        load(path)
    except FileError as error:
        raise PluginError(str(error)) from None
