"""The merged recordings tests/distributed's `python` scenario saved, against what Python
computes from every batch (batches.pt): rank r recorded batches r, r+W, r+2W, ...

usage: check_merged.py <folder> <world>
"""
import os
import sys

import torch


def fail(msg):
    sys.exit("FAILED: " + msg)


def main():
    folder, world = sys.argv[1], int(sys.argv[2])
    batches = torch.load(os.path.join(folder, "batches.pt"))
    x = torch.stack(batches)  # [7, 4, 8] doubles, a NaN in batch 3
    n = len(batches)

    def load(name):
        d = torch.load(os.path.join(folder, name))
        if list(d) != ["fc"]:
            fail(f"{name} has keys {list(d)}")
        return d["fc"]

    def close(a, b, what):
        if a.shape != b.shape or not torch.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True):
            fail(f"{what}: {a} against {b}")

    def exact(a, b, what):
        if a.shape != b.shape or not torch.allclose(a, b, rtol=0, atol=0, equal_nan=True):
            fail(f"{what} is not exact: {a} against {b}")

    close(load("sum.pt"), x.sum(0), "sum")
    close(load("mean.pt"), x.mean(0), "mean")
    m = load("moments.pt")
    if m["count"] != n:
        fail(f"moments count {m['count']}")
    close(m["mean"], x.mean(0), "moments mean")
    close(m["variance"], x.var(0, unbiased=True), "moments variance")
    mm = load("min_max.pt")
    # torch.amin/amax propagate NaN, as the recorder's min/max do
    exact(mm["min"], x.amin(0), "min")
    exact(mm["max"], x.amax(0), "max")
    h = load("histogram.pt")
    if (h["bins"], h["lo"], h["hi"]) != (32, -3.0, 3.0):
        fail(f"histogram bins {h['bins']} over [{h['lo']}, {h['hi']}]")
    expected = torch.histc(x[~x.isnan()], bins=32, min=-3.0, max=3.0).to(torch.int64)
    if h["counts"].dtype != torch.int64 or not torch.equal(h["counts"], expected):
        fail(f"histogram {h['counts'].tolist()} against {expected.tolist()}")
    kept = load("keep_all.pt")
    order = [k for r in range(world) for k in range(r, n, world)]
    if len(kept) != n:
        fail(f"keep_all kept {len(kept)}")
    for value, k in zip(kept, order):
        exact(value, batches[k], f"keep_all value of batch {k}")
    print(f"python: the merged sum, mean, moments, min/max, histogram and keep_all of {n} "
          f"batches over {world} ranks match")


if __name__ == "__main__":
    main()
