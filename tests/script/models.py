"""The plain-PyTorch models of the TorchScript tests (no torchvision), shared by make_models.py
(which scripts and saves them), peers.py (which runs torchinfo and torchview on them) and
check_attention.py (which records their activations with forward hooks).

Every PyTorch from 1.13 on defines them, except the ones that call ops 1.13 lacks
(`needs_torch_2`). `example_inputs(name)` gives each model's test input, drawn from a fixed seed.
"""
import math
from typing import List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---- the templated examples' architectures -------------------------------------------------
class MLP(nn.Module):
    """examples/models/mlp.hpp: 784-100-50-10 with ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 100)
        self.fc2 = nn.Linear(100, 50)
        self.fc3 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class LSTMNet(nn.Module):
    """examples/models/lstm.hpp: Embedding(20, 300) -> LSTM(300, 512, 2 layers) -> Linear(512, 20)."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(20, 300)
        self.encoder = nn.LSTM(300, 512, num_layers=2)
        self.decoder = nn.Linear(512, 20)

    def forward(self, x) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        embed = self.embedding(x)
        out, hidden = self.encoder(embed)
        out = self.decoder(out)
        out = out.view(-1, out.size(2))
        return out, hidden


class EncoderLayer(nn.Module):
    """examples/models/transformer.hpp's EncoderLayer (post-norm, ReLU)."""

    def __init__(self, d_model, heads, feedforward, dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x):
        attended = self.self_attn(x, x, x)[0]
        x = self.norm1(x + self.dropout1(attended))
        ff = self.linear2(self.dropout(F.relu(self.linear1(x))))
        return self.norm2(x + self.dropout2(ff))


class TransformerEncoderModel(nn.Module):
    """examples/models/transformer.hpp's TransformerEncoderModel."""

    def __init__(self, vocab=100, d_model=64, heads=4, layers=2, feedforward=256):
        super().__init__()
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab, d_model)
        self.encoder = nn.ModuleList([EncoderLayer(d_model, heads, feedforward) for _ in range(layers)])
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.embedding(tokens) * math.sqrt(self.d_model)
        for layer in self.encoder:
            x = layer(x)
        return self.head(x)


# ---- a model of TorchScript's awkward corners -------------------------------------------------
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()


class Gate(nn.Module):
    """Data-dependent control flow: an `if` without outputs holding an in-place op, and a loop."""

    def forward(self, x):
        if x.abs().sum() >= 0:
            x.mul_(2.0)
        for _ in range(2):
            x = x + 1.0
        return x


class Pair(nn.Module):
    """A submodule returning a tuple."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 2)
        self.b = nn.Linear(8, 3)

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.a(x), self.b(x)


def free_fn(x):
    return x * 3.0


class Custom(nn.Module):
    """A submodule called twice, a ModuleList iterated in forward, an attribute chain
    (self.holder.inner), a method on self, a free function, an `if` without outputs, a tuple
    returned by a submodule and by the model."""

    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(8, 8)
        self.layers = nn.ModuleList([Block(), Block()])
        self.holder = Holder()
        self.gate = Gate()
        self.heads = Pair()

    def helper(self, x):
        return torch.tanh(x)

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        x = self.shared(x) + self.shared(x)
        for layer in self.layers:
            x = layer(x)
        x = self.holder.inner(x)
        x = self.helper(x)
        x = free_fn(x)
        x = self.gate(x)
        return self.heads(x)


class Tied(nn.Module):
    """Two Linear modules sharing one weight tensor: parameters are counted once."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8, bias=False)
        self.b = nn.Linear(8, 8, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


class Twice(nn.Module):
    """One Linear called twice, then a head: a bare path "fc" selects both calls."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(self.fc(self.fc(x)))


class TwoInputs(nn.Module):
    """Two inputs of different dtypes: features [seq, batch, 64] and token ids [seq, batch]."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(64, 32)
        self.embed = nn.Embedding(10, 32)

    def forward(self, x, tokens):
        return self.proj(x) + self.embed(tokens)


class Subscripts(nn.Module):
    """Subscripts as ViT and GPTs write them: `x[:, 0]` (a slice, then a select), `x[:, 1:, :2]`
    (three slices), `x[0]` (one select), a causal mask sliced from a buffer (no input reaches
    it) and positions from torch.arange (an op without tensor operands). Input [2, 5, 4]."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(8, 8)))
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        t = x.size(1)
        first = x[:, 0]
        rest = x[:, 1:, :2]
        m = self.mask[:t, :t]
        pos = torch.arange(t)
        return self.fc(first) + rest.sum() + m.sum() + x[0].sum() + pos.sum()


class ScaledLinear(nn.Module):
    """A Linear whose output is multiplied by `scale` when one is given."""

    def __init__(self, d=16):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x, scale: Optional[torch.Tensor] = None):
        h = self.fc(x)
        if scale is not None:
            h = h * scale
        return h


class KeywordCalls(nn.Module):
    """Submodules called with keyword arguments only (`block(x=x, scale=x)`, `norm(input=h)`),
    whose arguments torchinfo's forward hooks do not see, and one called by position. Input
    [2, 5, 16]."""

    def __init__(self, d=16):
        super().__init__()
        self.block = ScaledLinear(d)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 4)

    def forward(self, x):
        h = self.block(x=x, scale=x)
        h = self.norm(input=h)
        return self.head(h)


class TensorMethods(nn.Module):
    """What TorchScript runs otherwise than Python dispatches it: `x.to(x.device)` and `x.cpu()`
    (ops the interpreter registers itself, not the dispatcher), `1.0 - x` (compiled to `neg` and
    `add`) and `2.0 / x` (`reciprocal` and `mul`). Input [2, 3]."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x).to(x.device).cpu()
        return 2.0 / (1.0 - y)


# ---- transformers as PyTorch 2.x users write them --------------------------------------------
class TextEncoder(nn.Module):
    """Token ids [batch, seq] -> Embedding -> nn.TransformerEncoder (2 post-norm layers, d_model
    64, 4 heads, batch_first) -> Linear. Scripted by PyTorch 2.x, its nn.MultiheadAttention
    calls aten::scaled_dot_product_attention, which libtorch 1.13 lacks."""

    def __init__(self, vocab=100, d_model=64, heads=4, layers=2, feedforward=256):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, feedforward, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embedding(tokens)))


