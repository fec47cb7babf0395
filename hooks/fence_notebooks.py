"""A page with spec fences as a Jupyter notebook: its prose as markdown cells, its spec fences as code cells.

Built by `hooks/fence_record.py` when the site is built (nothing runs then) and run top to bottom by
`tests/site/test_fence_notebooks.py`. The first cell installs what the page's code needs and is missing,
and says so; with everything importable it installs nothing.
"""

import ast
import itertools
import posixpath
import re
import sys
import tomllib
from urllib.parse import urljoin, urlsplit

import fence_runs
import markdown
import nbformat
from engine import ROOT
from nbformat import v4
from pytest_markdown_docs.plugin import parse_superfences_block_info
from snippets import EXCERPT

PACKAGE = "seq2seq_attention"
ADMONITION = re.compile(r'^(?:!!!|\?\?\?\+?)\s+[\w-]+(?:\s+"(?P<title>[^"]*)")?\s*$')
BLOCK = re.compile(r"^///\s*(?P<name>[\w-]*)\s*(?:\|\s*(?P<title>.*?))?\s*$")
"""A `pymdownx.blocks` fence (`/// solution` ... `///`): its start becomes a bold title, its end nothing."""
TRY_FIRST = "\x00try-first\x00"
"""Where a solution starts in the prose: the notebook puts an empty "try it first" cell there, before the answer."""
TRY_FIRST_CELL = "# 먼저 직접 풀어 보세요: 이 셀에 코드를 써서 실행해 보고, 아래 풀이와 견주어 보세요."
HEADING_ATTRS = re.compile(r"^(#{1,6}\s.*?)\s*\{[^}]*\}\s*$")
LINK = re.compile(r"(\]\()(?P<target>[^)\s]+)")


def colab_url(repo_url: str | None, notebook: str) -> str | None:
    """Colab's URL of a notebook published on the repository's gh-pages branch (GitHub only), else None."""
    github = re.fullmatch(r"https?://github\.com/([^/]+/[^/]+?)(?:\.git)?/?", repo_url or "")
    return f"https://colab.research.google.com/github/{github[1]}/blob/gh-pages/{notebook}" if github else None


CPU_TORCH = ("--no-deps", "torch==2.13.0+cpu", "--index-url", "https://download.pytorch.org/whl/cpu")
"""How the first cell installs PyTorch where there is no NVIDIA GPU: the CPU build the fences were recorded with,
alone (its dependencies come with the package), as README's CPU install line does (a test keeps them equal)."""


