"""The snippet syntax of pymdownx.snippets, read in one place (the hooks, the scripts and the tests use it).

A page includes a file, or one section of it, with a snippet line::

    --8<-- "src/seq2seq_attention/model/attention.py:forward"

and a source file marks a section with ``# --8<-- [start:forward]`` ... ``# --8<-- [end:forward]`` (an HTML
comment around the marker in a Markdown file). An *excerpt* is a fence that holds exactly one snippet line.
"""

import re
from pathlib import Path

INCLUDE = re.compile(r'^[ \t]*--8<-- "(?P<path>[^":\n]+)(?::(?P<section>[\w-]+))?"[ \t]*$', re.M)
"""A snippet line: a file, or one section of it."""
MARK = re.compile(r"^\s*(?:#|<!--)\s*--8<--\s*\[(?P<kind>start|end):(?P<name>[\w-]+)\]\s*(?:-->)?\s*$")
"""A section marker line in an included file."""
EXCERPT = re.compile(
    r'^(?P<fence>```+)\{(?P<options>[^}\n]*)\}\n--8<-- "(?P<ref>(?P<path>[^":\n]+)(?::(?P<section>[\w-]+))?)"\n'
    r"(?P=fence)$",
    re.M,
)
"""An excerpt fence (brace form, one snippet line); `options` is what the braces hold (``.python notest ...``)."""
LISTING = re.compile(
    r'^(?P<fence>```+)\{(?P<options>[^}\n]*)\}\n(?P<body>(?:--8<-- "[^"\n]+"\n){2,})(?P=fence)$',
    re.M,
)
"""A listing: a fence (brace form) of two or more snippet lines, shown one after another."""


def includes(text: str) -> list[tuple[str, str | None]]:
    """Every snippet a page includes, as ``(path, section or None)``, in page order."""
    return [(match["path"], match["section"]) for match in INCLUDE.finditer(text)]


def marks(text: str) -> dict[str, dict[str, int]]:
    """The section markers of a file: ``{name: {"start": line, "end": line}}`` (1-based lines; a missing marker is
    simply absent, so a caller can say which one is)."""
    found: dict[str, dict[str, int]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if match := MARK.match(line):
            found.setdefault(match["name"], {})[match["kind"]] = number
    return found


def section_text(path: Path, name: str) -> str | None:
    """The lines between a section's markers (None when the file lacks either marker)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    where = marks("\n".join(lines)).get(name, {})
    return "\n".join(lines[where["start"] : where["end"] - 1]) if set(where) == {"start", "end"} else None
