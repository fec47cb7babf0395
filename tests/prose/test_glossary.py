"""One vocabulary: page prose uses the glossary's terms, never the variants the glossary rules out.

The list of ruled-out variants is read from `docs/glossary.md` itself (the last column of its
tables), so the page a reader sees and the check cannot drift apart. Every entry of the glossary
defines its term in one sentence and links to the page (and section) that teaches it. A decoding
step is a 스텝; 단계 is a stage of a procedure, and where the prose says 단계 for a decoding step in a
way a pattern can tell (디코딩 단계, 단계마다, 단계 $t$, ...), the check fails, a reviewed list aside.
What is checked is *prose*: code blocks (with the titles of excerpts, which live in a fence's info string),
inline code, math, link targets, HTML, quotes ("..." and “...”, where the pages quote the original notes or a title)
and an English gloss in parentheses right after a term, e.g. 교사 강요(teacher forcing), are left out.
"""

import html
import re
from pathlib import Path

import pytest
from site_support import chapters, nav, nav_pages
from support import ROOT

DOCS = ROOT / "docs"
GLOSSARY = DOCS / "glossary.md"
# The references page lists authors and titles as published (Bahdanau, Luong): a bibliography, not prose to translate.
REFERENCES = DOCS / "references.md"
PAGES = [page for page in sorted(DOCS.rglob("*.md")) if page not in (GLOSSARY, REFERENCES)]
HEADER = "| 용어 | 뜻 | 영어 | 코드 이름 | 쓰지 않는 말 |"

_LEFT_OUT = [
    re.compile(r"<!--.*?-->", re.S),  # HTML comments
    re.compile(r"^([ \t>]*)(`{3,}|~{3,}).*?^\1\2[ \t]*$", re.M | re.S),  # fences, their info string (titles) too
    re.compile(r"^:::.*(\n[ \t]+.*)*", re.M),  # mkdocstrings directives and their options
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"(?<!\\)\$[^$\n]+\$"),  # inline math
    re.compile(r"`[^`\n]+`"),  # inline code
    re.compile(r"\]\([^)\n]*\)"),  # link and image targets (their text stays: it is prose)
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r"\{[:#.][^}\n]*\}|\{ [#.][^}\n]*\}"),  # attribute lists: { #anchor }, {: .class }
    re.compile(r'"[^"\n]*"|“[^”\n]*”'),  # quotes: the original notes' words, titles
    re.compile(r"\([ -~]*[A-Za-z][ -~]*\)"),  # an English gloss in parentheses: 교사 강요(teacher forcing)
]


def prose(text: str) -> str:
    """The text a reader reads as sentences; what is left out becomes blank, so line numbers stay."""
    for pattern in _LEFT_OUT:
        text = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return text


def ruled_out(glossary: str) -> dict[str, str]:
    """Every ruled-out variant in the glossary's tables, mapped to the term to use instead."""
    return {variant: row["term"] for row in entries(glossary) for variant in re.findall(r"`([^`]+)`", row["variants"])}


def _link_text(cell: str) -> str:
    """The term of a glossary cell: the text of its link, `[교사 강요](seq2seq/training.md#teacher-forcing)`."""
    match = re.fullmatch(r"\[([^\]]+)\]\([^)]+\)", cell)
    return match.group(1) if match else cell


def entries(glossary: str) -> list[dict[str, str]]:
    """Every row of the glossary's tables: its term cell as written, the term, its link target and its meaning."""
    rows, in_table = [], False
    for line in glossary.splitlines():
        if line.strip() == HEADER:
            in_table = True
            continue
        if not in_table or not line.startswith("|"):
            in_table = False
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue
        link = re.fullmatch(r"\[([^\]]+)\]\(([^)]+)\)", cells[0])
        rows.append(
            {
                "cell": cells[0],
                "term": _link_text(cells[0]),
                "target": link.group(2) if link else "",
                "meaning": cells[1],
                "variants": cells[-1],
            }
        )
    return rows


