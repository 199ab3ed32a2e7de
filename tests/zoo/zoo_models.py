"""The zoo's plain-PyTorch models (tests/zoo/zoo.py lists the zoo): written as their users write
them, without torchvision, so every PyTorch from 1.13 on defines them."""
import math
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


class Expert(nn.Sequential):
    """One expert of a mixture: a GELU MLP."""

    def __init__(self, dim, hidden):
        super().__init__(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))


class MixtureOfExperts(nn.Module):
    """A mixture-of-experts layer as sparse-MoE code writes it, computed densely: a gate Linear
    scores the experts, the top k scores are softmaxed into routing weights (scattered back to
    one weight per expert, zero for the rest), every expert (an nn.ModuleList of MLPs) is called
    on every token, and the output is the residual plus the weighted sum of the experts'."""

    def __init__(self, dim=32, hidden=64, experts=4, k=2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(experts)])
        self.k = k

    def forward(self, x):
        h = self.norm(x)
        logits = self.gate(h)
        scores, chosen = logits.topk(self.k, dim=-1)
        weights = torch.zeros_like(logits).scatter(-1, chosen, scores.softmax(dim=-1))
        out = x
        for i, expert in enumerate(self.experts):
            out = out + weights[..., i:i + 1] * expert(h)
        return out


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


class BiLSTMTagger(nn.Module):
    """A sequence tagger over padded batches: Embedding -> pack_padded_sequence by the lengths
    -> a 2-layer bidirectional LSTM -> pad_packed_sequence back to the batch's length -> a Linear
    over the tags. The lengths are clamped to [1, seq] (an all-zero batch, as the peers and the
    command line make integer inputs, has every sentence one token long)."""

    def __init__(self, vocab=200, dim=32, hidden=48, tags=9):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, 2, batch_first=True, bidirectional=True)
        self.tagger = nn.Linear(2 * hidden, tags)

    def forward(self, tokens, lengths):
        n = tokens.size(1)
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(tokens), lengths.clamp(1, n),
                                                   batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=n)
        return self.tagger(padded)


class BertEmbeddings(nn.Module):
    """Word, position and token-type embeddings summed, then LayerNorm and dropout; the position
    ids are built with torch.arange in forward."""

    def __init__(self, vocab, dim, positions, types=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, dim, padding_idx=0)
        self.position_embeddings = nn.Embedding(positions, dim)
        self.token_type_embeddings = nn.Embedding(types, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) +
             self.position_embeddings(positions))
        return self.dropout(self.LayerNorm(x))


class BertLayer(nn.Module):
    """A post-norm encoder layer written as BERT writes it: query, key and value Linears, scaled
    dot-product scores plus the additive padding mask, softmax, the output projection and
    LayerNorm, then a GELU feed-forward and LayerNorm."""

    def __init__(self, dim, heads, feedforward):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(dim, dim)
        self.key = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)
        self.attention_output = nn.Linear(dim, dim)
        self.attention_norm = nn.LayerNorm(dim, eps=1e-12)
        self.intermediate = nn.Sequential(nn.Linear(dim, feedforward), nn.GELU())
        self.output = nn.Linear(feedforward, dim)
        self.output_norm = nn.LayerNorm(dim, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + mask
        context = (self.dropout(scores.softmax(dim=-1)) @ v).transpose(1, 2).reshape(b, t, d)
        x = self.attention_norm(x + self.dropout(self.attention_output(context)))
        return self.output_norm(x + self.dropout(self.output(self.intermediate(x))))


class Bert(nn.Module):
    """A small BERT: token ids and token-type ids [batch, seq] -> BertEmbeddings -> 2 BertLayers
    (a ModuleList) under the padding mask of the ids (HF's additive -10000) -> a pooler (Linear
    and Tanh on the first token). Returns the sequence output and the pooled output."""

    def __init__(self, vocab=120, dim=64, heads=4, feedforward=128, layers=2, positions=32):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, dim, positions)
        self.layers = nn.ModuleList([BertLayer(dim, heads, feedforward) for _ in range(layers)])
        self.pooler = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())

    def forward(self, input_ids, token_type_ids):
        mask = (1.0 - (input_ids != 0).float())[:, None, None, :] * -10000.0
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            x = layer(x, mask)
        return x, self.pooler(x[:, 0])
