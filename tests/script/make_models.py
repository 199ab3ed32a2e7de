"""Writes the TorchScript models (and the files that are not models) the TorchScript tests use.

    python3 make_models.py <outdir> [--vision-from <dir>]

Made at test time by the Python whose torch matches the libtorch under test (Debian's
python3-torch 1.13 with python3-torchvision, or PyTorch 2.13 from the project's virtual
environment), never committed. The models mirror the templated examples (examples/models/*.hpp)
where one exists, so both front ends can be compared on the same architecture; models.py holds
the plain-PyTorch ones. `expected.json` holds numbers computed here, independently of the C++
code: torchinfo's parameter and mult-add formulas applied with forward hooks, and the torch
version that saved each file.

torchvision cannot be installed beside PyTorch 2.13's CPU build. Without torchvision, the
torchvision models (and their numbers) are copied from `--vision-from`, a folder this script
wrote with an older PyTorch that has it: those files are then saved by that PyTorch, which the
newer libtorch loads (PyTorch reads files older versions wrote). A stamp of this script's inputs
makes a second run with nothing to do return at once.
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import *  # noqa: E402,F401,F403  (the model classes, scripted below)
import models  # noqa: E402

try:
    import torchvision
except ImportError:
    torchvision = None

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--vision-from", help="a folder holding the torchvision models, written by "
                    "this script with a PyTorch that has torchvision")
args = parser.parse_args()
out = args.out
os.makedirs(out, exist_ok=True)
stamp = os.path.join(out, ".stamp")
here = os.path.dirname(os.path.abspath(__file__))
digest = hashlib.sha256()
for name in ("make_models.py", "models.py"):
    digest.update(open(os.path.join(here, name), "rb").read())
digest.update(f"{torch.__version__} {torchvision is not None} {args.vision_from}".encode())
if args.vision_from:
    other = os.path.join(args.vision_from, ".stamp")
    digest.update(open(other, "rb").read() if os.path.exists(other) else b"")
digest = digest.hexdigest()
if os.path.exists(stamp) and open(stamp).read() == digest:
    sys.exit(0)
# Written anew: no file of an earlier run (another torch, another script) stays to be taken as
# this run's (expected.json's saved_by lists the folder's .pt files).
for old in os.listdir(out):
    if old.endswith(".pt"):
        os.remove(os.path.join(out, old))


def path(name):
    return os.path.join(out, name)


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


def module_calls(model, inputs):
    """"path#k Class" for every module call, in call order (forward pre-hooks; "" is the root),
    in eval mode with gradients on, where PyTorch calls every submodule (no fused fast path)."""
    names = {m: n for n, m in model.named_modules()}
    counts, calls = {}, []

    def pre(module, args):
        k = counts.get(module, 0)
        counts[module] = k + 1
        calls.append(f"{names[module]}#{k} {type(module).__name__}")

    handles = [m.register_forward_pre_hook(pre) for m in model.modules()]
    model(*inputs)
    for h in handles:
        h.remove()
    return calls


torch.manual_seed(0)
expected = {}
saved_by = {}  # file -> the torch version that saved it
x224 = torch.randn(1, 3, 224, 224)
torch.save(x224, path("x224.pt"))

VISION_FILES = ["resnet18_script.pt", "resnet18_trace.pt", "resnet18_frozen.pt",
                "resnet18_optimized.pt", "resnet18_state_dict.pt", "resnet18_pickled.pt",
                "resnet50_script.pt", "mobilenet_v2_script.pt", "x224.pt", "nms_script.pt"]


class Nms(torch.nn.Module):
    """Calls torchvision's custom op torchvision::nms, which libtorch alone does not register."""

    def forward(self, boxes, scores):
        return torchvision.ops.nms(boxes, scores, 0.5)
VISION_MODELS = ["resnet18", "resnet50", "mobilenet_v2"]


