"""Korean figure labels whenever a Hangul font is installed, whatever matplotlib's font cache holds; a warning
that names the package to install when none is."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from matplotlib import font_manager

from seq2seq_attention.core import plotting as fonts

FILES = fonts.hangul_font_files()

STALE_CACHE = """
from pathlib import Path
import matplotlib
from matplotlib import font_manager
from seq2seq_attention.core.plotting import _maps_hangul
manager = font_manager.fontManager
manager.ttflist = [font for font in manager.ttflist if not _maps_hangul(font.fname)]
path = Path(matplotlib.get_cachedir(), f"fontlist-v{font_manager.FontManager.__version__}.json")
font_manager.json_dump(manager, path)
print(len(manager.ttflist))
"""
"""Writes the font cache of a matplotlib that was set up before any Hangul font was installed."""

DRAW = """
import json, warnings
from matplotlib import font_manager
from seq2seq_attention.core.plotting import hangul_font
from seq2seq_attention.translation.plotting import plot_attention
import torch
cached = [font.name for font in font_manager.fontManager.ttflist]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    figure = plot_attention(torch.full((2, 2), 0.5), ["je", "."], ["i", "."], title="피곤하다")
    figure.canvas.draw()
axis = figure.axes[0]
print(json.dumps({
    "font": hangul_font(), "xlabel": axis.get_xlabel(), "title_font": axis.title.get_fontname(),
    "warnings": [str(w.message) for w in caught],
}))
"""


def _python(code: str, config_dir: Path) -> str:
    env = {**os.environ, "MPLCONFIGDIR": str(config_dir), "MPLBACKEND": "Agg"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
@pytest.mark.skipif(not FILES, reason=f"no font with Hangul is installed (apt-get install {fonts.FONT_PACKAGE})")
def test_korean_labels_with_a_cache_built_before_the_font_was_installed(tmp_path: Path):
    config = tmp_path / "mplconfig"
    config.mkdir()
    _python(STALE_CACHE, config)
    (cache,) = config.glob("fontlist-v*.json")
    names = {font["name"] for font in json.loads(cache.read_text(encoding="utf-8"))["ttflist"]}
    assert not names & set(fonts.HANGUL_FONTS), "the cache still lists a Hangul font"
    drawn = json.loads(_python(DRAW, config).splitlines()[-1])
    assert drawn["font"] is not None and drawn["xlabel"] == "원문 (프랑스어)", drawn
    assert drawn["title_font"] == drawn["font"]
    assert not [w for w in drawn["warnings"] if "missing" in w.lower()], drawn["warnings"]


def test_without_a_hangul_font_labels_are_english_and_a_warning_names_the_package(monkeypatch):
    monkeypatch.setattr(
        font_manager.fontManager,
        "ttflist",
        [font for font in font_manager.fontManager.ttflist if font.name not in fonts.HANGUL_FONTS],
    )
    monkeypatch.setattr(fonts, "hangul_font_files", lambda: [])
    fonts.hangul_font.cache_clear()
    try:
        with pytest.warns(fonts.NoHangulFontWarning, match=f"apt-get install {fonts.FONT_PACKAGE}"):
            assert fonts.label("원문", "source") == ("source", {})
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once per process
            assert fonts.hangul_font() is None
    finally:
        fonts.hangul_font.cache_clear()


@pytest.mark.skipif(not FILES, reason=f"no font with Hangul is installed (apt-get install {fonts.FONT_PACKAGE})")
def test_the_files_found_map_hangul_and_sans_serif_comes_first():
    assert all(fonts._maps_hangul(path) for path in FILES)
    assert "serif" not in Path(FILES[0]).name.lower() or all("serif" in Path(p).name.lower() for p in FILES)
