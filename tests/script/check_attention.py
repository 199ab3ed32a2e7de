"""The Python side of the activation cross-check on the transformer models (models.py), run by
tests/script/capture_test.cpp with the Python whose torch is the libtorch under test.

    python3 check_attention.py <models dir> <name> <recording.pt> <layer>...

C++ traced `<name>_script.pt` on `<name>_input0.pt` in eval mode without gradients and saved the
last outputs of the layers with recorder::save. This builds models.py's `<name>` with the scripted
model's weights, records the same layers with forward hooks under torch.no_grad(), and compares
value for value.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402
from hooks import compare, hooked_outputs  # noqa: E402

folder, name, recording, layers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
scripted = torch.jit.load(f"{folder}/{name}_script.pt")
model = models.ATTENTION_MODELS[name][0]()
model.load_state_dict(scripted.state_dict())
model.eval()
inputs = [torch.load(f"{folder}/{name}_input{i}.pt")
          for i in range(len(models.ATTENTION_MODELS[name][1]))]
got = torch.load(recording)

compare(got, hooked_outputs(model, layers, *inputs), layers, name)
