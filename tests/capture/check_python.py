"""The Python side of the capture cross-check (tests/capture/capture_test.cpp).

C++ wrote, into the folder given as the only argument, the weights, inputs and recorded
activations of the MLP and ResNet-18. This loads them with torch.load, recomputes the
activations from the same weights with torch.nn.functional, and checks keys, shapes and values.
"""
import sys

import torch
import torch.nn.functional as F

folder = sys.argv[1]


def load(name):
    return torch.load(f"{folder}/{name}")


def check(what, got, expected, rtol=1e-5, atol=1e-5):
    if tuple(got.shape) != tuple(expected.shape):
        sys.exit(f"{what}: shape {tuple(got.shape)} != {tuple(expected.shape)}")
    if not torch.allclose(got, expected, rtol=rtol, atol=atol):
        diff = (got - expected).abs().max().item()
        sys.exit(f"{what}: values differ (max abs difference {diff})")
    print(f"ok {what} {tuple(got.shape)}")


def check_keys(what, d, keys):
    if sorted(d.keys()) != sorted(keys):
        sys.exit(f"{what}: keys {sorted(d.keys())} != {sorted(keys)}")


# ---- MLP 784-100-50-10 -------------------------------------------------------------------
w = load("mlp_weights.pt")
x = load("mlp_input.pt")
outputs = load("mlp_outputs.pt")
inputs_sum = load("mlp_inputs_sum.pt")
check_keys("mlp outputs", outputs, ["fc1", "fc2", "fc3"])
check_keys("mlp input sums", inputs_sum, ["fc2", "fc3"])


def mlp(x):
    a1 = F.linear(x, w["fc1.weight"], w["fc1.bias"])
    a2 = F.linear(F.relu(a1), w["fc2.weight"], w["fc2.bias"])
    a3 = F.linear(F.relu(a2), w["fc3.weight"], w["fc3.bias"])
    return {"fc1": a1, "fc2": a2, "fc3": a3}, {"fc2": F.relu(a1), "fc3": F.relu(a2)}


runs = [mlp(x), mlp(x * 2)]
for key in ["fc1", "fc2", "fc3"]:
    kept = outputs[key]
    if not isinstance(kept, list) or len(kept) != 2:
        sys.exit(f"mlp {key}: expected a list of 2 tensors, got {type(kept)}")
    for i in range(2):
        check(f"mlp output {key}[{i}]", kept[i], runs[i][0][key])
for key in ["fc2", "fc3"]:
    check(f"mlp input sum {key}", inputs_sum[key], runs[0][1][key] + runs[1][1][key])

# ---- ResNet-18 (torchvision's layout), eval mode ------------------------------------------
w = load("resnet_weights.pt")
x = load("resnet_input.pt")
outputs = load("resnet_outputs.pt")
check_keys("resnet outputs", outputs, ["layer1", "layer4.1.bn2", "layer4", "fc"])


def bn(x, p):
    return F.batch_norm(x, w[p + ".running_mean"], w[p + ".running_var"], w[p + ".weight"],
                        w[p + ".bias"], training=False, eps=1e-5)


seen = {}


def block(x, p, stride):
    out = F.relu(bn(F.conv2d(x, w[p + ".conv1.weight"], stride=stride, padding=1), p + ".bn1"))
    out = bn(F.conv2d(out, w[p + ".conv2.weight"], padding=1), p + ".bn2")
    seen[p + ".bn2"] = out.clone()
    identity = x
    if p + ".downsample.0.weight" in w:
        identity = bn(F.conv2d(x, w[p + ".downsample.0.weight"], stride=stride), p + ".downsample.1")
    return F.relu(out + identity)


h = F.relu(bn(F.conv2d(x, w["conv1.weight"], stride=2, padding=3), "bn1"))
h = F.max_pool2d(h, 3, stride=2, padding=1)
for layer, stride in [("layer1", 1), ("layer2", 2), ("layer3", 2), ("layer4", 2)]:
    h = block(h, layer + ".0", stride)
    h = block(h, layer + ".1", 1)
    seen[layer] = h
logits = F.linear(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1), w["fc.weight"], w["fc.bias"])
seen["fc"] = logits
for key in ["layer1", "layer4.1.bn2", "layer4", "fc"]:
    check(f"resnet output {key}", outputs[key], seen[key], rtol=1e-4, atol=1e-4)
print("python cross-check passed")
