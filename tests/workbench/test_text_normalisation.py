"""Both tasks read text alike: accents dropped whether typed composed (NFC) or decomposed (NFD), invisible format
characters (zero-width joiner, soft hyphen...) removed rather than read as a word break."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.text import DROPPED_CATEGORIES
from seq2seq_attention.sentiment.data import tokenize
from seq2seq_attention.translation.corpus import normalize_string

INVISIBLE = [chr(c) for c in (0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD)]
"""Format characters (category Cf) a pasted sentence may carry."""
LETTERS = st.sampled_from(list("abcdeilnorstuy") + ["é", "è", "ê", "ï", "ç", "à", "ô", "ü", "e\u0301", "i\u0308"])
WORD = st.lists(LETTERS, min_size=1, max_size=7).map("".join)
TEXT = st.lists(WORD, min_size=1, max_size=5).map(" ".join)


def strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def test_the_issue_examples():
    assert tokenize("cliché naïve") == tokenize(unicodedata.normalize("NFD", "cliché naïve")) == ["cliche", "naive"]
    assert tokenize("go\u200dod") == ["good"] and normalize_string("go\u200dod").split() == ["good"]


def test_every_invisible_character_here_is_a_dropped_category():
    assert {unicodedata.category(c) for c in INVISIBLE} == {"Cf"} and "Cf" in DROPPED_CATEGORIES


@given(TEXT)
def test_composed_and_decomposed_text_read_alike_in_both_tasks(text):
    nfc, nfd = unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text)
    assert tokenize(nfc) == tokenize(nfd) == strip_accents(text).split()
    assert normalize_string(nfc) == normalize_string(nfd) and normalize_string(nfc).split() == tokenize(nfc)


@given(TEXT, st.lists(st.tuples(st.integers(0, 60), st.sampled_from(INVISIBLE)), max_size=6))
def test_invisible_characters_never_split_or_make_a_word(text, insertions):
    marked = text
    for position, character in insertions:
        marked = marked[: position % (len(marked) + 1)] + character + marked[position % (len(marked) + 1) :]
    assert tokenize(marked) == tokenize(text)
    assert normalize_string(marked).split() == normalize_string(text).split()


@pytest.mark.parametrize("bad", [b"good", None, 3, "bad \udcff byte"])
def test_the_sentiment_tokenizer_refuses_what_is_not_text(bad):
    with pytest.raises(InputError, match="text must be a string|not valid UTF-8"):
        tokenize(bad)
