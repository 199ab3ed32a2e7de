"""torchinfo 1.8.0 and torchview 0.2.7, run live on the test models (tests/script/models.py), for
the parity tests (peers_test.cpp). Run by the Python of the project's virtual environment
(scripts/requirements.txt pins both peers).

    python peers.py summary <model> <inputs> [--depth N] [--columns a,b] [--row-settings a,b]
                            [--col-width N]
        prints torchinfo.summary's table, as `recorder summary` prints its own: PyPI's 1.8.0's,
        then a line "--- torchinfo's current source (third_party/torchinfo)" and the source's
    python peers.py draw <model> <inputs> [--depth N|inf] [--expand-nested]
        prints "<nodes> nodes, <edges> edges" of torchview.draw_graph's picture
    python peers.py export <model> <inputs> --to <file.pt2> [--dynamic-batch min,max]
        saves torch.export.export of the model on those inputs with torch.export.save, and prints
        "exported <file.pt2>"
    python peers.py --batch <file>
        answers every request of <file> (one per line, its words separated by tabs), each after
        a line "=== request <i>"

<inputs> are `recorder`'s: --input-size 2,784 (repeated for several inputs) and --dtype
float32|int64 (one per input, or one for all). An int64 input is all zeros, as torchinfo and
`recorder` make it without --int-high.
"""
import argparse
import math
import os
import re
import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402

_tests = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests")
sys.path.insert(0, os.path.join(_tests, "script"))
sys.path.insert(0, os.path.join(_tests, "zoo"))
import models  # noqa: E402

MODELS = {
    "mlp": models.MLP,
    "lstm": models.LSTMNet,
    "transformer": models.TransformerEncoderModel,
    "two_inputs": models.TwoInputs,
    "twice": models.Twice,
    "tied": models.Tied,
    "keyword_calls": models.KeywordCalls,
    "resnet18_plain": models.ResNet,
}
MODELS.update({name: make for name, (make, _, _) in models.ATTENTION_MODELS.items()})
DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.long,
          "int32": torch.int32}

parser = argparse.ArgumentParser()
parser.add_argument("what", choices=["summary", "draw", "export"])
parser.add_argument("model", help="a name of MODELS or of the zoo (tests/zoo/zoo.py)")
parser.add_argument("--input-size", action="append", required=True)
parser.add_argument("--dtype", action="append", default=[])
parser.add_argument("--depth", default="3")
parser.add_argument("--columns")
parser.add_argument("--row-settings")
parser.add_argument("--col-width", type=int, default=25)
parser.add_argument("--expand-nested", action="store_true")
parser.add_argument("--to", help="export: the .pt2 file to write")
parser.add_argument("--dynamic-batch", help="export: 'min,max' of every input's dimension 0")


# The line between PyPI's torchinfo 1.8.0's table and the current source's (tables.hpp).
SOURCE_MARK = "--- torchinfo's current source (third_party/torchinfo)\n"


def torchinfo_source():
    """torchinfo's current source, vendored in third_party/torchinfo, as the package
    `torchinfo_source` (beside PyPI's torchinfo 1.8.0, imported as `torchinfo`)."""
    if "torchinfo_source" not in sys.modules:
        import importlib.util

        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "third_party",
                            "torchinfo", "torchinfo")
        spec = importlib.util.spec_from_file_location(
            "torchinfo_source", os.path.join(root, "__init__.py"), submodule_search_locations=[root])
        module = importlib.util.module_from_spec(spec)
        sys.modules["torchinfo_source"] = module
        spec.loader.exec_module(module)
    return sys.modules["torchinfo_source"]


def run(argv):
    """What torchinfo or torchview give for one request (`argv`, as on the command line)."""
    args = parser.parse_args(argv)
    sizes = [tuple(int(d) for d in s.split(",")) for s in args.input_size]
    dtypes = [DTYPES[d] for d in args.dtype] or [torch.float32]
    if len(dtypes) == 1:
        dtypes = dtypes * len(sizes)
    if args.model in MODELS:
        torch.manual_seed(0)
        model = MODELS[args.model]()
    else:
        import zoo

        model = zoo.build(args.model)
    if args.what == "export":
        # The inputs torchinfo makes: random floats, zeros for integers (as `recorder` without
        # --int-high).
        inputs = tuple(torch.zeros(s, dtype=d) if not d.is_floating_point else torch.randn(s, dtype=d)
                       for s, d in zip(sizes, dtypes))
        dynamic = None
        if args.dynamic_batch:
            low, high = (int(v) for v in args.dynamic_batch.split(","))
            batch = torch.export.Dim("batch", min=low, max=high)
            dynamic = tuple({0: batch} for _ in inputs)
        program = torch.export.export(model.eval(), inputs, dynamic_shapes=dynamic)
        torch.export.save(program, args.to)
        return f"exported {args.to}\n"
    if args.what == "summary":
        import torchinfo

        kwargs = {}
        if args.columns:
            kwargs["col_names"] = args.columns.split(",")
        if args.row_settings:
            kwargs["row_settings"] = args.row_settings.split(",")
        stats = torchinfo.summary(model, input_size=sizes, dtypes=dtypes, depth=int(args.depth),
                                  col_width=args.col_width, verbose=0, **kwargs)
        source = torchinfo_source().summary(model, input_size=sizes, dtypes=dtypes,
                                            depth=int(args.depth), col_width=args.col_width,
                                            verbose=0, **kwargs)
        return f"{stats}\n{SOURCE_MARK}{source}\n"
    import torchview

    depth = math.inf if args.depth == "inf" else int(args.depth)
    graph = torchview.draw_graph(model, input_size=sizes, dtypes=dtypes, depth=depth,
                                 expand_nested=args.expand_nested)
    source = graph.visual_graph.source
    edges = len(re.findall(r"^\s*\S+ -> \S+", source, re.M))
    nodes = len(re.findall(r"^\s*(?!graph |node |edge |subgraph )[^\s{}]+ \[", source, re.M))
    return f"{nodes} nodes, {edges} edges\n"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--batch":
        # One request per line, its words separated by tabs; each answer follows a line
        # "=== request <i>" (one Python start-up for all: torch's import is most of a request's time).
        with open(sys.argv[2]) as f:
            requests = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        for i, argv in enumerate(requests):
            sys.stdout.write(f"=== request {i}\n{run(argv)}")
    else:
        sys.stdout.write(run(sys.argv[1:]))
