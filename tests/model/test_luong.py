"""LuongAttnDecoderRNN: the step against its recipe, masking, batching and learning."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from seq2seq_attention import PAD_IDX, SOS_IDX, EncoderRNN, LuongAttnDecoderRNN
from seq2seq_attention.model.search import greedy_search

V = 11


def make(score="dot", H=8):
    torch.manual_seed(0)
    return LuongAttnDecoderRNN(H, V, dropout_p=0.0, score=score).eval()


@settings(max_examples=15, deadline=None)
@given(B=st.integers(1, 3), S=st.integers(1, 6), T=st.integers(1, 4), score=st.sampled_from(["dot", "general"]))
def test_shapes_and_distributions(B, S, T, score):
    decoder = make(score)
    encoder_outputs, hidden = torch.randn(B, S, 8), torch.randn(1, B, 8)
    target = torch.randint(4, V, (B, T))
    log_probs, last, attentions = decoder(encoder_outputs, hidden, target)
    assert log_probs.shape == (B, T, V)
    assert last.shape == (1, B, 8)
    assert attentions.shape == (B, T, S)
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(B, T))
    torch.testing.assert_close(attentions.sum(-1), torch.ones(B, T))


def test_step_follows_the_recipe_in_float64():
    """GRU first, then dot scores with s_t, softmax, weighted sum, concat, tanh, output."""
    decoder = make().double()
    torch.manual_seed(1)
    encoder_outputs = torch.randn(2, 5, 8, dtype=torch.float64)
    hidden = torch.randn(1, 2, 8, dtype=torch.float64)
    tokens = torch.tensor([[SOS_IDX], [7]])
    logits, state, weights = decoder.forward_step(tokens, decoder.init_state(encoder_outputs, hidden))
    new_hidden = state.hidden

    expected_hidden = decoder.gru(F.relu(decoder.embedding(tokens)), hidden)[1]
    torch.testing.assert_close(new_hidden, expected_hidden, rtol=0, atol=1e-12)
    for b in range(2):
        s_t = new_hidden[0, b]  # (H,)
        e = torch.stack([encoder_outputs[b, j] @ s_t for j in range(5)])  # (S,): scalars
        alpha = torch.exp(e) / torch.exp(e).sum()  # (S,)
        value = sum(alpha[j] * encoder_outputs[b, j] for j in range(5))  # (H,): a vector
        attentional = torch.tanh(decoder.concat(torch.cat([value, s_t])))  # (H,)
        torch.testing.assert_close(weights[b, 0], alpha, rtol=0, atol=1e-12)
        torch.testing.assert_close(logits[b, 0], decoder.out(attentional), rtol=0, atol=1e-12)


def test_masked_positions_get_zero_and_padding_changes_nothing():
    torch.manual_seed(0)
    encoder = EncoderRNN(13, 8, dropout_p=0.0).eval()
    decoder = make()
    short = torch.tensor([[5, 6, 7]])
    padded = torch.tensor([[5, 6, 7, PAD_IDX, PAD_IDX], [8, 9, 10, 11, 12]])
    lengths = torch.tensor([3, 5])
    mask = padded != PAD_IDX
    with torch.no_grad():
        alone_out, alone_hidden = encoder(short)
        alone = greedy_search(decoder.forward_step, decoder.init_state(alone_out, alone_hidden), 4)
        batch_out, batch_hidden = encoder(padded, lengths)
        batch = greedy_search(decoder.forward_step, decoder.init_state(batch_out, batch_hidden, mask), 4)
    assert (batch[2][0, :, 3:] == 0).all()
    torch.testing.assert_close(batch[1][0], alone[1][0])  # the logits
    torch.testing.assert_close(batch[2][0, :, :3], alone[2][0])  # the weights


def test_the_query_is_the_state_after_the_gru_step():
    decoder = make()
    torch.manual_seed(2)
    encoder_outputs, hidden = torch.randn(2, 5, 8), torch.randn(1, 2, 8)
    tokens = torch.tensor([[SOS_IDX], [SOS_IDX]])
    _, state, weights = decoder.forward_step(tokens, decoder.init_state(encoder_outputs, hidden))
    new_hidden = state.hidden
    with_new = F.softmax(torch.bmm(new_hidden.transpose(0, 1), encoder_outputs.transpose(1, 2)), -1)
    with_old = F.softmax(torch.bmm(hidden.transpose(0, 1), encoder_outputs.transpose(1, 2)), -1)
    torch.testing.assert_close(weights, with_new)
    assert not torch.allclose(weights, with_old)


def test_learns_to_copy_a_tiny_batch():
    torch.manual_seed(0)
    encoder = EncoderRNN(V, 16, dropout_p=0.0)
    decoder = LuongAttnDecoderRNN(16, V, dropout_p=0.0)
    source = torch.tensor([[4, 5, 6, 2], [7, 8, 9, 2]])
    optimizer = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=0.03)
    losses = []
    for _ in range(60):
        optimizer.zero_grad()
        outputs, hidden = encoder(source)
        log_probs, _, _ = decoder(outputs, hidden, source)
        loss = F.nll_loss(log_probs.reshape(-1, V), source.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]
    with torch.no_grad():
        outputs, hidden = encoder(source)
        tokens, _, _, _ = greedy_search(decoder.forward_step, decoder.init_state(outputs, hidden), 4)
    assert torch.equal(tokens, source)


def test_every_parameter_gets_a_gradient():
    decoder = make("general").train()
    encoder_outputs = torch.randn(2, 5, 8, requires_grad=True)
    log_probs, _, _ = decoder(encoder_outputs, torch.randn(1, 2, 8), torch.randint(4, V, (2, 3)))
    log_probs.sum().backward()
    for name, param in decoder.named_parameters():
        if name != "embedding.weight":
            assert param.grad is not None and param.grad.abs().sum() > 0, name
    assert encoder_outputs.grad.abs().sum() > 0


def test_bad_inputs_raise_clear_errors():
    decoder = make()
    with pytest.raises(ValueError, match=r"encoder_hidden must be Float\[Tensor, '1 B H'\] with B=2, S=5, H=6, got"):
        decoder(torch.randn(2, 5, 6), torch.randn(1, 2, 8), torch.randint(4, V, (2, 3)))
    with pytest.raises(ValueError, match="unknown score 'cosine'"):
        LuongAttnDecoderRNN(8, V, score="cosine")
