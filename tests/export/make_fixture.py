"""Writes data/blocks.json, the program of a small model exported by torch.export (PyTorch 2.5 or
later), and data/blocks_weights.json, its weights config (which file holds each parameter), which
export_test.cpp reads without libtorch. Run by hand when the fixture must change:

    .venv/bin/python tests/export/make_fixture.py

The model has what the static reader must get right: a ModuleList no forward calls, a block
called twice, a buffer and a parameter of the root read by its own ops, a convolution and a
pooling (their rows' attributes), a subscript of two aten ops, a tied head, and a dynamic batch
size. Stack traces are dropped (they name this machine's paths)."""
import json
import os
import sys
import zipfile

import torch
from torch import nn
from torch.export import Dim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "script"))
import models  # noqa: E402


class Block(models.Block):
    """models.Block (Linear, ReLU) with a residual connection."""

    def forward(self, x):
        return super().forward(x) + x


class Blocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.emb = nn.Linear(8, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 8)
        self.head.weight = self.emb.weight  # tied
        self.register_buffer("scale", torch.ones(8))
        self.cls = nn.Parameter(torch.zeros(1, 8))

    def forward(self, image):
        x = self.pool(self.conv(image)).flatten(1)  # [b, 2 * 2 * 2] = [b, 8]
        x = self.emb(x) * self.scale + self.cls
        for block in self.blocks:
            x = block(x)
        x = self.blocks[0](x)
        return self.head(x), x[:, :4, None]


def main():
    torch.manual_seed(0)
    model = Blocks().eval()
    batch = Dim("batch", min=1, max=64)
    program = torch.export.export(model, (torch.randn(3, 1, 4, 4),),
                                  dynamic_shapes={"image": {0: batch}})
    here = os.path.dirname(os.path.abspath(__file__))
    archive = os.path.join(here, "data", "blocks.pt2")
    torch.export.save(program, archive)
    with zipfile.ZipFile(archive) as z:
        name = next(n for n in z.namelist() if n.endswith("models/model.json"))
        text = json.loads(z.read(name))
        weights = json.loads(z.read(name.replace("models/model.json",
                                                  "data/weights/model_weights_config.json")))
    os.remove(archive)
    for node in text["graph_module"]["graph"]["nodes"]:
        node["metadata"].pop("stack_trace", None)
    with open(os.path.join(here, "data", "blocks.json"), "w") as f:
        json.dump(text, f, indent=1, sort_keys=True)
        f.write("\n")
    for entry in weights["config"].values():
        entry.pop("tensor_meta", None)
    with open(os.path.join(here, "data", "blocks_weights.json"), "w") as f:
        json.dump(weights, f, indent=1, sort_keys=True)
        f.write("\n")
    print(program.graph, file=sys.stderr)


if __name__ == "__main__":
    main()
