"""Checks, in Python, what `recorder record` wrote: the file loads with torch.load and holds what
the model's own submodules give on the same inputs.

    python3 check_record.py keys <acts.pt>
        prints "key: shape" (or "key: {field: ...}" for dicts) for every entry, in order
    python3 check_record.py mlp-mean <mlp_script.pt> <batches.pt> <acts.pt>
        acts["fc1"], acts["fc3"] are the element-wise means over the batches of fc1's and fc3's outputs
    python3 check_record.py mlp-absmax <mlp_script.pt> <batches.pt> <acts.pt>
        ... their element-wise largest magnitudes (the amax of symmetric quantization)
    python3 check_record.py mlp-quantile <mlp_script.pt> <batches.pt> <acts.pt> <q>
        ... dicts {"quantile": t}, t float64, torch.quantile(stacked outputs, q, dim=0)
    python3 check_record.py mlp-grad <mlp_script.pt> <batches.pt> <acts.pt>
        acts["fc1"] is the sum over the batches of d(sum of the output)/d(fc1's output)
    python3 check_record.py same <a.pt> <b.pt>
        the two recordings hold the same keys, equal counts and tensors within 1e-12 relative
    python3 check_record.py chrome <x.trace.json>
        prints, for each process of the Chrome trace `recorder profile` wrote, its name and its
        runs, module calls and ops, after checking that every event of a run lies in its run's
        root call and that runs do not overlap

Prints "ok" when the check holds, else what differs (exit status 1).
"""
import sys

import torch
import torch.nn.functional as F


def describe(v):
    if torch.is_tensor(v):
        return str(list(v.shape))
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {describe(x)}" for k, x in v.items()) + "}"
    return repr(v)


def fail(message):
    print(message)
    sys.exit(1)


def same(name, got, want):
    if got.shape != want.shape:
        fail(f"{name}: shape {list(got.shape)}, expected {list(want.shape)}")
    if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
        fail(f"{name}: largest difference {(got - want).abs().max().item()}")


mode = sys.argv[1]
if mode == "keys":
    for key, value in torch.load(sys.argv[2]).items():
        print(f"{key}: {describe(value)}")
    sys.exit(0)

if mode == "same":
    a, b = torch.load(sys.argv[2]), torch.load(sys.argv[3])
    if list(a.keys()) != list(b.keys()):
        fail(f"keys {list(a.keys())} and {list(b.keys())}")
    for key in a:
        x, y = a[key], b[key]
        for field in (x if isinstance(x, dict) else {"": x}):
            u, v = (x[field], y[field]) if field else (x, y)
            if torch.is_tensor(u):
                if u.shape != v.shape or not torch.allclose(u, v, rtol=1e-12, atol=0):
                    fail(f"{key} {field}: largest difference {(u - v).abs().max().item()}")
            elif u != v:
                fail(f"{key} {field}: {u} and {v}")
    print("ok")
    sys.exit(0)

if mode == "chrome":
    import json

    with open(sys.argv[2]) as f:
        events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    for pid, name in sorted(names.items()):
        mine = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
        runs = sorted({e["args"]["run"] for e in mine})
        roots = {}
        for e in mine:
            if e["cat"] == "user_annotation" and e["args"]["Module Hierarchy"] == "":
                roots[e["args"]["run"]] = (e["ts"], e["ts"] + e["dur"])
        if sorted(roots) != runs:
            fail(f"{name}: runs {runs} but root calls in {sorted(roots)}")
        for e in mine:
            lo, hi = roots[e["args"]["run"]]
            if e["ts"] < lo - 1e-3 or e["ts"] + e["dur"] > hi + 1e-3:
                fail(f"{name}: {e['name']} of run {e['args']['run']} outside its run")
        spans = sorted(roots.values())
        if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
            fail(f"{name}: runs overlap")
        calls = sum(e["cat"] == "user_annotation" for e in mine)
        ops = sum(e["cat"] == "cpu_op" for e in mine)
        print(f"{pid} {name}: {len(runs)} runs, {calls} calls, {ops} ops")
    sys.exit(0)

model = torch.jit.load(sys.argv[2]).eval()
batches = torch.load(sys.argv[3])
acts = torch.load(sys.argv[4])
if mode in ("mlp-mean", "mlp-absmax", "mlp-quantile"):
    with torch.no_grad():
        outputs = {"fc1": torch.stack([model.fc1(x) for x in batches]),
                   "fc3": torch.stack([model(x) for x in batches])}
    if list(acts.keys()) != ["fc1", "fc3"]:
        fail(f"keys {list(acts.keys())}, expected ['fc1', 'fc3']")
    for key, stacked in outputs.items():
        got = acts[key]
        if mode == "mlp-mean":
            want = stacked.mean(0)
        elif mode == "mlp-absmax":
            want = stacked.abs().amax(0)
        else:
            if not isinstance(got, dict) or list(got.keys()) != ["quantile"]:
                fail(f"{key}: {describe(got)}, expected {{quantile: ...}}")
            got = got["quantile"]
            if got.dtype != torch.float64:
                fail(f"{key}: dtype {got.dtype}, expected torch.float64")
            want = torch.quantile(stacked.double(), float(sys.argv[5]), dim=0)
        same(key, got, want)
elif mode == "mlp-grad":
    total = None
    for x in batches:
        h = model.fc1(x)
        h.retain_grad()
        y = model.fc3(F.relu(model.fc2(F.relu(h))))
        y.sum().backward()
        total = h.grad if total is None else total + h.grad
    if list(acts.keys()) != ["fc1"]:
        fail(f"keys {list(acts.keys())}, expected ['fc1']")
    same("fc1", acts["fc1"], total)
else:
    fail(f"unknown mode {mode}")
print("ok")
