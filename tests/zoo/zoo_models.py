"""The zoo's plain-PyTorch models (tests/zoo/zoo.py lists the zoo): written as their users write
them, without torchvision, so every PyTorch from 1.13 on defines them."""
from typing import Dict

import torch
import torch.nn as nn


class GRULanguageModel(nn.Module):
    """A word-level language model: Embedding -> dropout -> 2-layer GRU (batch_first) ->
    dropout -> Linear over the vocabulary."""

    def __init__(self, vocab=1000, dim=128, hidden=256, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.dropout = nn.Dropout(0.2)
        self.rnn = nn.GRU(dim, hidden, layers, batch_first=True, dropout=0.2)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.rnn(self.dropout(self.embedding(tokens)))
        return self.decoder(self.dropout(out))


class DoubleConv(nn.Sequential):
    """(3x3 conv, batch norm, ReLU) twice."""

    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Down(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.MaxPool2d(2), DoubleConv(cin, cout))


class Up(nn.Module):
    """Upsample by a transposed conv, concatenate the skip connection, DoubleConv."""

    def __init__(self, cin, cout):
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cout, 2, stride=2)
        self.conv = DoubleConv(2 * cout, cout)

    def forward(self, x, skip):
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


class UNet(nn.Module):
    """Ronneberger et al.'s U-Net, narrow: an encoder of `levels` Down blocks and a decoder of as
    many Up blocks joined by skip connections, held in ModuleLists iterated in forward."""

    def __init__(self, channels=3, classes=2, width=16, levels=3):
        super().__init__()
        self.inc = DoubleConv(channels, width)
        self.downs = nn.ModuleList([Down(width << i, width << (i + 1)) for i in range(levels)])
        self.ups = nn.ModuleList([Up(width << (i + 1), width << i) for i in reversed(range(levels))])
        self.outc = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(skips[-1]))
        x = skips.pop()
        for up in self.ups:
            x = up(x, skips.pop())
        return self.outc(x)


class Seq2Seq(nn.Module):
    """A translation model around nn.Transformer (2 encoder and 2 decoder layers, batch_first):
    source and target embeddings, a causal mask on the target, a generator over the vocabulary."""

    def __init__(self, vocab=500, d_model=64, heads=4, layers=2, feedforward=128):
        super().__init__()
        self.src_embed = nn.Embedding(vocab, d_model)
        self.tgt_embed = nn.Embedding(vocab, d_model)
        self.transformer = nn.Transformer(d_model, heads, layers, layers, feedforward,
                                          dropout=0.1, batch_first=True)
        self.generator = nn.Linear(d_model, vocab)

    def forward(self, src, tgt):
        n = tgt.size(1)
        mask = torch.triu(torch.full((n, n), float("-inf"), device=tgt.device), diagonal=1)
        out = self.transformer(self.src_embed(src), self.tgt_embed(tgt), tgt_mask=mask)
        return self.generator(out)


class GPT2Block(nn.Module):
    """A pre-norm decoder block as GPT-2 writes it, with nn.MultiheadAttention (batch_first)
    called with its causal mask by keyword, and a GELU MLP."""

    def __init__(self, d_model=64, heads=4):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x, mask):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    """Token ids [batch, seq] -> token and position embeddings -> 2 GPT2Blocks (a ModuleList) ->
    LayerNorm -> an output head without bias whose weight is the token embedding's (tied)."""

    def __init__(self, vocab=100, d_model=64, context=16, blocks=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.h = nn.ModuleList([GPT2Block(d_model) for _ in range(blocks)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.wte.weight
        self.register_buffer("causal",
                             torch.triu(torch.full((context, context), float("-inf")), 1))

    def forward(self, tokens):
        t = tokens.size(1)
        x = self.wte(tokens) + self.wpe(torch.arange(t, device=tokens.device))
        mask = self.causal[:t, :t]
        for block in self.h:
            x = block(x, mask)
        return self.lm_head(self.ln_f(x))


class MultiTaskHeads(nn.Module):
    """A shared trunk and one head per task in an nn.ModuleDict, iterated in forward, returning
    the heads' outputs as a Dict[str, Tensor] keyed by task."""

    def __init__(self, features=16, width=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(features, width), nn.ReLU(), nn.Linear(width, width),
                                   nn.ReLU())
        self.heads = nn.ModuleDict({
            "label": nn.Linear(width, 5),
            "box": nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4)),
            "score": nn.Sequential(nn.Linear(width, 1), nn.Sigmoid()),
        })

    def forward(self, x) -> Dict[str, torch.Tensor]:
        h = self.trunk(x)
        out: Dict[str, torch.Tensor] = {}
        for task, head in self.heads.items():
            out[task] = head(h)
        return out
