"""Code on a phone: a wrapped line keeps its indentation, and a shell flag is never split.

`pymdownx.highlight` (`line_spans: __span` in mkdocs.yml) puts every line of a code block in its own
`<span id="__span-B-L">`; this hook writes the line's indentation on it (`style="--indent:8"`), and the
stylesheet turns that into a hanging indent: a line too long for the box continues under its own text,
4 columns further in, instead of at column 0. In every `<code>` (blocks and inline), a flag such as
`--epochs` or a hyphenated word such as `seq2seq-attention` goes in a `<span class="nowrap">`, so the
line never breaks after its hyphens. Only markup changes: the text (what the copy button copies, and what
search indexes) stays as it was.
"""

import re

CODE = re.compile(r"(<code\b[^>]*>)(.*?)(</code>)", re.S)
LINE = re.compile(r'<span id="__span-\d+-\d+">')
TAG = re.compile(r"(<[^>]+>)")
UNBROKEN = re.compile(r"(?<![\w-])--?[A-Za-z][\w.-]*|\b[\w.]+(?:-[\w.]+)+")


def _indent(code: str, start: int) -> int:
    """How many spaces the line that starts at `start` begins with (tags skipped)."""
    end = code.find("\n", start)
    text = TAG.sub("", code[start : end if end >= 0 else len(code)])
    return len(text) - len(text.lstrip(" "))


def _mark_lines(code: str) -> str:
    return LINE.sub(lambda m: f'{m.group(0)[:-1]} style="--indent:{_indent(code, m.end())}">', code)


def _keep_together(code: str) -> str:
    parts = TAG.split(code)
    for i in range(0, len(parts), 2):  # text between tags (even indices); tags stay as they are
        parts[i] = UNBROKEN.sub(lambda m: f'<span class="nowrap">{m.group(0)}</span>', parts[i])
    return "".join(parts)


def on_page_content(html: str, **_) -> str:
    return CODE.sub(lambda m: m.group(1) + _keep_together(_mark_lines(m.group(2))) + m.group(3), html)
