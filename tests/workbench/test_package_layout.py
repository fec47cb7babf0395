"""The layout of the package is its design: one class per concept, one mask, one score table, a CLI nobody imports.

The packaged translators re-translate the held-out split to the scores their checkpoints record.
"""

import ast
import io
import keyword
import re
import tokenize
from collections import defaultdict
from pathlib import Path

import pytest
import torch
from support import ROOT

import seq2seq_attention
from seq2seq_attention import core
from seq2seq_attention.core import batching, checkpoint, split, training, vocabulary
from seq2seq_attention.core.checkpoint import load_checkpoint
from seq2seq_attention.model import search, seq2seq
from seq2seq_attention.model.classifier import build_classifier
from seq2seq_attention.model.decoders import DECODERS
from seq2seq_attention.model.scores import SCORES
from seq2seq_attention.sentiment import data as sentiment_data
from seq2seq_attention.sentiment import train as sentiment_train
from seq2seq_attention.translation import corpus
from seq2seq_attention.translation import train as translation_train
from seq2seq_attention.translation.corpus import load_pairs, split_pairs
from seq2seq_attention.translation.train import TrainConfig, train
from seq2seq_attention.translation.translator import translate

SRC = ROOT / "src" / "seq2seq_attention"
pytestmark = pytest.mark.usefixtures("one_thread")


def test_both_tasks_share_one_class_per_concept():
    assert corpus.Vocabulary is sentiment_data.Vocabulary is vocabulary.Vocabulary
    assert corpus.collate is sentiment_data.collate is batching.collate
    assert sentiment_data.Batch is batching.Batch and type(corpus.collate([([4, 2], [5, 2])])) is batching.Batch
    assert translation_train.run_epoch is sentiment_train.run_epoch is training.run_epoch
    assert translation_train.optimizer_step is sentiment_train.optimizer_step is training.optimizer_step
    assert translation_train.make_optimizer is sentiment_train.make_optimizer is training.make_optimizer
    assert translation_train.save_checkpoint is sentiment_train.save_checkpoint is checkpoint.save_checkpoint
    assert corpus.checksum_split is sentiment_data.checksum_split is split.checksum_split
    translator = seq2seq.build_model("bahdanau", 11, 13, hidden_size=8)
    classifier = build_classifier("attention", 13, embedding_size=6, hidden_size=4, attention_size=3)
    assert type(translator.decoder.attention) is type(classifier.attention) is SCORES["additive"]


def _calls_arange(node: ast.AST, positions: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) == "arange")
        or (isinstance(n, ast.Name) and n.id in positions)
        for n in ast.walk(node)
    )


def _mentions_lengths(node: ast.AST) -> bool:
    return any("length" in (getattr(n, "id", "") or getattr(n, "attr", "")) for n in ast.walk(node))


