"""The translator: `Seq2Seq`'s input contract, `build_model`'s size budget, and what `translate` says about text.

Any text is translated or refused with a short message that names the sentence and echoes at most
`ECHO_LIMIT` characters of it; bytes, an unknown `unknown=` and invisible characters get messages in words.
"""

from collections.abc import Callable

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import clear_error, random_tokens, refused, tiny_translator, tiny_vocabs

from seq2seq_attention import InputError, build_classifier, build_model, translate
from seq2seq_attention.core.errors import ECHO_LIMIT
from seq2seq_attention.model.rules import MAX_PARAMETERS

pytestmark = pytest.mark.usefixtures("one_thread")
B, S, T, H, V = 2, 5, 3, 8, 11
VOCABS = tiny_vocabs()


def _seq2seq():
    return tiny_translator("bahdanau", (V, V))


LENGTHS = torch.tensor([S, 2])
SEQ2SEQ_CASES: list[tuple[str, Callable[[], object], str]] = [
    ("Seq2Seq-source-rank", lambda: _seq2seq()(random_tokens(B, S, 1), LENGTHS), "source"),
    ("Seq2Seq-source-dtype", lambda: _seq2seq()(torch.ones(B, S), LENGTHS), "source"),
    ("Seq2Seq-lengths-size", lambda: _seq2seq()(random_tokens(B, S), torch.tensor([S])), "lengths"),
    ("Seq2Seq-lengths-dtype", lambda: _seq2seq()(random_tokens(B, S), LENGTHS.float()), "lengths"),
    ("Seq2Seq-target-dtype", lambda: _seq2seq()(random_tokens(B, S), LENGTHS, torch.ones(B, T)), "target"),
    ("Seq2Seq-target-batch", lambda: _seq2seq()(random_tokens(B, S), LENGTHS, random_tokens(B + 1, T)), "target"),
]


@pytest.mark.parametrize(("call", "names"), [c[1:] for c in SEQ2SEQ_CASES], ids=[c[0] for c in SEQ2SEQ_CASES])
def test_seq2seq_raises_one_clear_value_error(call: Callable[[], object], names: str):
    clear_error(call, names)


def test_a_model_on_another_device_is_torchs_error():
    with pytest.raises((RuntimeError, NotImplementedError), match="meta"):
        _seq2seq().to("meta")(random_tokens(B, S), LENGTHS)


def test_a_model_too_large_for_the_budget_is_refused_before_allocation():
    refused(lambda: build_model("gru", 10, 10, hidden_size=1 << 16), "parameters", f"{MAX_PARAMETERS:,}")
    refused(lambda: build_classifier("mean", 1 << 20, embedding_size=1 << 12), "parameters")


def test_echoed_input_is_capped():
    word = "x" * 100_000
    message = refused(lambda: translate(tiny_translator(), VOCABS, [f"je suis {word} ."], max_words=10), "sentence 1")
    assert len(message) < 3 * ECHO_LIMIT + 200


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=3000))
def test_any_text_is_translated_or_refused_with_a_short_message(text):
    try:
        (translation,) = translate(tiny_translator(), VOCABS, [text], unknown="unk")
    except InputError as error:
        assert len(str(error)) < 3 * ECHO_LIMIT + 200 and str(error).startswith("sentence 1 ")
    else:
        assert isinstance(translation, str)


def test_messages_say_what_is_wrong_in_words():
    model = tiny_translator()
    with pytest.raises(InputError) as error:
        translate(model, VOCABS, ["je suis la ."], unknown="skip")
    assert str(error.value).startswith("unknown must be 'error' or 'unk'") and "sentence" not in str(error.value)
    with pytest.raises(InputError, match=r"got bytes b'je suis'; decode it"):
        translate(model, VOCABS, [b"je suis"])
    with pytest.raises(InputError, match="got bytes"):
        VOCABS.source.encode(b"je suis")
    # invisible format characters are removed in both tasks (issue 32), not read as a word break
    assert translate(model, VOCABS, ["je su\u200bis la ."]) == translate(model, VOCABS, ["je suis la ."])
    with pytest.raises(InputError, match="U\\+2060 WORD JOINER"):
        translate(model, VOCABS, ["\u2060"])
