"""Draws the site's six model diagrams as SVG into docs/assets/diagrams/ (Korean labels, the notation page's symbols).

    python scripts/draw_diagrams.py           # writes the files whose text changed
    python scripts/draw_diagrams.py --check   # exits 1 if a committed file differs from what this script draws

Every diagram is 360 units wide and drawn top to bottom, so at a phone's 390 px column it shows at about its own
size (13 px labels). The pages include the files inline (`--8<--`), so the colours come from the site's stylesheet
(`docs/assets/stylesheets/extra.css`, light and dark scheme); the presentation attributes written here are only
what a file opened on its own shows. Math is written `$s_{t-1}$` in a label and drawn as text with subscripts
(no KaTeX inside a picture).
"""

import argparse
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

OUT = Path(__file__).resolve().parent.parent / "docs" / "assets" / "diagrams"
WIDTH = 360
SCALE_ON_DESKTOP = 1.3
FONT = 13
SMALL = 11.5
# What a file shows on its own (light colours); the site overrides these per scheme with CSS.
FILLS = {
    "plain": "#ffffff",
    "query": "#dbeafe",
    "key": "#dcfce7",
    "context": "#ffedd5",
    "truth": "#dcfce7",
    "error": "#fee2e2",
    "pad": "#e5e7eb",
    "bar": "#c7d2fe",
}
STROKE = "#6b7280"
TEXT = "#111827"
GREEK = {r"\alpha": "α", r"\sum": "Σ", r"\top": "⊤", r"\dots": "…", r"\infty": "∞", r"\tanh": "tanh"}
GREEK.update({r"\mathrm{emb}": "emb", r"\to": "→", r"\leftarrow": "←", r"\rightarrow": "→"})


def _math(source: str, size: float) -> str:
    """`s_{t-1}` as SVG text: italic Latin letters, upright digits and words, subscripts and superscripts by `dy`."""
    for command, symbol in GREEK.items():
        source = source.replace(command, f"\x00{symbol}\x01")  # \x00..\x01: upright, never italic
    out, shift = [], 0.0
    small = f'font-size="{size * 0.8:.1f}"'
    pattern = r"([_^])(\{[^}]*\}|\x00[^\x01]*\x01|.)|\x00([^\x01]*)\x01|([A-Za-zα])|(.)"
    for script, group, word, letter, other in re.findall(pattern, source):
        if script:
            target = size * (0.28 if script == "_" else -0.38)
            body = group.strip("{}").replace("\x00", "").replace("\x01", "").replace("-", "−")
            inner = "".join(
                f'<tspan font-style="italic">{escape(c)}</tspan>' if c.isalpha() and c != "⊤" else escape(c)
                for c in body
            )
            out.append(f'<tspan dy="{target - shift:.1f}" {small}>{inner}</tspan>')
            shift = target
            continue
        back = f' dy="{-shift:.1f}"' if shift else ""
        shift = 0.0
        if word:
            out.append(f"<tspan{back}>{escape(word)}</tspan>")
        elif letter:
            out.append(f'<tspan{back} font-style="italic">{escape(letter)}</tspan>')
        else:
            out.append(f"<tspan{back}>{escape(other.replace('-', '−'))}</tspan>")
    return "".join(out)


def rich(label: str, size: float) -> str:
    """A label with `$...$` math parts, as the inside of an SVG <text>."""
    parts = label.split("$")
    return "".join(_math(part, size) if i % 2 else escape(part) for i, part in enumerate(parts))


