"""The Python side of the TorchScript activation cross-check (tests/script/capture_test.cpp).

    python3 check_activations.py <models dir> <recording.pt>

C++ traced the scripted ResNet-18 (resnet18_script.pt) on x224.pt and saved the last outputs of
layer1.0.bn1, layer4 and fc with recorder::save. This builds torchvision's resnet18 with the
scripted model's weights, records the same layers with forward hooks, and compares value for
value.
"""
import sys

import torch
import torchvision

models, recording = sys.argv[1], sys.argv[2]
scripted = torch.jit.load(f"{models}/resnet18_script.pt")
model = torchvision.models.resnet18()
model.load_state_dict(scripted.state_dict())
model.eval()
x = torch.load(f"{models}/x224.pt")
got = torch.load(recording)

layers = ["layer1.0.bn1", "layer4", "fc"]
seen = {}


def hook(name):
    def record(module, args, output):
        seen[name] = output.detach().clone()  # before the in-place ReLU that follows bn1
    return record


for name in layers:
    model.get_submodule(name).register_forward_hook(hook(name))
with torch.no_grad():
    model(x)

if sorted(got.keys()) != sorted(layers):
    sys.exit(f"keys {sorted(got.keys())} != {sorted(layers)}")
for name in layers:
    a, b = got[name], seen[name]
    if tuple(a.shape) != tuple(b.shape):
        sys.exit(f"{name}: shape {tuple(a.shape)} != {tuple(b.shape)}")
    if not torch.allclose(a, b, rtol=1e-5, atol=1e-5):
        sys.exit(f"{name}: values differ (max abs difference {(a - b).abs().max().item()})")
    print(f"ok {name} {tuple(a.shape)}")
