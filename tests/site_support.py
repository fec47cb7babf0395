"""What the site tests share: where the repository is, and a built site (see `conftest.py`)."""

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

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