def vision_models():
    """torchvision's ResNet-18, ResNet-50 and MobileNetV2, scripted and traced."""
    resnet18 = torchvision.models.resnet18().eval()
    torch.jit.script(resnet18).save(path("resnet18_script.pt"))
    torch.jit.trace(resnet18, x224).save(path("resnet18_trace.pt"))
    torch.jit.freeze(torch.jit.script(resnet18)).save(path("resnet18_frozen.pt"))
    torch.jit.optimize_for_inference(torch.jit.script(resnet18)).save(
        path("resnet18_optimized.pt"))
    expected["resnet18"] = torchinfo_numbers(resnet18, x224)
    torch.save(resnet18.state_dict(), path("resnet18_state_dict.pt"))
    torch.save(resnet18, path("resnet18_pickled.pt"))

    resnet50 = torchvision.models.resnet50().eval()
    torch.jit.script(resnet50).save(path("resnet50_script.pt"))
    expected["resnet50"] = torchinfo_numbers(resnet50, torch.randn(2, 3, 224, 224))

    mobilenet = torchvision.models.mobilenet_v2().eval()
    torch.jit.script(mobilenet).save(path("mobilenet_v2_script.pt"))
    expected["mobilenet_v2"] = torchinfo_numbers(mobilenet, x224)
    torch.jit.script(Nms()).save(path("nms_script.pt"))
    for f in VISION_FILES:
        saved_by[f] = torch.__version__


def copy_vision_models(folder):
    """The torchvision models another PyTorch wrote into `folder`, with their numbers."""
    with open(os.path.join(folder, "expected.json")) as f:
        theirs = json.load(f)
    for f in VISION_FILES:
        shutil.copyfile(os.path.join(folder, f), path(f))
        saved_by[f] = theirs["saved_by"][f]
    for m in VISION_MODELS:
        expected[m] = theirs[m]


if torchvision is not None:
    vision_models()
elif args.vision_from:
    copy_vision_models(args.vision_from)
else:
    sys.exit(f"make_models.py: torchvision is missing beside torch {torch.__version__}: give "
             "--vision-from <a folder this script wrote with a PyTorch that has torchvision>")

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
torch.jit.script(Subscripts()).save(path("subscripts_script.pt"))
torch.jit.script(KeywordCalls()).save(path("keyword_calls_script.pt"))
torch.jit.script(TensorMethods()).save(path("tensor_methods_script.pt"))
with torch.random.fork_rng():  # the files below draw from the generator as before
    torch.manual_seed(0)
    torch.jit.script(Gpt4().eval()).save(path("gpt4_script.pt"))  # the viewer's deep page

# Inputs the command line reads: one tensor, a list of batches.
torch.save([torch.randn(2, 784) for _ in range(3)], path("mlp_batches.pt"))
torch.save(torch.randn(4, 784), path("mlp_x.pt"))

# Files that are not TorchScript models.
torch.save(torch.randn(2, 3), path("tensor.pt"))
torch.save(torch.randn(2, 3), path("legacy.pt"), _use_new_zipfile_serialization=False)
with open(path("garbage.pt"), "wb") as f:
    f.write(b"this is not a model\n" * 4)
open(path("empty.pt"), "wb").close()

# Transformers as PyTorch 2.x users write them (models.py), with their inputs and Python's
# parameter counts; tiny_gpt calls F.scaled_dot_product_attention, which 1.13 lacks.
for name, (make, _, needs_torch_2) in models.ATTENTION_MODELS.items():
    if needs_torch_2 and not models.has_sdpa():
        continue
    torch.manual_seed(0)
    model = make().eval()
    torch.jit.script(model).save(path(f"{name}_script.pt"))
    inputs = models.example_inputs(name)
    for i, x in enumerate(inputs):
        torch.save(x, path(f"{name}_input{i}.pt"))
    expected[name] = {"params": sum(p.numel() for p in model.parameters()),
                      "trainable": sum(p.numel() for p in model.parameters() if p.requires_grad),
                      "calls": module_calls(model, inputs)}

for f in os.listdir(out):
    if f.endswith(".pt") and f not in saved_by:
        saved_by[f] = torch.__version__
expected["saved_by"] = dict(sorted(saved_by.items()))
expected["torch"] = torch.__version__
with open(path("expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
with open(stamp, "w") as f:
    f.write(digest)
print(f"wrote the TorchScript test models into {out}")