def install_cell(fences: tuple[fence_runs.Fence, ...], repo_url: str | None) -> str:
    """The first cell: it installs what is missing (said in its comments and printed), imports the package in the same
    kernel and shows every matplotlib figure a later cell leaves in a name. PyTorch first: `CPU_TORCH` without an
    NVIDIA GPU, PyPI's build with one; the package from the checkout the notebook lies in, else from ``git+repo_url``
    (neither: the cell stops and says so), never ``-e`` (a running kernel never reads an editable install's .pth)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[\s<>=!~;\[]", dependency, maxsplit=1)[0] for dependency in project["dependencies"]}
    brought = {PACKAGE} | {name.replace("-", "_").lower() for name in names}  # the package and its dependencies
    nodes = [node for fence in fences for node in ast.walk(ast.parse(fence.code))]  # what the page's code imports
    imported = {alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in nodes if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module}
    others = sorted({name.partition(".")[0] for name in imported} - set(sys.stdlib_module_names) - brought)
    source = f"git+{repo_url.rstrip('/')}" if repo_url else None
    dependencies = ", ".join(sorted(brought - {PACKAGE, "torch"}))
    where = "이 노트북이 든 저장소 폴더에서" + (f", 저장소 밖이면 {source} 에서" if source else "")
    needed = {PACKAGE: source, **{module: module for module in others}}
    outside = (
        "이 노트북은 저장소 주소를 모르는 빌드에서 만들어졌고, seq2seq-attention 저장소 폴더 밖에서 열렸습니다. "
        "저장소를 받은 폴더 안에서 이 노트북을 열고 이 셀을 다시 실행하세요."
    )
    lines = [
        "# 이 노트북이 설치하는 것 (import할 수 없는 것만 pip으로 설치합니다. 모두 있으면 설치하지 않습니다):",
        f"# - torch: NVIDIA GPU가 없으면 PyTorch의 CPU 빌드({CPU_TORCH[1]}), 있으면 PyPI의 빌드(Linux에서는 CUDA 빌드)",
        f"# - {PACKAGE}: {where} (의존성 {dependencies} 중 없는 것 포함)",
        *(f"# - {module}: 이 페이지의 코드가 씁니다" for module in others),
        "# 그다음 같은 커널에서 패키지를 import해 확인하고, 뒤의 셀이 만든 matplotlib 그림을 셀 아래에 보여 줍니다.",
        "import importlib",
        "import importlib.util",
        "import shutil",
        "import site",
        "import subprocess",
        "import sys",
        "from pathlib import Path",
        "",
        f"NEEDED = {needed!r}",
        f"CPU_TORCH = {list(CPU_TORCH)!r}",
        "",
        "",
        "def pip_install(*words):",
        '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *words], check=True)',
        "",
        "",
        "missing = [module for module in NEEDED if importlib.util.find_spec(module) is None]",
        f"if {PACKAGE!r} in missing:  # 이 노트북이 든 저장소 폴더가 있으면 거기서 설치합니다",
        "    checkouts = [",
        "        folder for folder in [Path.cwd(), *Path.cwd().parents]",
        "        if (folder / 'pyproject.toml').is_file()",
        "        and 'name = \"seq2seq-attention\"' in (folder / 'pyproject.toml').read_text(errors='replace')",
        "    ]",
        f"    NEEDED[{PACKAGE!r}] = str(checkouts[0]) if checkouts else NEEDED[{PACKAGE!r}]",
        f"    if NEEDED[{PACKAGE!r}] is None:",
        f"        raise ModuleNotFoundError({outside!r})",
        "installed = []",
        "if missing and importlib.util.find_spec('torch') is None:  # PyTorch 먼저: GPU가 없으면 CPU 빌드",
        "    gpu = shutil.which('nvidia-smi') is not None or Path('/proc/driver/nvidia/version').exists()",
        "    torch = ['torch'] if gpu or sys.platform == 'darwin' else CPU_TORCH  # PyPI: Linux에서는 CUDA 빌드",
        "    pip_install(*torch)",
        "    installed.append(next(word for word in torch if word.startswith('torch')))",
        "if missing:",
        "    pip_install(*(NEEDED[module] for module in missing))",
        "    installed += missing",
        "    for folder in [*site.getsitepackages(), site.getusersitepackages()]:  # pip이 방금 만든 폴더도 경로에",
        "        if Path(folder).is_dir() and folder not in sys.path:",
        "            site.addsitedir(folder)",
        "    importlib.invalidate_caches()",
        f"package = importlib.import_module({PACKAGE!r})  # 같은 커널에서 import되는지 확인합니다",
        'print("설치함:", ", ".join(installed) or "없음 (필요한 모듈을 모두 이미 import할 수 있습니다)")',
        f'print("{PACKAGE}", package.__version__)',
        "",
        "try:  # Jupyter에서: 셀이 끝날 때, 이름에 남은 새 그림을 PNG로 보여 줍니다",
        "    from IPython import get_ipython",
        "    from IPython.display import Image, display",
        "except ImportError:",
        "    get_ipython = lambda: None  # noqa: E731",
        "",
        "",
        "def _show_new_figures(result, shown=set()):  # noqa: B006",
        "    from io import BytesIO",
        "",
        "    figure_type = getattr(sys.modules.get('matplotlib.figure'), 'Figure', None)",
        "    if figure_type is None:",
        "        return",
        "    for value in list(get_ipython().user_ns.values()):",
        "        if isinstance(value, figure_type) and id(value) not in shown:",
        "            shown.add(id(value))",
        "            png = BytesIO()",
        '            value.savefig(png, format="png")',
        "            display(Image(data=png.getvalue()))",
        "",
        "",
        "if get_ipython() is not None:",
        '    get_ipython().events.register("post_run_cell", _show_new_figures)',
    ]
    return "\n".join(lines)


def _site_link(target: str, page: str, site_url: str | None) -> str:
    """A page-relative link as an absolute URL on the site (`.md` pages become `.html`)."""
    if not site_url or urlsplit(target).scheme or target.startswith(("#", "/", "mailto:")):
        return target
    path, _, anchor = target.partition("#")
    url = re.sub(r"^(\.\.(/|$))+", "", posixpath.normpath(posixpath.join(posixpath.dirname(page), path)))
    url = url[: -len(".md")] + ".html" if url.endswith(".md") else url
    return urljoin(site_url if site_url.endswith("/") else site_url + "/", url) + (f"#{anchor}" if anchor else "")


def _prose(lines: list[str], page: str, site_url: str | None, block_titles: dict[str, str]) -> str:
    """Markdown for Jupyter: admonitions as quotes, blocks as titles, no heading attributes, links to the site."""
    out: list[str] = []
    quoting = False
    for line in lines:
        if block := BLOCK.match(line):
            title = block["title"] or block_titles.get(block["name"], block["name"])
            if block["name"] == "solution":  # the answer comes after a cell where the reader tries first
                out += [TRY_FIRST, ""]
            out.append(f"**{title}**" if title else "")
        elif admonition := ADMONITION.match(line):
            quoting = True
            out.append(f"> **{admonition['title']}**" if admonition["title"] else ">")
        elif quoting and (line.startswith("    ") or not line.strip()):
            out.append(f"> {line[4:]}".rstrip())
        else:
            while quoting and out and out[-1] == ">":  # a quote ends without its empty last lines
                out.pop()
            out += [""] if quoting else []
            quoting = False
            out.append(HEADING_ATTRS.sub(r"\1", line))
    text = "\n".join(out).strip()
    return LINK.sub(lambda m: m[1] + _site_link(m["target"], page, site_url), text)


def _code(source: str, printed: str = "") -> dict:
    """A code cell that shows what its fence printed (validated once, with the whole notebook)."""
    outputs = [v4.new_output("stream", name="stdout", text=printed + "\n")] if printed else []
    return v4.new_code_cell(source, outputs=outputs)


def _shown_fence(token) -> str:
    """A fence that is shown but not run (a source excerpt, a diagram), with its info reduced to the language."""
    words = parse_superfences_block_info(token.info)
    title = re.search(r'title="([^"]*)"', token.info)
    head = [f"*{title[1]}*", ""] if title else []
    fence = "`" * max([3, *(len(run) + 1 for run in re.findall(r"`+", token.content))])
    return "\n".join([*head, f"{fence}{words[0] if words else ''}", token.content.rstrip("\n"), fence])


def notebook(text: str, *, page: str, site_url: str | None, repo_url: str | None, runs: dict, extensions: dict) -> str:
    """The notebook (nbformat 4 JSON) of the page `page` (its path in docs; links resolve from it) whose markdown is
    `text`: snippets expanded as the build's `extensions` (its ``mdx_configs``) say, relative links made links to
    `site_url` (None keeps them), the package installed from `repo_url` when missing, each spec fence's cell with its
    recorded CPU output (`runs`, `fence_runs.load`), solutions titled as pymdownx.blocks.details' types say."""
    details = extensions.get("pymdownx.blocks.details", {}).get("types", [])
    block_titles = {kind["name"]: kind.get("title", "") for kind in details if isinstance(kind, dict)}

    def titled(m: re.Match) -> str:  # a shown excerpt is titled by what it includes
        if "title=" in m["options"] or not m["options"].startswith(".python notest"):
            return m[0]
        return f'{m["fence"]}{{{m["options"]} title="{m["ref"]}"}}\n--8<-- "{m["ref"]}"\n{m["fence"]}'

    snippets = {"pymdownx.snippets": extensions.get("pymdownx.snippets", {})}  # filled in as in the build
    md = markdown.Markdown(extensions=["pymdownx.snippets"], extension_configs=snippets)
    expanded = "\n".join(md.preprocessors["snippet"].run(EXCERPT.sub(titled, text).split("\n")))
    lines = expanded.split("\n")
    fences = {fence.line: fence for fence in fence_runs.spec_fences(expanded)}
    parts: list = [_code(install_cell(tuple(fences.values()), repo_url))]  # code cells and markdown, in page order
    position = 0

    def add_prose(start: int, until: int) -> None:
        *questions, answer = _prose(lines[start:until], page, site_url, block_titles).split(TRY_FIRST)
        for question in questions:  # a solution starts here: the question, an empty cell, then the answer
            parts.extend([question.strip(), _code(TRY_FIRST_CELL)])
        parts.append(answer.strip())

    for token in [token for token in fence_runs.PARSER.parse(expanded) if token.type == "fence" and token.map]:
        fence = fences.get(token.map[0] + 1)
        if fence is None and token.level:
            continue
        add_prose(position, token.map[0])
        position = token.map[1]
        run = runs.get(fence.key, {}).get(fence.cpu_tag) if fence else None
        printed = run["output"] if run and run["outcome"] == "passed" else ""
        parts.append(_code(fence.code.rstrip("\n"), printed) if fence else _shown_fence(token))
    add_prose(position, len(lines))
    cells = []
    for is_markdown, group in itertools.groupby(parts, key=lambda part: isinstance(part, str)):
        if not is_markdown:
            cells += group
        elif prose := "\n\n".join(filter(None, group)):  # the markdown between two code cells: one cell
            cells.append(v4.new_markdown_cell(prose))
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"  # stable ids: the same page gives the same notebook
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    book = v4.new_notebook(cells=cells, metadata={"kernelspec": kernel, "language_info": {"name": "python"}})
    nbformat.validate(book)  # raises on a bad notebook (`writes` only logs it)
    return nbformat.writes(book)
