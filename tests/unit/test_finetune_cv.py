"""tools/finetune_cv.py: the candidate network reads a message the same alone or padded in a batch, and its
head starts at zero (no randomness before the seeded batches)."""

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