class Diagram:
    """One SVG: boxes (a rect and centred lines in a group), free text, arrows."""

    def __init__(self, name: str, height: int, title: str):
        self.name, self.height, self.title = name, height, title
        self.parts: list[str] = []
        self.arrow_kinds: set[str] = set()

    def box(self, x, y, w, h, lines, kind="plain", size=FONT, rx=6):
        lines = [lines] if isinstance(lines, str) else lines
        step = size * 1.3
        first = y + h / 2 - (len(lines) - 1) * step / 2 + size * 0.36
        texts = "".join(
            f'<text x="{x + w / 2:g}" y="{first + i * step:.1f}" font-size="{size:g}" text-anchor="middle" '
            f'fill="{TEXT}">{rich(line, size)}</text>'
            for i, line in enumerate(lines)
        )
        self.parts.append(
            f'<g class="dg-node dg-{kind}"><rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{rx}" '
            f'fill="{FILLS[kind]}" stroke="{STROKE}"/>{texts}</g>'
        )

    def text(self, x, y, label, size=SMALL, anchor="middle", kind="caption"):
        self.parts.append(
            f'<text class="dg-{kind}" x="{x:g}" y="{y:g}" font-size="{size:g}" text-anchor="{anchor}" '
            f'fill="{TEXT}">{rich(label, size)}</text>'
        )

    def arrow(self, *points, kind="plain", dashed=False):
        self.arrow_kinds.add(kind)
        path = " ".join(f"{'M' if i == 0 else 'L'}{x:g},{y:g}" for i, (x, y) in enumerate(points))
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        self.parts.append(
            f'<path class="dg-arrow dg-arrow-{kind}" d="{path}" fill="none" stroke="{STROKE}" stroke-width="1.5"'
            f'{dash} marker-end="url(#{self.name}-head-{kind})"/>'
        )

    def svg(self) -> str:
        markers = "".join(
            f'<marker id="{self.name}-head-{kind}" class="dg-head dg-head-{kind}" viewBox="0 0 10 10" refX="9" '
            f'refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{STROKE}"/></marker>'
            for kind in sorted(self.arrow_kinds)
        )
        width = round(WIDTH * SCALE_ON_DESKTOP)
        height = round(self.height * SCALE_ON_DESKTOP)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="dg" id="dg-{self.name}" viewBox="0 0 {WIDTH} '
            f'{self.height}" width="{width}" height="{height}" role="img" aria-labelledby="dg-{self.name}-title" '
            f'font-family="sans-serif">\n<title id="dg-{self.name}-title">{escape(self.title)}</title>\n'
            f"<defs>{markers}</defs>\n" + "\n".join(self.parts) + "\n</svg>\n"
        )


COLUMNS = [52, 137, 222, 307]
CELL = 64


def _unrolled_row(d: Diagram, y: int, states: list[str], kind: str = "plain") -> None:
    """Four GRU cells side by side, each passing its state to the next."""
    for c, state in zip(COLUMNS, states, strict=True):
        d.box(c - CELL / 2, y, CELL, 34, state, kind)
    for a, b in zip(COLUMNS, COLUMNS[1:], strict=False):
        d.arrow((a + CELL / 2, y + 17), (b - CELL / 2, y + 17))


def seq2seq_unrolled() -> Diagram:
    d = Diagram("seq2seq-unrolled", 300, "시간 축으로 펼친 인코더와 디코더: 고정 길이 문맥 벡터 하나가 둘을 잇는다")
    d.text(8, 18, "인코더: 원문을 한 단어씩 읽는다", anchor="start")
    for c, token in zip(COLUMNS, ["je", "suis", "fatigué", "<eos>"], strict=True):
        d.text(c, 44, token, size=FONT)
        d.arrow((c, 50), (c, 63))
    _unrolled_row(d, 64, ["$h_1$", "$h_2$", "$h_3$", "$h_4$"])
    d.arrow((COLUMNS[-1], 98), (COLUMNS[-1], 123))
    d.box(20, 124, 320, 42, ["문맥 벡터 $s_0 = h_4$", "문장 길이와 상관없이 $H$개의 수"], "context", size=12)
    d.arrow((20, 145), (8, 145), (8, 243), (19, 243))
    d.text(20, 190, "디코더: 번역문을 한 단어씩 만든다", anchor="start")
    for c, token in zip(COLUMNS, ["<sos>", "i", "am", "tired"], strict=True):
        d.text(c, 212, token, size=FONT)
        d.arrow((c, 217), (c, 225))
    _unrolled_row(d, 226, ["$s_1$", "$s_2$", "$s_3$", "$s_4$"])
    for c, token in zip(COLUMNS, ["i", "am", "tired", "<eos>"], strict=True):
        d.arrow((c, 260), (c, 273))
        d.text(c, 290, token, size=FONT, kind="output")
    return d


