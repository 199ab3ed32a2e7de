"""The zoo: real models scripted, and torchinfo's and torchview's answers on each, for the parity
test (zoo_test.cpp compares `recorder summary` and `recorder draw` with them).

    python zoo.py make <models> <leg> [--vision-from <models>]
        scripts every zoo model this Python can build into <models> (a folder per torch version,
        shared by both legs: tests/zoo/CMakeLists.txt) and writes the leg's index <leg>/zoo.tsv:
        a line per model, `name <tab> file <tab> saved_by <tab> the command line's input
        arguments`. torchvision's models come from <models> when this Python has torchvision, else
        from --vision-from (written by a Python that has it; libtorch 2.x loads the files 1.13
        saved).
    python zoo.py peers <leg> <cache>
        answers, for every model of <leg>/zoo.tsv that this Python's torch saved, the five requests
        the test makes (torchinfo at default columns and at depth 10 with every column; torchview's
        counts at depth 1, 3 and unlimited), into <leg>/answers/<name>.txt. An answer is kept in
        <cache> under the model file's hash (and peers.py's and this file's), so each peer runs
        once per model file, whichever leg asks.

Models the peers run must be the file's model: both build it from the same code with the same
seed (torch.manual_seed(0)) in eval mode, and only the Python whose torch saved a file answers for
it. A stamp of the inputs makes a second `make` with nothing to do return at once.
"""
import argparse
import hashlib
import os
import shutil
import sys
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "script"))
sys.path.insert(0, os.path.join(here, "..", "..", "cli", "tests"))
import models  # noqa: E402
import zoo_models  # noqa: E402

try:
    import torchvision
    from torchvision import models as tv
except ImportError:
    torchvision = tv = None

IMAGE = ["--input-size", "1,3,224,224"]


def vision(name, inputs=IMAGE, family="", **kwargs):
    """torchvision.models[.family].name(**kwargs), untrained (no weights are downloaded)."""
    return ("torchvision", lambda: getattr(getattr(tv, family) if family else tv, name)(**kwargs),
            inputs)


def plain(make, inputs, needs_torch_2=False):
    return ("torch2" if needs_torch_2 else "plain", make, inputs)


# name -> (what it needs: torchvision | plain | torch2, constructor, `recorder`'s input arguments)
ZOO = {
    # torchvision's convolutional families
    "resnet18": vision("resnet18"),
    "resnet50": vision("resnet50"),
    "resnext50_32x4d": vision("resnext50_32x4d"),
    "vgg11_bn": vision("vgg11_bn"),
    "squeezenet1_1": vision("squeezenet1_1"),
    "densenet121": vision("densenet121"),
    "googlenet": vision("googlenet", aux_logits=False, init_weights=False),
    "inception_v3": vision("inception_v3", ["--input-size", "1,3,299,299"], aux_logits=False,
                           init_weights=False),
    "mobilenet_v2": vision("mobilenet_v2"),
    "mobilenet_v3_small": vision("mobilenet_v3_small"),
    "efficientnet_b0": vision("efficientnet_b0"),
    "regnet_y_400mf": vision("regnet_y_400mf"),
    "shufflenet_v2_x0_5": vision("shufflenet_v2_x0_5"),
    "mnasnet0_5": vision("mnasnet0_5"),
    "convnext_tiny": vision("convnext_tiny"),
    # torchvision's vision transformers
    "vit_b_16": vision("vit_b_16"),
    "swin_t": vision("swin_t"),
    "maxvit_t": vision("maxvit_t"),
    # segmentation (an OrderedDict output) and video
    "lraspp_mobilenet_v3_large": vision("lraspp_mobilenet_v3_large", family="segmentation",
                                        weights_backbone=None),
    "r3d_18": vision("r3d_18", ["--input-size", "1,3,8,112,112"], family="video"),
    # nn.Transformer*, RNN language models, a U-Net, SDPA
    "text_encoder": plain(models.TextEncoder, ["--input-size", "2,12", "--dtype", "int64"]),
    "attention_block": plain(models.AttentionBlock, ["--input-size", "2,12,64"]),
    "seq2seq": plain(zoo_models.Seq2Seq, ["--input-size", "2,10", "--input-size", "2,9",
                                          "--dtype", "int64"]),
    "gru_lm": plain(zoo_models.GRULanguageModel, ["--input-size", "4,35", "--dtype", "int64"]),
    "lstm_lm": plain(models.LSTMNet, ["--input-size", "1,100", "--dtype", "int64"]),
    "unet": plain(zoo_models.UNet, ["--input-size", "1,3,128,128"]),
    # a GPT-2-style decoder: nn.MultiheadAttention with a causal mask by keyword, a tied head
    "gpt2_mha": plain(zoo_models.GPT2, ["--input-size", "2,12", "--dtype", "int64"]),
    "tiny_gpt": plain(models.TinyGPT, ["--input-size", "2,12", "--dtype", "int64"], True),
    # heads in an nn.ModuleDict returning a Dict[str, Tensor]
    "moduledict_heads": plain(zoo_models.MultiTaskHeads, ["--input-size", "4,16"]),
    # a mixture of experts (every expert called, weighted by top-k routing), a packed BiLSTM
    # tagger, a BERT-style encoder (hand-written layers)
    "moe": plain(zoo_models.MixtureOfExperts, ["--input-size", "2,8,32"]),
    "bilstm_tagger": plain(zoo_models.BiLSTMTagger, ["--input-size", "3,10", "--input-size", "3",
                                                     "--dtype", "int64"]),
    "bert_tokens": plain(zoo_models.Bert, ["--input-size", "2,12", "--input-size", "2,12",
                                           "--dtype", "int64"]),
}