def _pattern(variant: str) -> re.Pattern[str]:
    if variant.isascii():  # a whole English word or phrase, any case, plural too; a Korean particle may follow
        return re.compile(r"(?<![A-Za-z0-9_-])" + _spaced(variant) + r"s?(?![A-Za-z0-9_-])", re.I)
    # A Korean word starts a word (particles follow it): 하이퍼파라미터 does not contain the word 파라미터
    return re.compile(r"(?<!\w)" + _spaced(variant))


def _spaced(variant: str) -> str:
    """The variant as a pattern whose spaces match any run of white space (a line break in a paragraph too)."""
    return r"\s+".join(re.escape(word) for word in variant.split(" "))


def variants_in(text: str, variants: dict[str, str]) -> list[tuple[int, str, str]]:
    """(line, variant found, term to use) for every ruled-out variant in the prose of `text`."""
    text = prose(text)
    spans = [
        (match.span(), match.group(0), term)
        for variant, term in variants.items()
        for match in _pattern(variant).finditer(text)
    ]
    # a variant inside a longer one found at the same place (컨텍스트 in 컨텍스트 벡터) is one finding, not two
    outer = [
        (span, word, term)
        for span, word, term in spans
        if not any(o[0] <= span[0] and span[1] <= o[1] and o != span for o, _, _ in spans)
    ]
    return sorted((text.count("\n", 0, start) + 1, word, term) for (start, _), word, term in outer)


VARIANTS = ruled_out(GLOSSARY.read_text(encoding="utf-8"))


def test_the_glossary_rules_out_variants():
    terms = set(VARIANTS.values())
    assert len(terms) >= 40 and len(VARIANTS) >= 80, (len(terms), len(VARIANTS))
    assert {"문맥 벡터", "위치 출력", "패딩", "바다나우", "교사 강요"} <= terms
    assert VARIANTS["컨텍스트 벡터"] == VARIANTS["context vector"] == "문맥 벡터"
    clashes = [variant for variant in VARIANTS if variant in terms]
    assert clashes == [], "a term cannot also be a ruled-out variant"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_prose_follows_the_glossary(page: Path):
    found = variants_in(page.read_text(encoding="utf-8"), VARIANTS)
    assert not found, "\n".join(
        f"line {line}: {variant!r} -> write {term!r} (docs/glossary.md)" for line, variant, term in found
    )


def test_a_decoding_step_a_translation_and_a_source_have_one_word_each_in_prose():
    """시점 is a 스텝, 타깃 a 번역문, 소스 a 원문 (source code is 코드): the bare words, not only their compounds."""
    assert (VARIANTS["시점"], VARIANTS["타깃"], VARIANTS["소스"]) == ("스텝", "번역문", "원문")
    page = "디코더가 시점 $t$에서 단어를 만듭니다.\n루프는 타깃이 있을 때만 돕니다.\n임베딩된 소스와 소스 문장.\n"
    page += '```python\nx = 1  # 시점\n```\n노트는 "이전 시점의 상태"라고 씁니다.\n'
    assert variants_in(page, VARIANTS) == [(1, "시점", "스텝"), (2, "타깃", "번역문"), (3, "소스", "원문"),
                                           (3, "소스 문장", "원문")]  # fmt: skip
    assert found_in(fence_korean(page), HANGUL_VARIANTS) == ["'시점': 시점 -> 스텝"]


def test_a_planted_variant_is_found_and_code_quotes_and_glosses_are_not():
    page = (
        "# 제목\n\n"
        "인코더의 마지막 상태가 컨텍스트 벡터입니다.\n"  # line 3: ruled out
        "디코더는 Bahdanau 어텐션을 씁니다. padding은 0입니다. 마지막 hidden\nstate\n"  # lines 4-5: three
        "문맥 벡터(context vector)와 교사 강요(teacher forcing)는 괜찮습니다.\n"  # glosses
        '튜토리얼은 "context vector를 만든다"고 썼습니다. `padding_idx`와 $\\text{softmax}$도 괜찮습니다.\n'
        "[바다나우](bahdanau/padding.md) 하이퍼파라미터\n"  # a link target, a longer word
        '```{.python notest title="Bahdanau padding"}\nhidden_state = 1  # context vector\n```\n'
        "```python\nassert 'teacher forcing'\n```\n"
    )
    assert variants_in(page, VARIANTS) == [
        (3, "컨텍스트 벡터", "문맥 벡터"),
        (4, "Bahdanau", "바다나우"),
        (4, "hidden\nstate", "은닉 상태"),
        (4, "padding", "패딩"),
    ]


