"""Writes the TorchScript models (and the files that are not models) the TorchScript tests use.

    python3 make_models.py <outdir>

Made with Debian's python3-torch and python3-torchvision at test time, never committed. The
models mirror the templated examples (examples/models/*.hpp) where one exists, so both front
ends can be compared on the same architecture. `expected.json` holds numbers computed here,
independently of the C++ code: torchinfo's parameter and mult-add formulas applied with forward
hooks. A stamp of this script's contents makes a second run with nothing to do return at once.
"""
import hashlib
import json
import math
import os
import sys
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
stamp = os.path.join(out, ".stamp")
digest = hashlib.sha256(open(__file__, "rb").read()).hexdigest()
if os.path.exists(stamp) and open(stamp).read() == digest:
    sys.exit(0)


def path(name):
    return os.path.join(out, name)


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


# ---- torchinfo's mult-adds, from forward hooks (independent of the C++ code) --------------
def torchinfo_numbers(model, *inputs):
    """Parameters (each tensor once) and torchinfo's Mult-Adds: for every call of a module
    without children, from its parameters and its first output's shape."""
    macs = 0

    def hook(module, args, output):
        nonlocal macs
        first = output
        while isinstance(first, (tuple, list)):
            first = first[0]
        shape = list(first.shape)
        for name, p in module.named_parameters():
            n = p.numel()
            if name in ("weight", "bias"):
                if "Conv" in type(module).__name__:
                    macs += n * math.prod(shape[:1] + shape[2:])
                elif "Linear" in type(module).__name__:
                    macs += n * math.prod(shape[:-1])
                else:
                    macs += shape[0] * n
            elif "weight" in name or "bias" in name:
                macs += math.prod(shape[:2]) * n

    handles = [m.register_forward_hook(hook) for m in model.modules() if not list(m.children())]
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    params = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"params": params, "trainable": trainable, "mult_adds": macs}


torch.manual_seed(0)
expected = {}
x224 = torch.randn(1, 3, 224, 224)
torch.save(x224, path("x224.pt"))

resnet18 = torchvision.models.resnet18().eval()
torch.jit.script(resnet18).save(path("resnet18_script.pt"))
torch.jit.trace(resnet18, x224).save(path("resnet18_trace.pt"))
torch.jit.freeze(torch.jit.script(resnet18)).save(path("resnet18_frozen.pt"))
torch.jit.optimize_for_inference(torch.jit.script(resnet18)).save(path("resnet18_optimized.pt"))
expected["resnet18"] = torchinfo_numbers(resnet18, x224)
torch.save(resnet18.state_dict(), path("resnet18_state_dict.pt"))
torch.save(resnet18, path("resnet18_pickled.pt"))

resnet50 = torchvision.models.resnet50().eval()
torch.jit.script(resnet50).save(path("resnet50_script.pt"))
expected["resnet50"] = torchinfo_numbers(resnet50, torch.randn(2, 3, 224, 224))

mobilenet = torchvision.models.mobilenet_v2().eval()
torch.jit.script(mobilenet).save(path("mobilenet_v2_script.pt"))
expected["mobilenet_v2"] = torchinfo_numbers(mobilenet, x224)

torch.jit.script(MLP()).save(path("mlp_script.pt"))
lstm = LSTMNet().eval()
torch.jit.script(lstm).save(path("lstm_script.pt"))
tokens = torch.randint(0, 20, (1, 100))
torch.save(tokens, path("tokens.pt"))
torch.jit.trace(lstm, tokens).save(path("lstm_trace.pt"))
torch.jit.script(TransformerEncoderModel().eval()).save(path("transformer_script.pt"))
torch.jit.script(Custom()).save(path("custom_script.pt"))
torch.jit.script(Tied()).save(path("tied_script.pt"))
torch.jit.script(TwoInputs()).save(path("two_inputs_script.pt"))
torch.jit.script(Twice()).save(path("twice_script.pt"))

# Inputs the command line reads: one tensor, a list of batches.
torch.save([torch.randn(2, 784) for _ in range(3)], path("mlp_batches.pt"))
torch.save(torch.randn(4, 784), path("mlp_x.pt"))

# Files that are not TorchScript models.
torch.save(torch.randn(2, 3), path("tensor.pt"))
torch.save(torch.randn(2, 3), path("legacy.pt"), _use_new_zipfile_serialization=False)
with open(path("garbage.pt"), "wb") as f:
    f.write(b"this is not a model\n" * 4)
open(path("empty.pt"), "wb").close()

with open(path("expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
with open(stamp, "w") as f:
    f.write(digest)
print(f"wrote the TorchScript test models into {out}")
