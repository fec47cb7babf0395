"""Data pipeline: normalisation, filter, split, vocabulary, batches, bucketing."""

import lzma
import re
import zlib
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support import refused

from seq2seq_attention.core.batching import BucketBatchSampler, collate, pad_sequences
from seq2seq_attention.core.errors import InputError
from seq2seq_attention.core.vocabulary import Vocabulary
from seq2seq_attention.model.tokens import EOS_IDX, PAD_IDX, SOS_IDX, SPECIAL_TOKENS, UNK_IDX
from seq2seq_attention.translation.corpus import (
    CORPUS_PATH,
    Pair,
    TranslationDataset,
    build_vocabularies,
    keep_pair,
    load_pairs,
    make_loader,
    normalize_string,
    read_lines,
    split_pairs,
    target_overlap,
)


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Go.", "go ."),
        ("Ça alors !", "ca alors !"),
        ("J'ai faim!", "j ai faim !"),
        ("Cours\u202f!", "cours !"),
        ("  Je suis fatigué.  ", "je suis fatigue ."),
        ("À l'aide !", "a l aide !"),
        ("C'est 100% vrai?", "c est vrai ?"),
    ],
)
def test_normalize_examples(raw: str, normalized: str):
    assert normalize_string(raw) == normalized


@given(st.text(max_size=40))
def test_normalize_keeps_only_letters_punctuation_and_single_spaces(text: str):
    out = normalize_string(text)
    assert re.fullmatch(r"[a-zA-Z.!? ]*", out)
    assert "  " not in out


def test_keep_pair_is_the_seeds_rule():
    assert keep_pair(Pair("je suis fatigue .", "i m tired ."))
    assert not keep_pair(Pair("je suis tres tres tres fatigue .", "i m tired ."))  # 7 French words
    assert not keep_pair(Pair("il pleut .", "it is raining ."))  # no prefix
    assert keep_pair(Pair("il pleut .", "it is raining ."), prefixes=("it is",))
    assert not keep_pair(Pair("je suis fatigue .", "i m tired ."), max_words=3)


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.sampled_from("stuvwxyz")), max_size=60))
def test_each_split_is_the_crc32_rule_on_its_side_and_keeps_that_side_apart(rows):
    pairs = [Pair(f"phrase {a} .", f"i am {b} .") for a, b in rows]
    for split, side in (("by_english", "target"), ("by_french", "source")):
        train, test = split_pairs(pairs, split)
        assert sorted(train + test) == sorted(pairs)
        assert all(zlib.crc32(getattr(p, side).encode()) % 10 == 0 for p in test)
        assert not any(zlib.crc32(getattr(p, side).encode()) % 10 == 0 for p in train)
        assert not {getattr(p, side) for p in train} & {getattr(p, side) for p in test}
    train, test = split_pairs(pairs)  # the default keeps every English target on one side
    assert target_overlap(train, test) == 0.0
    with pytest.raises(InputError, match="split must be one of by_english, by_french"):
        split_pairs(pairs, "random")


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.sampled_from("stuvwxyz")), max_size=60))
def test_dev_split_is_carved_from_train_by_the_same_side_and_never_touches_test(rows):
    pairs = [Pair(f"phrase {a} .", f"i am {b} .") for a, b in rows]
    for split, side in (("by_english", "target"), ("by_french", "source")):
        train, test = split_pairs(pairs, split)
        rest, dev = split_pairs(pairs, split, "dev")
        assert sorted(rest + dev) == sorted(train)  # dev comes out of train; the test pairs are dropped
        assert all(zlib.crc32(f"dev:{getattr(p, side)}".encode()) % 10 == 0 for p in dev)
        keys = [{getattr(p, side) for p in part} for part in (rest, dev, test)]
        assert not keys[0] & keys[1] and not keys[1] & keys[2] and not keys[0] & keys[2]
    with pytest.raises(InputError, match="eval_split must be one of test, dev, got 'val'"):
        split_pairs(pairs, "by_english", "val")


def test_bundled_dev_split_shares_no_target_with_train_or_test():
    pairs = load_pairs()
    train, test = split_pairs(pairs)
    rest, dev = split_pairs(pairs, eval_split="dev")
    assert (len(rest), len(dev)) == (4340, 513)
    assert split_pairs(load_pairs(), eval_split="dev") == (rest, dev)  # deterministic
    targets = [{p.target for p in part} for part in (rest, dev, test)]
    assert not targets[0] & targets[1] and not targets[1] & targets[2] and not targets[0] & targets[2]
    assert target_overlap(rest, dev) == target_overlap(dev + rest, test) == 0.0


def test_bundled_corpus_counts():
    assert CORPUS_PATH.is_file()
    pairs = load_pairs()
    assert len(pairs) == 5318
    vocabs = build_vocabularies(pairs)
    # the seed's Lang counts <sos>/<eos> only; ours adds <pad> and <unk>
    assert (len(vocabs.source) - 2, len(vocabs.target) - 2) == (2579, 1573)
    assert [len(side) for side in split_pairs(pairs)] == [4853, 465]
    assert [len(side) for side in split_pairs(pairs, "by_french")] == [4752, 566]