def test_the_table_reader_reads_the_last_column_only():
    table = (
        f"{HEADER}\n|---|---|---|---|\n| 패딩 | padding | `PAD_IDX` | `padding`, `채움` |\n\n| a | b |\n| `x` | `y` |\n"
    )
    assert ruled_out(table) == {"padding": "패딩", "채움": "패딩"}


def test_the_navigation_follows_the_glossary():
    """The sidebar too: every title in mkdocs.yml's nav (a code name in parentheses aside)."""
    titles = [title for title, _ in nav_pages(nav()) if title] + [title for title, _ in chapters()]
    assert titles
    found = [(title, variant) for title in titles for _, variant, _ in variants_in(title, VARIANTS)]
    assert found == []


DIAGRAMS = sorted((DOCS / "assets" / "diagrams").glob("*.svg"))


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda p: p.name)
def test_the_diagrams_follow_the_glossary(diagram: Path):
    """A diagram's labels are prose too (its <text> and <title>); symbols and code names in them pass as in a page."""
    labels = " ".join(html.unescape(text) for text in re.findall(r">([^<>]+)<", diagram.read_text(encoding="utf-8")))
    assert variants_in(labels, VARIANTS) == []


# Project history: a page teaches the code as it is; what an earlier version of this site or its code did is no
# business of the reader's ("첫 판의 분할", "이전 코드로 돌린 실행").
HISTORY = re.compile(r"첫\s+판|이전\s+판|지난\s+판|초판|이전\s+코드|예전\s+코드|예전\s+학습|옛\s+경로|바꾸기\s+전")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_prose_does_not_narrate_the_project_history(page: Path):
    text = prose(page.read_text(encoding="utf-8"))
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in HISTORY.finditer(text)]
    assert found == [], f"{page.relative_to(DOCS)}: {found}"


def test_the_history_check_sees_a_history_word_and_not_a_tutorial_of_old():
    assert HISTORY.search(prose("첫 판의 분할은 달랐습니다.\n같은 명령을 이전 코드로 돌렸습니다.\n"))
    assert not HISTORY.search(prose("문장을 하나씩 학습하던 예전 PyTorch 튜토리얼의 방식입니다.\n"))


