"""Korean text in figures: a Hangul font when one is installed, English labels otherwise.

The site's figures speak Korean. matplotlib's default font has no Hangul, so a Korean label
needs a CJK font (Debian: `apt-get install fonts-noto-cjk`); without one, a figure falls back
to its English labels rather than drawing empty boxes.
"""

import functools

from matplotlib import font_manager

HANGUL_FONTS = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans KR", "NanumGothic", "Malgun Gothic", "AppleGothic")
"""Fonts tried in this order; the first one installed is used."""


@functools.cache
def hangul_font() -> str | None:
    """The name of an installed font with Hangul, or None."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in HANGUL_FONTS if name in installed), None)


def label(korean: str, english: str) -> tuple[str, dict[str, str]]:
    """A label and the text options to draw it: Korean in a Hangul font where one exists, else English."""
    font = hangul_font()
    return (korean, {"fontfamily": font}) if font else (english, {})
