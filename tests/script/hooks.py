"""Python's side of the activation cross-checks (check_activations.py, check_attention.py): what
forward hooks see, compared with what C++ recorded."""
import sys

import torch


def hooked_outputs(model, layers, *inputs):
    """The output of each layer (a path) in one forward of `model` under torch.no_grad(), copied
    as the hook sees it (before an in-place op that follows, such as ResNet's ReLU after bn1)."""
    seen = {}

    def hook(name):
        def record(module, args, output):
            seen[name] = output.detach().clone()
        return record

    handles = [model.get_submodule(name).register_forward_hook(hook(name)) for name in layers]
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return seen


def compare(got, seen, layers, what=""):
    """Exits naming the first difference: keys, shapes, then values (1e-5); else prints ok."""
    prefix = f"{what} " if what else ""
    if sorted(got.keys()) != sorted(layers):
        sys.exit(f"{prefix}keys {sorted(got.keys())} != {sorted(layers)}")
    for name in layers:
        a, b = got[name], seen[name]
        if tuple(a.shape) != tuple(b.shape):
            sys.exit(f"{prefix}{name}: shape {tuple(a.shape)} != {tuple(b.shape)}")
        if not torch.allclose(a, b, rtol=1e-5, atol=1e-5):
            sys.exit(f"{prefix}{name}: values differ (max abs difference "
                     f"{(a - b).abs().max().item()})")
        print(f"ok {prefix}{name} {tuple(a.shape)}")
