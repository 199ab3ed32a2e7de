"""The Python side of the TorchScript activation cross-check (tests/script/capture_test.cpp).

    python3 check_activations.py <models dir> <recording.pt>

C++ traced the scripted ResNet-18 (resnet18_script.pt) on x224.pt and saved the last outputs of
layer1.0.bn1, layer4 and fc with recorder::save. This builds torchvision's resnet18 with the
scripted model's weights, records the same layers with forward hooks, and compares value for
value.
"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hooks import compare, hooked_outputs  # noqa: E402

models, recording = sys.argv[1], sys.argv[2]
scripted = torch.jit.load(f"{models}/resnet18_script.pt")
model = torchvision.models.resnet18()
model.load_state_dict(scripted.state_dict())
model.eval()
x = torch.load(f"{models}/x224.pt")
got = torch.load(recording)

layers = ["layer1.0.bn1", "layer4", "fc"]
compare(got, hooked_outputs(model, layers, x), layers)
