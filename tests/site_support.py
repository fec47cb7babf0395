"""What the site tests share: where the repository is, and a built site (see `conftest.py`)."""

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT_S = 300


@dataclass(frozen=True)
class BuiltSite:
    """A site built by `mkdocs build --strict`.

    Attributes:
        root: the site folder.
        base_path: the path part of `site_url` (e.g. ``/seq2seq-attention/``), which absolute
            links in the 404 page start with.
        log: what mkdocs printed.
    """

    root: Path
    base_path: str
    log: str

    def pages(self) -> list[Path]:
        """Every HTML page of the site, the 404 page included."""
        return sorted(self.root.rglob("*.html"))

    def url_of(self, page: Path) -> str:
        """The page's URL path relative to the site root: ``""``, ``"api/"``, ``"404.html"``."""
        rel = page.relative_to(self.root).as_posix()
        return rel.removesuffix("index.html")


def site_url_path() -> str:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    match = re.search(r"^site_url:\s*(?:!ENV\s*\[\s*\w+\s*,\s*)?[\"']?([^\s\"'\]]+)", config, flags=re.M)
    path = urlsplit(os.environ.get("SITE_URL") or (match.group(1) if match else "/")).path
    return path if path.endswith("/") else path + "/"


class _AnyTagLoader(yaml.SafeLoader):
    """mkdocs.yml with its `!ENV` and `!!python/name:` tags read as plain values (the nav has none)."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> object:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_AnyTagLoader.add_multi_constructor("", _any_tag)


def nav() -> list:
    """The `nav` of mkdocs.yml, as written (a list of `{title: page or list}` and bare page entries)."""
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_AnyTagLoader)["nav"]


def nav_pages(entries: list) -> list[tuple[str | None, str]]:
    """Every page under `entries`, depth first, as (its title in the nav or None, its path under docs/)."""
    pages: list[tuple[str | None, str]] = []
    for entry in entries:
        if isinstance(entry, str):
            pages.append((None, entry))
            continue
        ((title, value),) = entry.items()
        pages += nav_pages(value) if isinstance(value, list) else [(title, value)]
    return pages


def chapters() -> list[tuple[str, list[str]]]:
    """The numbered chapters of the nav ("1. seq2seq와 데이터", ...): (title, their pages in order)."""
    found = []
    for entry in nav():
        if isinstance(entry, dict):
            ((title, value),) = entry.items()
            if re.match(r"\d+\. ", title):  # a section, or a chapter of one page
                found.append((title, [page for _, page in nav_pages(value)] if isinstance(value, list) else [value]))
    return found