def _decoder_panel(d: Diagram, y0: int, caption: str, inputs, outputs, fed_back: bool) -> None:
    d.text(8, y0 + 14, caption, anchor="start")
    for c, (token, kind) in zip(COLUMNS, inputs, strict=True):
        d.box(c - 28, y0 + 26, 56, 24, token, kind, size=12)
        d.arrow((c, y0 + 50), (c, y0 + 61))
    _unrolled_row(d, y0 + 62, ["$s_1$", "$s_2$", "$s_3$", "$s_4$"])
    for c, (token, kind) in zip(COLUMNS, outputs, strict=True):
        d.arrow((c, y0 + 96), (c, y0 + 107))
        d.box(c - 28, y0 + 108, 56, 24, token, kind, size=12)
    if fed_back:
        for a, b in zip(COLUMNS, COLUMNS[1:], strict=False):
            gap = (a + b) / 2
            d.arrow((a + 28, y0 + 120), (gap, y0 + 120), (gap, y0 + 38), (b - 29, y0 + 38), kind="query", dashed=True)


def teacher_forcing() -> Diagram:
    d = Diagram("teacher-forcing", 318, "교사 강요와 추론: 학습 때와 번역할 때 디코더가 받는 입력의 차이")
    _decoder_panel(
        d,
        0,
        "교사 강요 (학습): 다음 입력은 언제나 정답",
        [("<sos>", "plain"), ("i", "truth"), ("am", "truth"), ("tired", "truth")],
        [("i", "plain"), ("was", "error"), ("tired", "plain"), ("<eos>", "plain")],
        fed_back=False,
    )
    _decoder_panel(
        d,
        146,
        "추론 (free running): 다음 입력은 자기 예측",
        [("<sos>", "plain"), ("i", "plain"), ("was", "error"), ("so", "error")],
        [("i", "plain"), ("was", "error"), ("so", "error"), ("sad", "error")],
        fed_back=True,
    )
    d.text(8, 296, "초록: 정답 토큰, 빨강: 틀린 예측. 추론에서는 한 번의 실수가", anchor="start")
    d.text(8, 312, "다음 입력이 되어 쌓인다 (노출 편향).", anchor="start")
    return d


def bahdanau_step() -> Diagram:
    d = Diagram("bahdanau-step", 500, "바다나우 디코더의 한 스텝: 쿼리와 키, 점수, 소프트맥스, 문맥 벡터, GRU 입력")
    d.box(16, 8, 116, 44, ["쿼리 $s_{t-1}$", "직전 은닉 상태"], "query", size=12)
    d.text(245, 18, "키 $h_1, \\dots, h_4$ (인코더 출력)", size=SMALL)
    keys = [172, 217, 262, 307]
    for i, k in enumerate(keys, 1):
        d.box(k - 20, 26, 40, 26, f"$h_{i}$", "key", size=12)
    d.arrow((74, 52), (74, 71))
    d.arrow((245, 52), (245, 71))
    d.box(16, 72, 116, 30, "$W_a s_{t-1}$", "query", size=12)
    d.box(152, 72, 175, 30, "$U_a h_j$ (문장마다 한 번)", "key", size=12)
    d.arrow((74, 102), (130, 123))
    d.arrow((245, 102), (230, 123))
    d.box(40, 124, 280, 44, ["점수 $e_{tj}$: 위치마다 수 하나", "$v_a^\\top \\tanh(W_a s_{t-1} + U_a h_j)$"], size=12)
    d.arrow((180, 168), (180, 183))
    d.box(130, 184, 100, 26, "소프트맥스", size=12)
    d.arrow((180, 210), (180, 225))
    weights = [0.10, 0.62, 0.21, 0.07]
    base, tallest = 300, 70
    d.text(16, 244, "어텐션", anchor="start")
    d.text(16, 260, "가중치 $\\alpha_{tj}$", anchor="start")
    d.text(16, 276, "(합이 1)", anchor="start")
    for i, (k, w) in enumerate(zip(keys, weights, strict=True), 1):
        top = base - w * tallest / max(weights)
        d.box(k - 16, top, 32, base - top, "", "bar", rx=2)
        d.text(k, top - 4, f"{w:.2f}", size=SMALL)
        d.text(k, base + 16, f"$\\alpha_{{t{i}}}$", size=12)
    d.arrow((334, 39), (346, 39), (346, 345), (301, 345), kind="key", dashed=True)
    d.text(341, 214, "값", size=SMALL, anchor="end")
    d.arrow((180, 322), (180, 331))
    d.box(60, 332, 240, 30, "문맥 벡터 $c_t = \\sum_j \\alpha_{tj} h_j$", "context", size=12)
    d.arrow((180, 362), (180, 381))
    d.box(40, 382, 280, 44, ["GRU 입력 $[\\mathrm{emb}(y_{t-1}); c_t]$", "GRU 은닉 상태 $s_{t-1}$"], size=12)
    d.arrow((16, 30), (6, 30), (6, 404), (39, 404), kind="query", dashed=True)
    d.arrow((180, 426), (180, 445))
    d.box(100, 446, 160, 44, ["새 은닉 상태 $s_t$", "다음 스텝의 쿼리"], "query", size=12)
    return d


