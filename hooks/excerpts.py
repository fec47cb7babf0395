"""Markdown extension `excerpts`: an excerpt's title comes from its snippet section, and links to those lines.

A source excerpt is a ```` ```{.python notest} ```` fence holding one line, ``--8<-- "src/...py:section"``. A
preprocessor (before pymdownx.snippets) titles it ``path · names`` (what the section defines, methods with their
class, or the definition it is part of); with a `repo_url` (mkdocs.yml: ``REPO_URL``) a postprocessor links the title
to the section's lines in the commit being built. Titles are never typed on the pages (tests/site/test_excerpts.py).
A *listing* (`snippets.LISTING`: one fence of several snippet lines) gets the title ``folder/ · file, file``
(linked to the folder) and, above each part, a comment line ``# file · names`` linked like an excerpt's title.
"""

import ast
import html
import posixpath
import re
import subprocess
from functools import cache

import snippets
from engine import ROOT
from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

TITLE = re.compile(r'\s*title="[^"]*"')
PART = "일부"
"""Said after a definition the section shows only part of."""


class ExcerptError(ValueError):
    """An excerpt names a section its file lacks, or one that defines nothing."""


@cache
def _tree(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"))


@cache
def section_lines(path: str, section: str) -> tuple[int, int]:
    """The first and last non-blank line (1-based) between the section's start and end markers."""
    text = (ROOT / path).read_text(encoding="utf-8")
    lines = text.splitlines()
    marks = snippets.marks(text).get(section, {})
    if set(marks) != {"start", "end"}:
        raise ExcerptError(f"{path} has no section {section!r} (a start or end marker is missing)")
    code = [n for n in range(marks["start"] + 1, marks["end"]) if lines[n - 1].strip()]
    if not code:
        raise ExcerptError(f"{path}: section {section!r} is empty")
    return code[0], code[-1]


def _named(node: ast.AST, in_function: bool) -> list[str]:
    """The names `node` defines: a function or class, or (outside functions) the targets of an assignment."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if in_function:
        return []
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return [target.id for target in targets if isinstance(target, ast.Name)]


def section_names(path: str, section: str) -> str:
    """What the section defines, e.g. ``AdditiveScore.project_keys, AdditiveScore.compare``."""
    first, last = section_lines(path, section)
    inside: list[str] = []
    around = ""

    def visit(body: list[ast.stmt], prefix: str, in_function: bool) -> None:
        nonlocal around
        for node in body:
            if not (names := _named(node, in_function)):
                continue
            start = min(n.lineno for n in [node, *getattr(node, "decorator_list", [])])
            if first <= node.lineno and node.end_lineno <= last:  # a decorator may stand above the start marker
                inside.extend(prefix + name for name in names)
            elif start <= first and last <= node.end_lineno and isinstance(node, ast.ClassDef | ast.FunctionDef):
                around = prefix + node.name
                visit(node.body, f"{around}.", in_function or isinstance(node, ast.FunctionDef))

    visit(_tree(path).body, "", False)
    if inside:
        return ", ".join(inside)
    if around:
        return f"{around} ({PART})"
    raise ExcerptError(f"{path}:{section} defines nothing and lies in no definition; name it on the page")


@cache
def _commit() -> str:
    """The commit being built (the branch CI publishes from when git cannot tell)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "main"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "main"


def line_url(repo_url: str, path: str, section: str) -> str:
    first, last = section_lines(path, section)
    return f"{repo_url.rstrip('/')}/blob/{_commit()}/{path}#L{first}-L{last}"


def is_source_excerpt(match: re.Match) -> bool:
    """An excerpt (`snippets.EXCERPT`) of a section of the package's source, shown and not run."""
    return match["options"].startswith(".python notest") and match["path"].startswith("src/") and bool(match["section"])


def excerpt_title(path: str, section: str) -> str:
    return f"{path} · {section_names(path, section)}"


def listing_parts(body: str) -> list[tuple[str, str]] | None:
    """A listing's parts as ``(path, section)``, when every one is a section of the package's source (else None)."""
    parts = snippets.includes(body)
    return parts if parts and all(path.startswith("src/") and section for path, section in parts) else None


def listing_titles(parts: list[tuple[str, str]]) -> tuple[str, str, list[str]]:
    """The folder the parts' files share, the listing's title (``folder/ · file, file``), and each part's label
    (``file · names``, the comment line above it)."""
    folder = posixpath.commonpath([posixpath.dirname(path) for path, _ in parts])
    files = list(dict.fromkeys(posixpath.relpath(path, folder) for path, _ in parts))
    labels = [f"{posixpath.relpath(path, folder)} · {section_names(path, section)}" for path, section in parts]
    return folder, f"{folder}/ · {', '.join(files)}", labels


class _Titles(Preprocessor):
    """Each source excerpt's fence gets its title (before pymdownx.snippets replaces the snippet line)."""

    def __init__(self, md: Markdown, repo_url: str) -> None:
        super().__init__(md)
        self.repo_url = repo_url.rstrip("/")
        self.links: dict[tuple[str, str], str] = {}
        """With a repository, the links the postprocessor makes: (the span's class, its text) -> the URL."""

    def _titled(self, match: re.Match, title: str, body: str, url: str) -> str:
        if url:
            self.links["filename", html.escape(title)] = url
        options = TITLE.sub("", match["options"].removeprefix(".python notest"))
        return f'```{{.python notest{options} title="{title}"}}\n{body}\n```'

    def run(self, lines: list[str]) -> list[str]:
        self.links.clear()

        def listing(match: re.Match) -> str:
            parts = listing_parts(match["body"])
            if parts is None or not match["options"].startswith(".python notest") or match["fence"] != "```":
                return match[0]
            folder, title, labels = listing_titles(parts)
            for label, (path, section) in zip(labels, parts, strict=True) if self.repo_url else ():
                self.links["c1", html.escape(f"# {label}")] = line_url(self.repo_url, path, section)
            pairs = zip(labels, parts, strict=True)
            body = "\n".join(f'# {label}\n--8<-- "{path}:{section}"' for label, (path, section) in pairs)
            return self._titled(match, title, body, self.repo_url and f"{self.repo_url}/tree/{_commit()}/{folder}")

        def titled(match: re.Match) -> str:
            if not (is_source_excerpt(match) and match["fence"] == "```"):
                return match[0]
            path, section = match["path"], match["section"]
            url = self.repo_url and line_url(self.repo_url, path, section)
            return self._titled(match, excerpt_title(path, section), f'--8<-- "{path}:{section}"', url)

        text = snippets.LISTING.sub(listing, "\n".join(lines))
        return snippets.EXCERPT.sub(titled, text).split("\n")


class _Links(Postprocessor):
    """Each title links to its lines in the repository (a listing: its folder, and each part's label its lines)."""

    def run(self, text: str) -> str:
        for (kind, label), url in self.md.preprocessors["excerpt_titles"].links.items():
            tip = "저장소에서 이 줄 보기" if "#L" in url else "저장소에서 이 폴더 보기"  # a listing's title: its folder
            linked = f'<span class="{kind}"><a href="{html.escape(url)}" title="{tip}">{label}</a></span>'
            text = text.replace(f'<span class="{kind}">{label}</span>', linked)
        return text


class ExcerptsExtension(Extension):
    def __init__(self, **kwargs) -> None:
        self.config = {"repo_url": ["", "the repository the titles link into (none: plain titles)"]}
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.register(_Titles(md, self.getConfig("repo_url") or ""), "excerpt_titles", 38)  # snippets: 32
        md.postprocessors.register(_Links(md), "excerpt_links", 15)  # after the raw HTML is back (30)


makeExtension = ExcerptsExtension  # noqa: N816 (Python-Markdown's name)