def _mask_builders(path: Path) -> list[str]:
    """Functions in `path` that compare positions (an `arange`) with lengths: building a padding mask."""
    found = []
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(function, ast.FunctionDef):
            continue
        positions = {
            target.id
            for node in ast.walk(function)
            if isinstance(node, ast.Assign) and _calls_arange(node.value, set())
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(function):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            if any(
                _calls_arange(a, positions) and any(_mentions_lengths(b) for b in operands if b is not a)
                for a in operands
            ):
                found.append(f"{path.relative_to(SRC)}:{function.name}")
    return found


def test_one_function_builds_a_padding_mask_from_lengths():
    builders = sorted({b for path in SRC.rglob("*.py") for b in _mask_builders(path)})
    assert builders == ["model/tensors.py:lengths_to_mask"]


def _imports(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def _fences(page: Path) -> list[str]:
    return re.findall(r"^```(?:python|\{\.python[^}]*\})\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)


def test_nothing_imports_the_command_line_layer():
    """Library code, scripts, benchmarks and pages never import `seq2seq_attention.cli`; tests use only
    its entry point `main` (what the `seq2seq-attention` command runs), never a command module."""
    offenders = []
    for path in [*SRC.rglob("*.py"), *(ROOT / "scripts").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]:
        if SRC / "cli" in path.parents or path == SRC / "__main__.py":  # `python -m seq2seq_attention` runs the CLI
            continue
        if any(name.startswith("seq2seq_attention.cli") for name in _imports(ast.parse(path.read_text()))):
            offenders.append(str(path.relative_to(ROOT)))
    for page in (ROOT / "docs").rglob("*.md"):
        if any(re.search(r"^\s*(from|import)\s+seq2seq_attention\.cli\b", f, re.M) for f in _fences(page)):
            offenders.append(str(page.relative_to(ROOT)))
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name == Path(__file__).name:
            continue
        used = {n for n in _imports(ast.parse(path.read_text())) if n.startswith("seq2seq_attention.cli")}
        if used - {"seq2seq_attention.cli", "seq2seq_attention.cli.main"}:
            offenders.append(f"{path.relative_to(ROOT)}: {sorted(used)}")
    assert offenders == []
    for path in SRC.rglob("*.py"):  # the library does not import the CLI even indirectly by name
        if SRC / "cli" not in path.parents and path != SRC / "__main__.py":
            assert "cli" not in {n.split(".")[0] for n in _imports(ast.parse(path.read_text())) if n.startswith(".")}


def _shapes(path: Path) -> list[tuple[int, str]]:
    """Each logical line as the shape of its tokens: names become N, numbers 0, strings S; imports dropped."""
    lines, current, first = [], [], None
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if token.type == tokenize.NEWLINE:
            if current:
                lines.append((first, " ".join(current)))
            current, first = [], None
        elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            first = first or token.start[0]
            if token.type == tokenize.NAME:
                current.append(token.string if keyword.iskeyword(token.string) else "N")
            else:
                current.append({tokenize.NUMBER: "0", tokenize.STRING: "S"}.get(token.type, token.string))
    # a dataclass field with no default, or a named constant (`MAX_BEAM = 1000`), is a declaration, not logic
    declarations = re.compile(r"^N : [N\[\]|,. ]+$|^N = -?[0S]$")
    return [
        (n, s) for n, s in lines if not s.startswith(("from ", "import ")) and s != "S" and not declarations.match(s)
    ]


def test_no_block_of_six_lines_repeats_in_the_package():
    seen = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        lines = _shapes(path)
        for i in range(len(lines) - 5):
            seen[tuple(s for _, s in lines[i : i + 6])].append(f"{path.relative_to(SRC)}:{lines[i][0]}")
    assert [where for where in seen.values() if len(where) > 1] == []


@pytest.mark.parametrize("name", ["bahdanau", "gru"])
def test_the_packaged_translators_still_score_what_their_checkpoint_records(name):
    """Re-translating the held-out split gives the BLEU and exact match saved when the model was trained."""
    from seq2seq_attention.translation.evaluate import evaluate
    from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

    loaded = load_checkpoint(PRETRAINED_DIR / name)
    record = loaded.training["evaluation"]
    split = loaded.training["config"]["split"]
    scores = evaluate(loaded.model, loaded.vocabs, split_pairs(load_pairs(), split)[1], split=split)
    assert (record["split"], record["pairs"]) == (split, len(scores))
    assert scores.bleu == pytest.approx(record["bleu"], abs=1e-9)
    assert scores.exact_match == pytest.approx(record["exact_match"], abs=1e-12)
    assert [scores.bleu_low, scores.bleu_high] == pytest.approx(record["bleu_interval"], abs=1e-9)


PAIRS = load_pairs()[:120]  # the first bundled pairs: a few of them are held out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("decoder", "score"), [(d, s) for d, kind in DECODERS.items() for s in (kind.scores or (None,))]
)
def test_every_decoder_and_score_of_the_table_trains_checkpoints_resumes_and_translates(tmp_path, decoder, score):
    config = TrainConfig(decoder=decoder, score=score, hidden_size=8, batch_size=4, epochs=2, seed=1)
    first = TrainConfig(decoder=decoder, score=score, hidden_size=8, batch_size=4, epochs=1, seed=1)
    whole = train(config, pairs=PAIRS, progress=False, log=lambda line: None, measure_bleu=False)
    train(first, pairs=PAIRS, checkpoint=tmp_path, progress=False, log=lambda line: None, measure_bleu=False)
    resumed = train(config, pairs=PAIRS, checkpoint=tmp_path, resume=True, progress=False, log=lambda line: None)
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in whole.history]
    loaded = load_checkpoint(tmp_path)
    assert loaded.config["decoder"] == decoder and loaded.config["score"] == (score or None)
    assert loaded.training["evaluation"]["pairs"] > 0  # BLEU measured once, saved with the weights
    attention = loaded.model.decoder.attention
    assert (attention is None) == (score is None)
    if attention is not None:
        assert type(attention) is SCORES[score]
    sentences = [pair.source for pair in PAIRS[:4]]
    assert translate(loaded.model, loaded.vocabs, sentences) == translate(resumed.model, resumed.vocabs, sentences)


def test_the_top_level_names_stay_importable():
    for name in seq2seq_attention.__all__:
        assert getattr(seq2seq_attention, name) is not None
    assert isinstance(core.__doc__, str) and search.greedy_decode is seq2seq_attention.greedy_decode
    assert torch.equal(
        seq2seq_attention.lengths_to_mask(torch.tensor([2, 1]), 3), torch.tensor([[1, 1, 0], [1, 0, 0]]).bool()
    )


def test_the_home_page_maps_every_module_to_pages_that_exist():
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    section = home.split("## 페이지와 모듈", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`((?:(?:core|model|translation|sentiment|cli)/)?\w+\.py)`", section))
    modules = {
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if (p.name != "__init__.py" or p.parent.name == "cli") and p.parent != SRC
    }
    modules |= {str(p.relative_to(SRC)) for p in SRC.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    assert modules - listed == set() and listed - modules == set()
    for link in re.findall(r"\]\(([\w/.-]+\.md)(?:#[\w-]+)?\)", section):
        assert (ROOT / "docs" / link).is_file(), link
