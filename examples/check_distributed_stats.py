"""examples/distributed_stats on 1 rank, on 2 spawned ranks and on 2 ranks under torchrun:
the three merged.pt files load with torch.load and agree (equal counts, statistics within 1e-5
relative).

usage: check_distributed_stats.py <distributed_stats> <output folder>
"""
import os
import shutil
import subprocess
import sys

import torch


def run(cmd, out):
    print("$", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=240)
    print(p.stdout, flush=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: exit {p.returncode}")
    if not os.path.exists(out):
        sys.exit(f"FAILED: {out} was not written")
    return p.stdout


def load(path):
    d = torch.load(path)
    if sorted(d) != ["fc1", "fc2"]:
        sys.exit(f"FAILED: {path} has keys {sorted(d)}, expected fc1 and fc2")
    for key, v in d.items():
        if sorted(v) != ["count", "mean", "variance"]:
            sys.exit(f"FAILED: {path}[{key}] has fields {sorted(v)}")
    return d


def compare(a, b, name):
    for key in a:
        if a[key]["count"] != b[key]["count"]:
            sys.exit(f"FAILED: {name}: {key} counts {a[key]['count']} and {b[key]['count']}")
        for field in ("mean", "variance"):
            x, y = a[key][field], b[key][field]
            if x.shape != y.shape or not torch.allclose(x, y, rtol=1e-5, atol=0):
                err = ((x - y).abs() / y.abs().clamp_min(1e-300)).max().item()
                sys.exit(f"FAILED: {name}: {key}.{field} differs (max relative error {err})")
    print(f"{name}: equal counts, statistics within 1e-5 relative")


def main():
    exe, folder = sys.argv[1], sys.argv[2]
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    one, two, tr = (os.path.join(folder, n) for n in ("one.pt", "two.pt", "torchrun.pt"))
    out1 = run([exe, "--local-ranks", "1", "-o", one], one)
    out2 = run([exe, "--local-ranks", "2", "-o", two], two)
    if not out1.startswith("1 rank,") or not out2.startswith("2 ranks,"):
        sys.exit("FAILED: the first line does not name the rank count")
    a, b = load(one), load(two)
    if a["fc1"]["count"] != 12 or list(a["fc1"]["mean"].shape) != [60, 100]:
        sys.exit(f"FAILED: fc1 has count {a['fc1']['count']}, mean {list(a['fc1']['mean'].shape)}")
    compare(a, b, "1 rank against 2 ranks")

    # README's torchrun command, --standalone so no fixed port is taken (Debian 12's torchrun
    # needs --redirects/--tee other than 0 under Python 3.11). The torchrun of this Python's own
    # torch: Debian's beside /usr/bin/python3, PyTorch 2.13's in the venv of the 2.x leg.
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.path.exists(torchrun):
        torchrun = shutil.which("torchrun") or "/usr/bin/torchrun"
    print(f"torchrun: {torchrun}")
    run([torchrun, "--standalone", "--nproc_per_node=2", "--redirects", "1", "--tee", "1",
         "--no_python", exe, "-o", tr], tr)
    compare(a, load(tr), "1 rank against 2 ranks under torchrun")


if __name__ == "__main__":
    main()