# The code that writes the text of the site's figures and generated tables: titles, axis labels, legends, column
# headers and model names, as the reader sees them in a picture or a table.
FIGURE_AND_TABLE_WRITERS = [
    "src/seq2seq_attention/translation/plotting.py",
    "src/seq2seq_attention/sentiment/figures.py",
    "scripts/draw_diagrams.py",
    "scripts/compare_attention.py",
    "scripts/seq2seq_report.py",
    "scripts/ablation.py",
    "scripts/train_sentiment.py",
    "benchmarks/tables.py",
]
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def korean_strings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string in a Python file a Korean reader sees: literals with Hangul, docstrings aside."""
    import ast

    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and HANGUL.search(node.value)
    ]


@pytest.mark.parametrize("path", FIGURE_AND_TABLE_WRITERS)
def test_figure_and_table_text_follows_the_glossary(path: str):
    """A figure's title or a table's header is prose too: the strings the drawing and table scripts write."""
    found = [
        f"{path}:{line}: {variant!r} -> {term!r} in {text!r}"
        for line, text in korean_strings((ROOT / path).read_text(encoding="utf-8"))
        for _, variant, term in variants_in(text, VARIANTS)
    ]
    found += [
        f"{path}:{line}: history {m.group(0)!r} in {text!r}"
        for line, text in korean_strings((ROOT / path).read_text(encoding="utf-8"))
        for m in HISTORY.finditer(text)
    ]
    assert found == [], "\n".join(found)


def included_tables() -> list[str]:
    """Every generated Markdown file under results/ that a page includes at build time (`--8<-- "results/....md"`)."""
    found = set()
    for page in sorted(DOCS.rglob("*.md")):
        for match in re.finditer(r'^--8<-- "(results/[^":]+\.md)(?::[^"]*)?"', page.read_text(encoding="utf-8"), re.M):
            found.add(match.group(1))
    return sorted(found)


def test_pages_include_generated_tables():
    assert {"results/seq2seq/bleu.ko.md", "results/attention/results.ko.md"} <= set(included_tables())


@pytest.mark.parametrize("table", included_tables())
def test_generated_tables_follow_the_glossary(table: str):
    text = (ROOT / table).read_text(encoding="utf-8")
    text = re.sub(r"^<!-- --8<-- \[(start|end):[^\]]*\] -->$|^# --8<-- .*$", "", text, flags=re.M)
    found = [f"line {line}: {variant!r} -> {term!r}" for line, variant, term in variants_in(text, VARIANTS)]
    found += [f"history {m.group(0)!r}" for m in HISTORY.finditer(prose(text))]
    assert found == [], f"{table} (rewrite it with the script that writes it):\n" + "\n".join(found)


def test_the_figure_text_reader_finds_a_planted_variant_and_skips_docstrings():
    source = '"""모듈 설명: 닷-프로덕트도 괜찮다."""\nNAMES = {"luong": "닷-프로덕트 (루옹)"}\nLABEL = "loss"\n'
    strings = korean_strings(source)
    assert strings == [(2, "닷-프로덕트 (루옹)")]
    assert [variant for _, variant, _ in variants_in(strings[0][1], VARIANTS)] == ["닷-프로덕트"]


# One line of meaning and a way to the lesson: every glossary entry defines its term and links to where it is taught.
ENTRIES = entries(GLOSSARY.read_text(encoding="utf-8"))


def anchors_of(page: Path) -> set[str]:
    """The explicit anchors of a page: `{ #id }` attribute lists and `id="..."` in its HTML."""
    text = page.read_text(encoding="utf-8")
    return set(re.findall(r"\{:?\s*#([\w-]+)[^}]*\}", text)) | set(re.findall(r'\bid="([\w-]+)"', text))


def link_problems(entry: dict[str, str]) -> list[str]:
    """What is wrong with an entry's definition or link (empty: a sentence, and a target page and anchor that exist)."""
    problems = []
    meaning = prose(entry["meaning"]).strip()
    if not re.search(r"[\uac00-\ud7a3].*다\.$", meaning):
        problems.append(f"{entry['term']}: no one-sentence definition (a Korean sentence ending in 다.)")
    if not entry["target"]:
        problems.append(f"{entry['term']}: the term is not a link to the page that teaches it: {entry['cell']!r}")
        return problems
    path, _, anchor = entry["target"].partition("#")
    page = DOCS / path
    if not page.is_file():
        problems.append(f"{entry['term']}: {path} does not exist")
    elif anchor and anchor not in anchors_of(page):
        problems.append(f"{entry['term']}: {path} has no {{ #{anchor} }}")
    return problems


def test_every_glossary_entry_is_defined_and_linked_to_its_lesson():
    assert len(ENTRIES) == len({e["term"] for e in ENTRIES}) >= 60
    problems = [problem for entry in ENTRIES for problem in link_problems(entry)]
    assert problems == [], "\n".join(problems)