def test_load_pairs_parameters_and_errors(tmp_path: Path):
    plain = tmp_path / "pairs.txt"
    plain.write_text(
        "I'm tired.\tJe suis fatigué.\nIt's late.\tIl est tard.\nWe're here at last!\tNous sommes enfin là !\n"
    )
    assert load_pairs(path=plain) == [
        Pair("je suis fatigue .", "i m tired ."),
        Pair("nous sommes enfin la !", "we re here at last !"),
    ]
    assert load_pairs(path=plain, prefixes=("it s",)) == [Pair("il est tard .", "it s late .")]
    assert load_pairs(path=plain, max_words=4) == [Pair("je suis fatigue .", "i m tired .")]
    packed = tmp_path / "pairs.txt.xz"
    packed.write_bytes(lzma.compress(plain.read_bytes()))
    assert read_lines(packed) == read_lines(plain)
    with pytest.raises(InputError, match="not found"):
        read_lines(tmp_path / "missing.txt")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Go.\tVa à la maison.\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_lines(latin1)
    broken = tmp_path / "broken.txt"
    broken.write_text("only one column\n")
    with pytest.raises(InputError, match=r"broken.txt:1: expected English<TAB>French"):
        read_lines(broken)


def test_vocabulary_indices_encode_decode():
    vocab = Vocabulary.from_sentences("fra", ["je suis fatigue .", "je suis la ."])
    assert vocab.index2word[:4] == list(SPECIAL_TOKENS)
    assert (vocab.word2index["<pad>"], vocab.word2index["<sos>"]) == (PAD_IDX, SOS_IDX)
    assert vocab.word2index["je"] == 4 and len(vocab) == 4 + 5
    assert vocab.word2count["je"] == 2 and vocab.word2count["la"] == 1
    indices = vocab.encode("je suis fatigue .")
    assert indices == [4, 5, 6, 7, EOS_IDX]
    assert vocab.decode(indices + [PAD_IDX, 5]) == "je suis fatigue ."
    assert vocab.decode([SOS_IDX, 4, 5, 7]) == "je suis ."
    assert vocab.encode("je suis inconnu .", unknown="unk") == [4, 5, UNK_IDX, 7, EOS_IDX]
    with pytest.raises(InputError, match="unknown fra word.*'inconnu'"):
        vocab.encode("je suis inconnu .")
    with pytest.raises(InputError, match="empty"):
        vocab.encode("   ")
    assert Vocabulary.from_dict(vocab.to_dict()).index2word == vocab.index2word
    with pytest.raises(InputError, match="does not start with"):
        Vocabulary.from_dict({"name": "x", "index2word": ["a"], "word2count": {}})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 7), st.integers(1, 7)), min_size=1, max_size=6))
def test_collate_pads_and_masks(lengths: list[tuple[int, int]]):
    examples = [([4] * (s - 1) + [EOS_IDX], [5] * (t - 1) + [EOS_IDX]) for s, t in lengths]
    batch = collate(examples)
    B, S, T = len(lengths), max(s for s, _ in lengths), max(t for _, t in lengths)
    assert batch.source.shape == (B, S) and batch.target.shape == (B, T)
    assert batch.source.dtype == torch.long and batch.source_mask.dtype == torch.bool
    assert batch.lengths.tolist() == [s for s, _ in lengths]
    assert batch.source_mask.sum(1).tolist() == batch.lengths.tolist()
    assert torch.equal(batch.source == PAD_IDX, ~batch.source_mask)
    assert int((batch.target != PAD_IDX).sum()) == sum(t for _, t in lengths)


def test_pad_sequences():
    padded, lengths = pad_sequences([[4, 2], [4, 5, 6, 2]])
    assert padded.tolist() == [[4, 2, 0, 0], [4, 5, 6, 2]] and lengths.tolist() == [2, 4]


def test_bucket_sampler_covers_everything_once_and_is_reproducible():
    lengths = [(i % 3 + 1, i % 2 + 1) for i in range(50)]
    sampler = BucketBatchSampler(lengths, batch_size=4, seed=1)
    batches = list(sampler)
    assert sorted(i for b in batches for i in b) == list(range(50))
    assert all(len({lengths[i] for i in b}) == 1 and len(b) <= 4 for b in batches)
    assert batches == list(BucketBatchSampler(lengths, batch_size=4, seed=1))
    sampler.set_epoch(1)
    assert list(sampler) != batches
    assert len(sampler) == len(batches)
    with pytest.raises(ValueError, match="batch_size"):
        BucketBatchSampler(lengths, batch_size=0)


def test_loader_batches_need_no_padding():
    pairs = [Pair("je suis la .", "i am here ."), Pair("tu es la .", "you are here ."), Pair("il est .", "he is .")]
    vocabs = build_vocabularies(pairs)
    loader = make_loader(TranslationDataset(pairs, vocabs), batch_size=8)
    batches = list(loader)
    assert sum(b.source.size(0) for b in batches) == 3
    assert all(bool(b.source_mask.all()) for b in batches)


def test_load_pairs_is_cached_but_returns_new_lists():
    first = load_pairs()
    first.clear()
    assert len(load_pairs()) == 5318


def test_corpus_files(tmp_path):
    refused(lambda: read_lines(tmp_path), "is a directory")
    bom = tmp_path / "bom.txt"
    bom.write_bytes("\ufeffI am here.\tJe suis là.\nGo.\tVa !\n".encode())
    assert read_lines(bom) == [("I am here.", "Je suis là."), ("Go.", "Va !")]  # the first pair is kept
    assert load_pairs(path=bom) == [Pair("je suis la .", "i am here .")]


def test_decoding_indices_outside_the_vocabulary_is_refused():
    vocab = Vocabulary.from_sentences("eng", ["i am here ."])
    assert vocab.decode([4, 5, 2, 6]) == "i am"
    refused(lambda: vocab.decode([-1]), "-1", "eng")
    refused(lambda: vocab.decode([len(vocab)]), str(len(vocab)))
