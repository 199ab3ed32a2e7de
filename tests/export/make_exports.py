"""Writes the tests' torch.export archives into <folder> (PyTorch 2.8 or later: the PT2 archive):

    python make_exports.py <folder>

For each model of tests/script/models.py below (seed 0, eval): <name>.pt2, exported on the inputs
saved in <name>_x.pt (a tuple), and <name>_y.pt, what Python's `ep.module()(*x)` returns: the
runner's output must equal it. Also:
- mlp_fc1.pt: the eager MLP's fc1 output on mlp_x.pt (a forward hook), what a recording of
  layer fc1 must hold;
- blocks_dynamic.pt2: export/make_fixture.py's Blocks with a dynamic batch in [1, 64];
- mlp_missing_weight.pt2: mlp.pt2 without its first weight file;
- mlp_no_samples.pt2: mlp.pt2 without its sample inputs (data/sample_inputs/);
- aoti_linear.pt2: an AOTInductor package (torch._inductor.aoti_compile_and_package: compiled
  code, no program) of a Linear and a ReLU, which the reader must name as such;
- chain1000.pt2: benchmarks/chain.hpp's 1,000 tiny ops (x + 1, relu, x * 0.5) on a [1, 64] input,
  for benchmarks/bench_exported.cpp.
resnet18.pt2 (models.ResNet, torchvision's ResNet-18 in plain PyTorch) is what
examples/exported_model.cpp reads.
"""
import os
import sys
import zipfile

import torch
import torch._inductor
from torch.export import Dim

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "script"))
sys.path.insert(0, here)
import make_fixture  # noqa: E402
import models  # noqa: E402


def inputs(name):
    g = torch.Generator().manual_seed(1)
    if name == "mlp":
        return (torch.randn(2, 784, generator=g),)
    if name == "lstm":
        return (torch.randint(0, 20, (1, 20), generator=g),)
    if name == "transformer":
        return (torch.randint(0, 100, (10, 2), generator=g),)
    if name == "tiny_gpt":
        return (torch.randint(0, 100, (2, 12), generator=g),)
    return (torch.randn(1, 3, 224, 224, generator=g),)


class Chain(torch.nn.Module):
    """benchmarks/chain.hpp: `x + 1`, `relu(x)`, `x * 0.5`, repeated 1,000 times."""

    def forward(self, x):
        for i in range(1000):
            x = x + 1 if i % 3 == 0 else torch.relu(x) if i % 3 == 1 else x * 0.5
        return x


MODELS = {"mlp": models.MLP, "lstm": models.LSTMNet, "transformer": models.TransformerEncoderModel,
          "tiny_gpt": models.TinyGPT, "resnet18": models.ResNet}


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    path = lambda name: os.path.join(folder, name)  # noqa: E731
    for name, make in MODELS.items():
        torch.manual_seed(0)
        model = make().eval()
        x = inputs(name)
        program = torch.export.export(model, x)
        torch.export.save(program, path(f"{name}.pt2"))
        torch.save(x, path(f"{name}_x.pt"))
        torch.save(program.module()(*x), path(f"{name}_y.pt"))
        if name == "mlp":
            seen = []
            model.fc1.register_forward_hook(lambda m, i, o: seen.append(o))
            model(*x)
            torch.save(seen[0], path("mlp_fc1.pt"))
    chain = torch.export.export(Chain(), (torch.randn(1, 64),))
    torch.export.save(chain, path("chain1000.pt2"))
    torch.manual_seed(0)
    blocks = make_fixture.Blocks().eval()
    batch = Dim("batch", min=1, max=64)
    program = torch.export.export(blocks, (torch.randn(3, 1, 4, 4),),
                                  dynamic_shapes={"image": {0: batch}})
    torch.export.save(program, path("blocks_dynamic.pt2"))
    linear = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    torch._inductor.aoti_compile_and_package(
        torch.export.export(linear, (torch.randn(2, 4),)), package_path=path("aoti_linear.pt2"))
    for name, dropped in (("mlp_missing_weight", "data/weights/weight_0"),
                          ("mlp_no_samples", "data/sample_inputs/model.pt")):
        with zipfile.ZipFile(path("mlp.pt2")) as src, \
                zipfile.ZipFile(path(f"{name}.pt2"), "w", zipfile.ZIP_STORED) as dst:
            for item in src.infolist():
                if not item.filename.endswith(dropped):
                    dst.writestr(item, src.read(item.filename))


if __name__ == "__main__":
    main()