def bahdanau_luong() -> Diagram:
    d = Diagram("bahdanau-luong", 400, "바다나우와 루옹 디코더: 쿼리를 GRU 앞에서 쓰는가, 뒤에서 쓰는가")
    left, right, w = 16, 196, 150
    d.box(left, 6, w, 40, ["바다나우", "AttnDecoderRNN"], size=12)
    d.box(right, 6, w, 40, ["루옹", "LuongAttnDecoderRNN"], size=12)
    rows = [60, 124, 188, 252, 316]
    bahdanau = [
        (["직전 은닉 상태 $s_{t-1}$"], "plain"),
        (["어텐션", "쿼리 = $s_{t-1}$ → $c_t$"], "query"),
        (["GRU", "입력 $[\\mathrm{emb}(y_{t-1}); c_t]$"], "plain"),
        (["새 은닉 상태 $s_t$"], "plain"),
        (["출력층", "$s_t$ → 단어 분포"], "plain"),
    ]
    luong = [
        (["직전 은닉 상태 $s_{t-1}$"], "plain"),
        (["GRU", "입력 $\\mathrm{emb}(y_{t-1})$"], "plain"),
        (["새 은닉 상태 $s_t$"], "plain"),
        (["어텐션", "쿼리 = $s_t$ → $a_t$"], "query"),
        (["출력층", "$[a_t; s_t]$ → tanh → 분포"], "plain"),
    ]
    for x, column in ((left, bahdanau), (right, luong)):
        for y, (lines, kind) in zip(rows, column, strict=True):
            d.box(x, y, w, 44, lines, kind, size=12)
        for a, b in zip(rows, rows[1:], strict=False):
            d.arrow((x + w / 2, a + 44), (x + w / 2, b - 1))
    # the state skips the box between: s_{t-1} into Bahdanau's GRU, s_t into Luong's output layer
    d.arrow((left, 82), (6, 82), (6, 210), (left - 1, 210), dashed=True)
    d.arrow((right + w, 210), (354, 210), (354, 338), (right + w + 1, 338), dashed=True)
    d.text(180, 382, "쿼리: 바다나우는 GRU 앞의 $s_{t-1}$, 루옹은 GRU 뒤의 $s_t$", size=12)
    return d


def padding_mask() -> Diagram:
    d = Diagram("padding-mask", 332, "패딩 마스크: 패딩 위치의 점수를 가려 어텐션 가중치를 정확히 0으로 만든다")
    x0, step, cell = 66, 58, 54

    def row(y, label, cells):
        d.text(8, y + 17, label, size=12, anchor="start")
        for i, (value, kind) in enumerate(cells):
            d.box(x0 + i * step, y, cell, 24, value, kind, size=12, rx=3)

    d.text(8, 16, "배치 ($B = 2$, $S = 5$): 짧은 문장 뒤를 <pad>로 채운다", anchor="start")
    row(24, "문장 1", [(t, "plain") for t in ["je", "suis", "là", ".", "<eos>"]])
    row(52, "문장 2", [("oui", "plain"), (".", "plain"), ("<eos>", "plain"), ("<pad>", "pad"), ("<pad>", "pad")])
    d.text(8, 102, "마스크 (lengths = [5, 3]): 실제 단어만 True", anchor="start")
    row(110, "문장 1", [("True", "plain")] * 5)
    row(138, "문장 2", [("True", "plain")] * 3 + [("False", "pad")] * 2)
    scores = [1.2, 0.3, 2.0]
    d.text(8, 188, "문장 2의 점수 $e_{tj}$: 가린 곳은 float의 최솟값", anchor="start")
    row(196, "점수", [(f"{s:.1f}", "plain") for s in scores] + [("최솟값", "pad")] * 2)
    total = sum(math.exp(s) for s in scores)
    weights = [math.exp(s) / total for s in scores]
    d.text(8, 246, "소프트맥스 뒤의 어텐션 가중치 $\\alpha_{tj}$", anchor="start")
    row(254, "가중치", [(f"{w:.2f}", "bar") for w in weights] + [("0", "pad")] * 2)
    d.text(8, 304, f"합 = {sum(round(w, 2) for w in weights):.2f}, 패딩 위치는 정확히 0:", anchor="start")
    d.text(8, 322, "<pad>는 문맥 벡터에 섞이지 않는다.", anchor="start")
    return d