def torch_version():
    """"1.13", "2.13": the torch that saves (and answers for) a file."""
    return ".".join(torch.__version__.split(".")[:2])


def can_build(needs):
    if needs == "torchvision":
        return tv is not None
    if needs == "torch2":
        return models.has_sdpa()
    return True


def build(name):
    """Model `name` as the file holds it: built from seed 0, in eval mode."""
    torch.manual_seed(0)
    return ZOO[name][1]().eval()


def file_hash(*paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def make(args):
    os.makedirs(args.models, exist_ok=True)
    os.makedirs(args.leg, exist_ok=True)
    stamp = os.path.join(args.models, ".stamp")
    want = hashlib.sha256((file_hash(__file__, os.path.join(here, "zoo_models.py"),
                                     os.path.join(here, "..", "script", "models.py")) +
                           torch.__version__ + str(tv is not None)).encode()).hexdigest()
    if not (os.path.exists(stamp) and open(stamp).read() == want):
        for old in os.listdir(args.models):
            if old.endswith(".pt"):
                os.remove(os.path.join(args.models, old))
        for name, (needs, _, _) in ZOO.items():
            if can_build(needs):
                torch.jit.save(torch.jit.script(build(name)), os.path.join(args.models, name + ".pt"))
        with open(stamp, "w") as f:
            f.write(want)
    lines = []
    for name, (needs, _, inputs) in ZOO.items():
        folder = args.models
        if needs == "torchvision" and tv is None:
            if not args.vision_from:
                sys.exit(f"zoo.py: {name} needs torchvision: give --vision-from")
            folder = args.vision_from
        elif not can_build(needs):
            continue  # tiny_gpt on PyTorch 1.13 (no scaled_dot_product_attention)
        file = os.path.join(folder, name + ".pt")
        if not os.path.exists(file):
            sys.exit(f"zoo.py: {file} is missing")
        saved_by = torch_version() if folder == args.models else open(
            os.path.join(folder, ".torch")).read()
        lines.append("\t".join([name, file, saved_by] + inputs))
    with open(os.path.join(args.models, ".torch"), "w") as f:
        f.write(torch_version())
    with open(os.path.join(args.leg, "zoo.tsv"), "w") as f:
        f.write("".join(line + "\n" for line in lines))


# The requests zoo_test.cpp makes of each model, as peers.py takes them (after the model's name
# and its inputs).
REQUESTS = [
    ("summary", []),
    ("summary", ["--depth", "10", "--columns", "input_size,output_size,num_params,mult_adds",
                 "--row-settings", "depth,var_names"]),
    ("draw", ["--depth", "1"]),
    ("draw", ["--depth", "3"]),
    ("draw", ["--depth", "inf"]),
]


def peers(args):
    import peers as live  # cli/tests/peers.py

    os.makedirs(args.cache, exist_ok=True)
    answers = os.path.join(args.leg, "answers")
    os.makedirs(answers, exist_ok=True)
    code = file_hash(__file__, live.__file__)
    for line in open(os.path.join(args.leg, "zoo.tsv")):
        name, file, saved_by, *inputs = line.rstrip("\n").split("\t")
        if saved_by != torch_version():
            continue
        key = hashlib.sha256((file_hash(file) + code + torch.__version__).encode()).hexdigest()
        cached = os.path.join(args.cache, f"{name}-{key[:20]}.txt")
        if not os.path.exists(cached):
            text = ""
            for i, (what, more) in enumerate(REQUESTS):
                text += f"=== request {i}\n" + live.run([what, name] + inputs + more)
            with open(cached + ".part", "w") as f:
                f.write(text)
            os.replace(cached + ".part", cached)
        shutil.copyfile(cached, os.path.join(answers, name + ".txt"))


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="command", required=True)
p = sub.add_parser("make")
p.add_argument("models")
p.add_argument("leg")
p.add_argument("--vision-from")
p = sub.add_parser("peers")
p.add_argument("leg")
p.add_argument("cache")

if __name__ == "__main__":
    args = parser.parse_args()
    make(args) if args.command == "make" else peers(args)
