"""tools/finetune_cv.py: the candidate network reads a message the same alone or padded in a batch, and its
head starts at zero (no randomness before the seeded batches), and its copied layers continue the encoder exactly
where the frozen part stops (top two, or all of them)."""

import pytest

from tools.finetune_cv import make_net


def _tiny_bert():
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)   # random weights of a tiny shape: the property checked holds for any weights
    cfg = transformers.BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                  intermediate_size=32)
    return torch, transformers.BertModel(cfg).eval()


def test_padding_never_changes_what_a_message_reads():
    torch, model = _tiny_bert()
    net = make_net(model, top=2, n_features=3, n_classes=4).eval()
    torch.nn.init.normal_(net.head.weight)   # a trained head: logits depend on the pooled states
    short, long = torch.randn(3, 16), torch.randn(9, 16)
    feats = torch.randn(2, 3)
    with torch.no_grad():
        alone = net([short], feats[:1])
        batched = net([short, long], feats)
    assert torch.allclose(alone[0], batched[0], atol=1e-5)
    # and the long message's states do matter to its own row
    with torch.no_grad():
        other = net([short, long + 1.0], feats)
    assert not torch.allclose(batched[1], other[1], atol=1e-3)


def test_the_head_starts_at_zero_and_only_the_top_layers_train():
    torch, model = _tiny_bert()
    net = make_net(model, top=2, n_features=3, n_classes=4)
    assert float(net.head.weight.detach().abs().sum() + net.head.bias.detach().abs().sum()) == 0.0
    assert len(net.layers) == 2
    assert all(p.data_ptr() != q.data_ptr() for p in net.layers.parameters()
               for q in model.encoder.layer[1:].parameters())   # copies: the shared encoder is never trained


@pytest.mark.parametrize("top", [1, 3])
def test_the_copied_layers_continue_the_encoder_where_the_frozen_part_stops(top):
    # top = 3 of 3 is the whole-encoder fine-tune (`--top 6` on MiniLM): the net starts from the embeddings' output
    torch, model = _tiny_bert()
    net = make_net(model, top=top, n_features=0, n_classes=16).eval()
    with torch.no_grad():
        net.head.weight.copy_(torch.eye(16))    # the head passes the pooled embedding through
        ids = torch.tensor([[2, 7, 11, 5, 9]])
        out = model(input_ids=ids, output_hidden_states=True)
        below = model.config.num_hidden_layers - top
        pooled = net([out.hidden_states[below][0]], torch.zeros(1, 0))
    expected = torch.nn.functional.normalize(out.last_hidden_state.mean(1), dim=1)
    assert torch.allclose(pooled, expected, atol=1e-5)