def classifier() -> Diagram:
    d = Diagram("classifier", 540, "BiLSTM 감성 분류기와 어텐션 풀링: 마지막 상태가 쿼리, 위치마다의 출력이 키")
    xs = [46, 112, 178, 244, 310]
    tokens = ["the", "food", "was", "great", "<pad>"]
    for x, token in zip(xs, tokens, strict=True):
        d.box(x - 29, 6, 58, 24, token, "pad" if token == "<pad>" else "plain", size=12, rx=3)
    d.arrow((180, 30), (180, 43))
    d.box(16, 44, 328, 28, "임베딩 (<pad>는 0 벡터)", size=12)
    d.arrow((180, 72), (180, 85))
    d.box(16, 86, 328, 44, ["BiLSTM 1: 정방향 →, 역방향 ←", "길이만큼만 읽는다 (pack): 패딩은 읽지 않음"], size=12)
    d.arrow((180, 130), (180, 143))
    d.box(16, 144, 328, 28, "BiLSTM 2", size=12)
    for i, x in enumerate(xs[:4], 1):
        d.arrow((x, 172), (x, 185))
        d.box(x - 24, 186, 48, 26, f"$h_{i}$", "key", size=12)
    d.box(xs[4] - 24, 186, 48, 26, "패딩", "pad", size=12)
    d.text(16, 228, "키 $h_j$: 위치 출력 (두 방향을 이은 $2H$)", anchor="start")
    d.box(
        16, 240, 328, 44, ["쿼리 $q$: 둘째 BiLSTM의 마지막 은닉 상태", "정방향 끝 + 역방향 끝 ($2H$)"], "query", size=12
    )
    d.arrow((180, 284), (180, 297))
    d.box(16, 298, 328, 28, "바다나우 어텐션 + 마스크", size=12)
    weights = [0.08, 0.17, 0.12, 0.63, 0.0]
    base, tallest = 392, 50
    for i, (x, w) in enumerate(zip(xs, weights, strict=True), 1):
        top = base - w * tallest / max(weights)
        if w:
            d.box(x - 16, top, 32, base - top, "", "bar", rx=2)
        d.text(x, top - 4, f"{w:.2f}" if w else "0", size=SMALL)
        d.text(x, base + 16, f"$\\alpha_{i}$", size=12)
    d.arrow((211, 404), (211, 423))
    d.box(16, 424, 328, 28, "문맥 벡터 $c = \\sum_j \\alpha_j h_j$", "context", size=12)
    d.arrow((180, 452), (180, 465))
    d.box(16, 466, 328, 28, "Dense(20, ReLU) → Dropout(0.5)", size=12)
    d.arrow((180, 494), (180, 507))
    d.box(16, 508, 328, 28, "출력: 로짓 하나 → 긍정 / 부정", size=12)
    return d


DIAGRAMS = (seq2seq_unrolled, teacher_forcing, bahdanau_step, bahdanau_luong, padding_mask, classifier)


def drawn() -> dict[str, str]:
    """Every diagram's file name and SVG text."""
    return {f"{d.name}.svg": d.svg() for d in (make() for make in DIAGRAMS)}


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare the committed files with the drawing")
    args = parser.parse_args(argv)
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in drawn().items():
        path = OUT / name
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(name)
        if not args.check:
            _write_atomically(path, text)
    if args.check and stale:
        print("differs from scripts/draw_diagrams.py: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(("stale: " if args.check else "wrote: ") + (", ".join(stale) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