def test_the_entry_check_sees_a_missing_definition_link_and_anchor():
    bad = [
        {"cell": "패딩", "term": "패딩", "target": "", "meaning": "채우는 토큰입니다."},
        {"cell": "[패딩](nowhere.md)", "term": "패딩", "target": "nowhere.md", "meaning": "—"},
        {
            "cell": "[패딩](seq2seq/tensors.md#nope)",
            "term": "패딩",
            "target": "seq2seq/tensors.md#nope",
            "meaning": "뜻입니다.",
        },
    ]
    found = [link_problems(entry) for entry in bad]
    assert ["not a link" in p for p in found[0]] == [True]
    assert len(found[1]) == 2 and "does not exist" in found[1][1]
    assert found[2] == ["패딩: seq2seq/tensors.md has no { #nope }"]


# 스텝 and 단계. A decoding step (the decoder making one token, step t) is a 스텝; 단계 is a stage of a procedure
# (정규화의 네 단계, forward의 일곱 단계). Where 단계 can be seen to mean a decoding step, it is a finding.
DECODING_STAGE = re.compile(
    r"디코딩\s*단계|디코더(?:의)?\s*(?:한\s*)?단계|단계\s*마다|매\s*단계|단계별|단계\s*축|단계\s+t\b|\bt\s*단계"
    r"|단계\s+t\s*=|시간\s*단계|출력\s*단계"
)
DECODING_STAGE_REVIEWED: dict[str, set[str]] = {
    # page: the phrases reviewed and kept, each where 단계 is a stage of a procedure, not a decoding step
}


