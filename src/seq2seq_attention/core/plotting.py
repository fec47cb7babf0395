"""What the figures of both tasks share: Korean text, with a Hangul font when one is installed, English labels
otherwise.

The site's figures speak Korean. matplotlib's default font has no Hangul, so a Korean label
needs a CJK font (Debian: `apt-get install fonts-noto-cjk`); without one, a figure falls back
to its English labels rather than drawing empty boxes, and a warning names the package to install.

matplotlib lists the installed fonts once, in a cache under its config folder (`MPLCONFIGDIR`),
and does not look again: a font installed after that cache was built is not in its list. So when
the list has no Hangul font, `hangul_font` looks for the font files itself (fontconfig's
``fc-list :lang=ko``, then the standard font folders) and registers the first one that covers
Hangul with matplotlib's font manager.
"""

import functools
import re
import shutil
import subprocess
import warnings
from pathlib import Path

from matplotlib import font_manager, ft2font

HANGUL_FONTS = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans KR", "NanumGothic", "Malgun Gothic", "AppleGothic")
"""Fonts tried in this order; the first one installed is used."""

FONT_PACKAGE = "fonts-noto-cjk"
"""The Debian (and Ubuntu) package of a Hangul font, named by the warning when none is found."""

HANGUL_SYLLABLE = 0xAC00
"""'가', the first Hangul syllable: a font that maps it covers Hangul."""

_NAME_HINTS = re.compile(r"cjk|kr|korea|hangul|nanum|gothic|malgun|gulim|batang|dotum|baekmuk|unfonts", re.I)
"""File names worth opening when fontconfig cannot be asked (a scan opens these only)."""


class NoHangulFontWarning(UserWarning):
    """No font with Hangul is installed: figures use their English labels."""


@functools.cache
def hangul_font() -> str | None:
    """The name of an installed font with Hangul, or None (with a `NoHangulFontWarning`, once).

    A font that matplotlib's cached list misses (installed after the cache was built) is found on
    disk and registered (`register_hangul_font`).
    """
    name = _listed_hangul_font() or register_hangul_font()
    if name is None:
        warnings.warn(
            "no font with Hangul is installed, so figures use their English labels; "
            f"install one, e.g. `apt-get install {FONT_PACKAGE}` (Debian, Ubuntu)",
            NoHangulFontWarning,
            stacklevel=2,
        )
    return name


def _listed_hangul_font() -> str | None:
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in HANGUL_FONTS if name in installed), None)


def register_hangul_font() -> str | None:
    """Find a font file with Hangul on disk, add it to matplotlib's font manager and return its name.

    Returns None when no installed font covers Hangul.
    """
    for path in hangul_font_files():
        try:
            font_manager.fontManager.addfont(path)
            first_face = font_manager.ttfFontProperty(ft2font.FT2Font(path)).name
        except (OSError, RuntimeError, ValueError):  # unreadable or not a font: try the next file
            continue
        return _listed_hangul_font() or first_face
    return None


def hangul_font_files() -> list[str]:
    """Font files that map Hangul: fontconfig's (``fc-list :lang=ko``), else those found in the standard
    font folders; sans-serif regular faces first."""
    files = _fontconfig_files() or [
        path for path in font_manager.findSystemFonts() if _NAME_HINTS.search(Path(path).name)
    ]
    covering = [path for path in dict.fromkeys(files) if _maps_hangul(path)]
    return sorted(covering, key=lambda path: ("serif" in Path(path).name.lower(), "bold" in path.lower(), path))


def _fontconfig_files() -> list[str]:
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    try:
        listed = subprocess.run(
            [fc_list, ":lang=ko", "file"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.rsplit(":", 1)[0].strip() for line in listed.splitlines() if line.strip()]


def _maps_hangul(path: str) -> bool:
    try:
        return HANGUL_SYLLABLE in ft2font.FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return False


def label(korean: str, english: str) -> tuple[str, dict[str, str]]:
    """A label and the text options to draw it: Korean in a Hangul font where one exists, else English."""
    font = hangul_font()
    return (korean, {"fontfamily": font}) if font else (english, {})