class AttentionBlock(nn.Module):
    """A pre-norm block around nn.MultiheadAttention (batch_first) called without weights, as
    the 2.x fast path and SDPA expect: x + attn(norm(x)), then x + mlp(norm2(x))."""

    def __init__(self, d_model=64, heads=4, hidden=128):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class CausalSelfAttention(nn.Module):
    """Hand-written causal attention over F.scaled_dot_product_attention (PyTorch >= 2.0)."""

    def __init__(self, d_model=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, t, c = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class SdpaBlock(nn.Module):
    def __init__(self, d_model=64, hidden=128):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, hidden)
        self.out = nn.Linear(hidden, d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    """Token ids [batch, seq] -> token and position embeddings -> 2 SdpaBlocks -> LayerNorm ->
    Linear: a decoder whose attention calls F.scaled_dot_product_attention directly."""

    def __init__(self, vocab=100, d_model=64, context=16, blocks=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([SdpaBlock(d_model) for _ in range(blocks)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


# ---- a GPT as users hand-write it (nanoGPT's style) -------------------------------------------
class MaskedSelfAttention(nn.Module):
    """Causal attention written out: q @ k^T scaled, masked with a registered buffer sliced as
    `self.mask[:, :, :t, :t]` (no input reaches the slice), softmax, @ v. No SDPA: scripts on
    PyTorch 1.13 too."""

    def __init__(self, d_model=64, heads=4, context=16):
        super().__init__()
        self.heads = heads
        self.scale = 1.0 / math.sqrt(d_model // heads)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        b, t, c = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class Mlp(nn.Module):
    def __init__(self, d_model=64, hidden=256):
        super().__init__()
        self.fc = nn.Linear(d_model, hidden)
        self.act = nn.GELU()
        self.proj = nn.Linear(hidden, d_model)

    def forward(self, x):
        return self.proj(self.act(self.fc(x)))


class GptBlock(nn.Module):
    def __init__(self, d_model=64, heads=4, context=16):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MaskedSelfAttention(d_model, heads, context)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = Mlp(d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt4(nn.Module):
    """Token ids [batch, seq] (seq <= 16, ids < 100) -> token and position (torch.arange)
    embeddings -> 4 GptBlocks -> LayerNorm -> Linear without bias whose weight is the token
    embedding's (tied): a deep model the viewer must open readable (issue 34)."""

    def __init__(self, vocab=100, d_model=64, heads=4, context=16, blocks=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList([GptBlock(d_model, heads, context) for _ in range(blocks)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.tok(tokens) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def has_sdpa():
    return hasattr(F, "scaled_dot_product_attention")


# ---- a ResNet-18 in plain PyTorch (torchvision's architecture, without torchvision) -----------
class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                            nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's resnet18(): the same modules, names, parameters (11,689,512) and forward."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(64, 64), BasicBlock(64, 64))
        self.layer2 = nn.Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128))
        self.layer3 = nn.Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256))
        self.layer4 = nn.Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# name -> (constructor, input shapes and dtypes as the command line takes them, needs torch 2)
ATTENTION_MODELS = {
    "text_encoder": (TextEncoder, [((2, 12), torch.long, 100)], False),
    "attention_block": (AttentionBlock, [((2, 12, 64), torch.float32, None)], False),
    "tiny_gpt": (TinyGPT, [((2, 12), torch.long, 100)], True),
}


def example_inputs(name, seed=0):
    """The inputs the tests feed model `name`: random normals, or token ids below the vocabulary
    size, from generator seed `seed`."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for shape, dtype, high in ATTENTION_MODELS[name][1]:
        if dtype == torch.long:
            out.append(torch.randint(0, high, shape, generator=g))
        else:
            out.append(torch.randn(shape, generator=g))
    return out
