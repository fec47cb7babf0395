"""Helpers several test modules share: what a folder holds, a script of scripts/ loaded as a module, tiny models and
configs, and the check that a call is refused.

(The hooks in hooks/ need no loader: pyproject.toml puts hooks/ on pytest's path, so `import excerpts` works.)
"""

import errno
import functools
import importlib.util
import os
import re
import stat
from pathlib import Path
from types import ModuleType

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def files_of(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` (recursively), by its path relative to it, with its bytes."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def load_script(name: str) -> ModuleType:
    """`scripts/<name>.py` as a fresh module (scripts/ is not a package, so it cannot be imported by name)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    spec.loader.exec_module(module := importlib.util.module_from_spec(spec))
    return module


# Tiny models: one translator, one classifier and one training config, seeded, for every test module -------------

TINY_PAIRS = (("je suis la .", "i am here ."), ("il est grand .", "he is tall ."), ("je suis grand .", "i am tall ."))
"""Three French-English pairs: the vocabularies of `tiny_vocabs` (je, suis, la, il, est, grand, .)."""


@functools.cache
def tiny_vocabs():
    """The `Vocabularies` of `TINY_PAIRS` (built once; treat it as read-only)."""
    from seq2seq_attention.translation.corpus import Pair, build_vocabularies

    return build_vocabularies([Pair(*pair) for pair in TINY_PAIRS])


def tiny_translator(decoder: str = "bahdanau", vocabs=None, *, seed: int = 0, **options):
    """A translator of hidden size 8, built after `torch.manual_seed(seed)`, in eval mode (no dropout: `.train()`
    to train it). `vocabs` is a `Vocabularies` or a (source size, target size) pair, `tiny_vocabs()` when None;
    `options` go to `build_model` (`score=`, `bidirectional=`, ...)."""
    from seq2seq_attention.model.seq2seq import build_model

    vocabs = tiny_vocabs() if vocabs is None else vocabs
    sizes = (len(vocabs.source), len(vocabs.target)) if hasattr(vocabs, "source") else vocabs
    torch.manual_seed(seed)
    return build_model(decoder, *sizes, **{"hidden_size": 8, **options}).eval()


def tiny_classifier(kind: str = "attention", vocab_size: int = 13, *, seed: int = 0):
    """A sentiment classifier of `kind` with embeddings of 6, a dense layer of 5 (and for the BiLSTM ones a hidden
    size of 4 and an attention size of 3), built after `torch.manual_seed(seed)`, in eval mode."""
    from seq2seq_attention.model.classifier import build_classifier

    options = {"embedding_size": 6, "dense_size": 5}
    if kind != "mean":
        options.update(hidden_size=4, attention_size=3)
    torch.manual_seed(seed)
    return build_classifier(kind, vocab_size, **options).eval()


def tiny_config(decoder: str = "gru", **changes):
    """A `TrainConfig` that trains in seconds: hidden size 8, batches of 4, 2 epochs, seed 3 (`changes` override)."""
    from seq2seq_attention.translation.train import TrainConfig

    settings = dict(decoder=decoder, hidden_size=8, batch_size=4, epochs=2, teacher_forcing_ratio=0.5, seed=3)
    return TrainConfig(**{**settings, **changes})


def refused(call, *words: str) -> str:
    """Run `call`, expect one `InputError` whose message holds every one of `words`; return the message."""
    from seq2seq_attention.core.errors import InputError

    with pytest.raises(InputError) as error:
        call()
    message = str(error.value)
    for word in words:
        assert word in message, (word, message)
    return message


def raises_exactly(call, message: str, error: type[Exception] = ValueError) -> None:
    """Run `call`, expect one `error` whose whole message matches the regular expression `message`."""
    with pytest.raises(error, match=rf"\A(?:{message})\Z"):
        call()


def clear_error(call, names: str) -> str:
    """Run `call`, expect one `ValueError` (an `InputError` is one) whose message matches the regular expression
    `names` and says what came ("got ...", or where the parameters are); return the message."""
    with pytest.raises(ValueError) as caught:
        call()
    message = str(caught.value)
    says_what_came = "got" in message or "parameters are on" in message
    assert re.search(names, message) and says_what_came, f"unclear message: {message!r}"
    return message


def random_tokens(*shape: int, vocab_size: int = 11, device: str = "cpu"):
    """Token indices of `shape` drawn from [4, vocab_size): words only, no padding, <sos>, <eos> or <unk>."""
    return torch.randint(4, vocab_size, shape, device=device)


def evaluation(hypotheses: list[str], references: list[str]):
    """An `Evaluation` of `hypotheses` against `references` with every score 0 (what `compare` reads is the lists)."""
    from seq2seq_attention.translation.evaluate import Evaluation

    return Evaluation(0.0, 0.0, 0.0, 0.0, "", None, list(references), list(references), list(hypotheses))


# Permissions as a user who is not root meets them (tests may run as root, who passes every permission check) ----


def enforce_owner_permissions(monkeypatch) -> None:
    """Make the file calls the package uses refuse what the write bits refuse a folder's or file's owner: an entry
    made, removed or renamed in a folder without its owner's write bit, and a file without it opened for writing.
    Where the tests run as a user who is not root, the system refuses the same already."""

    def writable(mode: int, path) -> None:
        if not mode & stat.S_IWUSR:
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))

    def folder_writable(path, dir_fd=None) -> None:
        relative = dir_fd is not None and not os.path.isabs(path)
        writable((os.fstat(dir_fd) if relative else os.stat(os.path.dirname(os.path.abspath(path)))).st_mode, path)

    def in_folder(real, paths: int):
        def call(*args, **kwargs):
            for path in args[:paths]:
                folder_writable(path, kwargs.get("dir_fd"))
            return real(*args, **kwargs)

        return call

    real_open = os.open

    def opening(path, flags, *args, **kwargs):
        exists = os.path.lexists(path) if kwargs.get("dir_fd") is None else True
        if flags & os.O_CREAT and not exists:
            folder_writable(path, kwargs.get("dir_fd"))
        if flags & (os.O_WRONLY | os.O_RDWR) and exists and os.path.isfile(path):
            writable(os.stat(path).st_mode, path)
        return real_open(path, flags, *args, **kwargs)

    for name, paths in (("unlink", 1), ("remove", 1), ("rmdir", 1), ("mkdir", 1), ("replace", 2), ("rename", 2)):
        monkeypatch.setattr(os, name, in_folder(getattr(os, name), paths))
    monkeypatch.setattr(os, "open", opening)


def random_batch(seed: int, B: int, S: int, T: int, V_src: int = 11, V: int = 13, padded: bool = True):
    """A collated batch of `B` random pairs drawn from `seed`: sources of at most `S` tokens (the first row exactly
    `S`) and targets of at most `T`, each ending in <eos>; `padded=False` makes every row full length."""
    from seq2seq_attention.core.batching import collate
    from seq2seq_attention.model.tokens import EOS_IDX

    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, S + 1, (B,), generator=generator) if padded else torch.full((B,), S)
    lengths[0] = S
    sources = [torch.randint(4, V_src, (int(n) - 1,), generator=generator).tolist() + [EOS_IDX] for n in lengths]
    target_lengths = torch.randint(1, T + 1, (B,), generator=generator) if padded else torch.full((B,), T)
    targets = [torch.randint(4, V, (int(n) - 1,), generator=generator).tolist() + [EOS_IDX] for n in target_lengths]
    return collate(list(zip(sources, targets, strict=True)))