def decoding_stages(text: str) -> list[tuple[int, str]]:
    """(line, phrase) where the prose says 단계 for a decoding step; inline math stays visible ($t$ 단계)."""
    text = re.sub(r"(?<!\\)\$([^$\n]+)\$", lambda m: " " + m.group(1) + " ", text)
    text = prose(text)
    return [
        (text.count("\n", 0, m.start()) + 1, re.sub(r"\s+", " ", m.group(0))) for m in DECODING_STAGE.finditer(text)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_a_decoding_step_is_a_step(page: Path):
    reviewed = DECODING_STAGE_REVIEWED.get(str(page.relative_to(DOCS)), set())
    found = [
        (line, phrase) for line, phrase in decoding_stages(page.read_text(encoding="utf-8")) if phrase not in reviewed
    ]
    assert found == [], f"{page.relative_to(DOCS)}: 단계 for a decoding step (write 스텝): {found}"


def test_the_step_check_sees_decoding_stages_and_not_procedure_stages():
    page = (
        "디코딩 단계의 토큰, 단계마다 하나.\n단계 $t$의 쿼리\n$t$ 단계에서\n"
        "정규화의 네 단계\n`forward`의 일곱 단계를 손으로\n"
    )
    assert decoding_stages(page) == [(1, "디코딩 단계"), (1, "단계마다"), (2, "단계 t"), (3, "t 단계")]


def test_reviewed_stage_phrases_are_still_on_their_pages():
    for name, phrases in DECODING_STAGE_REVIEWED.items():
        found = {phrase for _, phrase in decoding_stages((DOCS / name).read_text(encoding="utf-8"))}
        assert phrases <= found, f"{name}: reviewed but no longer there: {phrases - found}"


# One symbol per quantity (docs/notation.md): y_t is a token of the translation, never the output distribution
# (that is p_t = g(s_t, c_t)); the step index of the decoder is t, in the prose and in a page's math.
Y_AS_DISTRIBUTION = re.compile(
    r"(?<![A-Za-z\\])y_(?:\{[^{}$]*\}|\w)\s*=\s*(?:g\s*\(|\\mathrm\{softmax\}|\\operatorname\{softmax\}|\\text\{softmax\})"
)


@pytest.mark.parametrize("page", [*PAGES, GLOSSARY], ids=lambda p: str(p.relative_to(DOCS)))
def test_y_is_a_token_not_a_distribution(page: Path):
    text = page.read_text(encoding="utf-8")
    found = [m.group(0) for m in Y_AS_DISTRIBUTION.finditer(text)]
    assert found == [], (
        f"{page.relative_to(DOCS)}: y_t names a token (docs/notation.md); the distribution is p_t: {found}"
    )


def test_the_symbol_check_sees_y_as_a_distribution():
    assert Y_AS_DISTRIBUTION.search(r"**출력** $y_t = g(s_t, c_t)$")
    assert Y_AS_DISTRIBUTION.search(r"$y_t = \mathrm{softmax}(W_y s_t + b_y)$")
    assert not Y_AS_DISTRIBUTION.search(r"$p_t = g(s_t, c_t)$, $y_t = \arg\max p_t$")


SCRIPTS = sorted((DOCS / "assets" / "javascripts").glob("*.js"))
_JS_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`""")
_HANGUL = re.compile("[\uac00-\ud7a3]")


def script_strings(script: str) -> list[str]:
    """The text of every string literal of a script that holds Hangul: what the page shows a reader from it."""
    texts = [re.sub(r"\$\{[^}]*\}", " ", literal[1:-1]) for literal in _JS_STRING.findall(script)]  # `${code}` aside
    return [text for text in texts if _HANGUL.search(text)]


def found_in(shown: list[str], variants: dict[str, str]) -> list[str]:
    """`variants_in` over texts shown one per line (a script's strings, a fence's comments): 'text: variant -> term'."""
    return [f"{shown[line - 1]!r}: {word} -> {term}" for line, word, term in variants_in("\n".join(shown), variants)]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_the_page_scripts_follow_the_glossary(script: Path):
    """The live page's and the stepper's messages (labels, buttons, status lines) are prose a reader reads."""
    found = found_in(script_strings(script.read_text(encoding="utf-8")), VARIANTS)
    assert not found, "\n".join(found)


def test_the_script_reader_finds_korean_strings_and_a_planted_variant():
    script = "const a = '스텝 ' + step; label.textContent = \"디코딩 단계마다\"; const b = `문맥 ${x}`; const c = 'ok';"
    assert script_strings(script) == ["스텝 ", "디코딩 단계마다", "문맥  "]
    assert found_in(script_strings("t = '컨텍스트 벡터';"), VARIANTS) == ["'컨텍스트 벡터': 컨텍스트 벡터 -> 문맥 벡터"]


_FENCE = re.compile(
    r"^([ \t>]*)(`{3,})[ \t]*(?:python|\{[^}\n]*\.python[^}\n]*\})[ \t]*\n(.*?)^\1\2[ \t]*$", re.M | re.S
)
_CODE_TEXT = re.compile(r"""#([^\n]*)|'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)\"""")
HANGUL_VARIANTS = {variant: term for variant, term in VARIANTS.items() if _HANGUL.search(variant)}
"""In code, English words may be identifiers (`keys`, `padding`, `logits`); a Korean word is always prose."""


def fence_korean(page: str) -> list[str]:
    """The text of the comments and string literals of the page's Python fences that hold Hangul: what a reader
    reads there."""
    found = [match.group(match.lastindex or 1) for fence in _FENCE.finditer(page) for match in
             _CODE_TEXT.finditer(fence.group(3))]  # fmt: skip
    return [text.strip() for text in found if _HANGUL.search(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_the_korean_in_code_follows_the_glossary(page: Path):
    found = found_in(fence_korean(page.read_text(encoding="utf-8")), HANGUL_VARIANTS)
    assert not found, "\n".join(found)


def test_the_fence_reader_finds_comments_and_strings_and_leaves_english_identifiers():
    page = '```python\nx = 1  # 첫 에포크\nprint("소스 위치", keys)  # keys: padding\n```\n'
    page += '\n```{.python notest}\ny = "텐서"\n```\n\n```text\n에포크\n```\n'
    assert fence_korean(page) == ["첫 에포크", "소스 위치", "텐서"]
    assert [finding.split(": ")[1] for finding in found_in(fence_korean(page), HANGUL_VARIANTS)] == [
        "에포크 -> 에폭",
        "소스 위치 -> 원문",
        "텐서 -> Tensor",
    ]
