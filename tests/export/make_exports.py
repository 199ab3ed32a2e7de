"""Writes the tests' torch.export archives into <folder> (PyTorch 2.8 or later: the PT2 archive):

    python make_exports.py <folder>

resnet18.pt2   models.ResNet (torchvision's ResNet-18 in plain PyTorch), seed 0, eval, exported on
               a [1, 3, 224, 224] input; examples/exported_model.cpp reads it.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "script"))
import models  # noqa: E402


def main():
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    model = models.ResNet().eval()
    program = torch.export.export(model, (torch.randn(1, 3, 224, 224),))
    torch.export.save(program, os.path.join(folder, "resnet18.pt2"))


if __name__ == "__main__":
    main()
