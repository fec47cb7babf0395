"""A checkpoint whose config contradicts its saved tensors is refused (issue 32, item 7), and older names load.

A config edited to say ``tie_embeddings: true`` over untied weights used to load without a word,
the output matrix silently replacing the embedding: a model the checkpoint never held. Any tensors
that the model its config builds shares must be equal in the file.
"""

import json

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import DECODERS, InputError, build_model, load_checkpoint, save_checkpoint
from seq2seq_attention.core.checkpoint import JSON_NAME, READABLE_VERSIONS, RENAMED
from seq2seq_attention.translation.corpus import Pair, build_vocabularies
from seq2seq_attention.translation.pretrained import PRETRAINED_DIR

PAIRS = [Pair("je suis fatigue .", "i am tired ."), Pair("il est grand .", "he is tall .")]
VOCABS = build_vocabularies(PAIRS)
SIZES = len(VOCABS.source), len(VOCABS.target)


def _edit_config(directory, **changes):
    path = directory / JSON_NAME
    document = json.loads(path.read_text(encoding="utf-8"))
    document["config"].update(changes)
    path.write_text(json.dumps(document), encoding="utf-8")


@settings(max_examples=6, deadline=None)
@given(decoder=st.sampled_from(sorted(DECODERS)), seed=st.integers(0, 1000))
def test_a_config_that_ties_untied_weights_is_refused(tmp_path_factory, decoder, seed):
    directory = tmp_path_factory.mktemp("untied")
    torch.manual_seed(seed)
    save_checkpoint(directory, build_model(decoder, *SIZES, hidden_size=8), VOCABS)
    _edit_config(directory, tie_embeddings=True)
    with pytest.raises(
        InputError, match=r"contradicts its config.*decoder\.(embedding|out)\.weight.*saved tensors differ"
    ):
        load_checkpoint(directory)


@pytest.mark.parametrize("decoder", sorted(DECODERS))
def test_tied_weights_load_tied_and_an_untied_config_over_equal_tensors_loads_untied(tmp_path, decoder):
    torch.manual_seed(0)
    tied = build_model(decoder, *SIZES, hidden_size=8, tie_embeddings=True)
    save_checkpoint(tmp_path / "tied", tied, VOCABS)
    loaded = load_checkpoint(tmp_path / "tied").model
    assert loaded.decoder.out.weight is loaded.decoder.embedding.weight
    torch.testing.assert_close(loaded.decoder.out.weight, tied.decoder.out.weight)
    _edit_config(tmp_path / "tied", tie_embeddings=False)  # no contradiction: two equal matrices, now free
    untied = load_checkpoint(tmp_path / "tied").model
    assert untied.decoder.out.weight is not untied.decoder.embedding.weight
    torch.testing.assert_close(untied.decoder.out.weight, untied.decoder.embedding.weight)


@pytest.mark.parametrize("name", sorted(path.name for path in PRETRAINED_DIR.iterdir() if path.is_dir()))
def test_the_packaged_version_2_checkpoints_load_under_the_current_names(name):
    document = json.loads((PRETRAINED_DIR / name / JSON_NAME).read_text(encoding="utf-8"))
    assert document["version"] in READABLE_VERSIONS
    model = load_checkpoint(PRETRAINED_DIR / name).model
    names = set(model.state_dict())
    assert not any(".score." in n for n in names)
    if model.decoder.attention is not None:
        assert {"decoder.attention.Wa.weight", "decoder.attention.Ua.weight", "decoder.attention.Va.weight"} <= names


def test_a_version_2_file_with_attention_score_names_loads_into_the_same_model(tmp_path):
    torch.manual_seed(0)
    model = build_model("luong", *SIZES, hidden_size=8, score="general").eval()
    save_checkpoint(tmp_path, model, VOCABS)
    from safetensors.torch import load_file, save_file

    path = tmp_path / JSON_NAME
    document = json.loads(path.read_text(encoding="utf-8"))
    tensors = tmp_path / document["files"]["model"]["name"]
    ((old, new),) = RENAMED[2]
    save_file({n.replace(new, old): t for n, t in load_file(str(tensors)).items()}, str(tensors))
    import hashlib

    data = tensors.read_bytes()
    document["files"]["model"].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    document["version"] = 2
    path.write_text(json.dumps(document), encoding="utf-8")
    assert "decoder.attention.score.W.weight" in load_file(str(tensors))
    loaded = load_checkpoint(tmp_path).model
    torch.testing.assert_close(loaded.decoder.attention.W.weight, model.decoder.attention.W.weight)
