#!/usr/bin/python3
"""Write the small graph-only ONNX fixtures of tests/data/onnx/ for reader cases a new
user's trial found (2026-12-05): built with onnx.helper, except those whose point is what
PyTorch's exporter writes (made with torch.onnx.export).

Run with Debian's interpreter (python3-onnx 1.12, python3-torch 1.13):

    /usr/bin/python3 tools/craft_onnx_cases.py [OUTDIR]

The files are byte-for-byte reproducible. tests/test_onnx.c reads them; it never needs
python. What each one is for is said where it is made.
"""
import os
import struct
import sys

import onnx
import onnx.helper as oh

F, I64, F16 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64, onnx.TensorProto.FLOAT16
vi = oh.make_tensor_value_info


def model(nodes, name, inputs, outputs, inits=(), opset=13):
    g = oh.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)], producer_name="xengine")


def save(m, outdir, name, check=True):
    if check:
        onnx.checker.check_model(m)
    with open(os.path.join(outdir, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def external(name, dtype, dims, raw, location, offset):
    """A TensorProto whose data lies in `location` at `offset` (data_location EXTERNAL)."""
    t = onnx.TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.data_location = onnx.TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(raw)))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def ext_mlp(outdir):
    """ext_mlp.onnx + ext_mlp.data: x [2, 4] -> Gemm(w [3, 4], b [3], transB) -> Reshape
    by shape [0, -1]; w, b and the int64 shape stored as external data (w[i] = 0.5 i at
    offset 0, b = -1, 0, 1 at offset 64 after 16 bytes of padding, shape at offset 80)."""
    w = struct.pack("<12f", *[0.5 * i for i in range(12)])
    b = struct.pack("<3f", -1.0, 0.0, 1.0)
    shape = struct.pack("<2q", 0, -1)
    data = w + b"\xee" * 16 + b + b"\xee" * 4 + shape
    with open(os.path.join(outdir, "ext_mlp.data"), "wb") as f:
        f.write(data)
    inits = [external("w", F, [3, 4], w, "ext_mlp.data", 0),
             external("b", F, [3], b, "ext_mlp.data", 64),
             external("shape", I64, [2], shape, "ext_mlp.data", 80)]
    nodes = [oh.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc0", transB=1),
             oh.make_node("Reshape", ["y", "shape"], ["z"], name="reshape0")]
    save(model(nodes, "ext_mlp", [vi("x", F, [2, 4])], [vi("z", F, [2, 3])], inits), outdir, "ext_mlp",
         check=False)  # the checker would look for the data file relative to the cwd


def torch_ce(outdir):
    """torch_ce.onnx: PyTorch's export of Linear(8, 5) + F.cross_entropy with a labels
    input (batch 4, graph only, opset 13, training mode): a SoftmaxCrossEntropyLoss with
    ignore_index = -100, which PyTorch always writes."""
    import torch
    import torch.nn.functional as tf

    class WithLoss(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.f = torch.nn.Linear(8, 5)

        def forward(self, x, y):
            return tf.cross_entropy(self.f(x), y)

    torch.manual_seed(0)
    torch.onnx.export(WithLoss(), (torch.zeros(4, 8), torch.zeros(4, dtype=torch.int64)),
                      os.path.join(outdir, "torch_ce.onnx"), export_params=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      opset_version=13, input_names=["input", "labels"], output_names=["loss"])


def param_first_add(outdir):
    """param_first_add.onnx: what PyTorch writes for fc(self.b + x) with export_params=False:
    Add(b [8], x [4, 8]) -> Gemm(w [3, 8], transB); b, the parameter, is the Add's first
    input and x, the data, its second."""
    nodes = [oh.make_node("Add", ["b", "x"], ["h"], name="add0"),
             oh.make_node("Gemm", ["h", "w"], ["y"], name="fc0", transB=1)]
    save(model(nodes, "param_first_add", [vi("b", F, [8]), vi("x", F, [4, 8]), vi("w", F, [3, 8])],
               [vi("y", F, [4, 3])]), outdir, "param_first_add")


def unrunnable(outdir):
    """Models shape inference used to take although they can never run (each refused
    when read, since 2026-12-05):
    bad_avgpool_pads.onnx: AveragePool kernel 2 with pads 3 (a window of padding only);
    bad_convt_outpad.onnx: ConvTranspose stride 2 with output_padding 2 (ONNX requires
    output_padding < stride or dilation);
    bad_matmul1d.onnx: MatMul(x [8], w [8, 16]), a 1-D operand the executor lacks."""
    x4 = vi("x", F, [2, 3, 8, 8])
    save(model([oh.make_node("AveragePool", ["x"], ["y"], name="pool0", kernel_shape=[2, 2], pads=[3, 3, 3, 3])],
               "bad_avgpool_pads", [x4], [vi("y", F, [2, 3, 13, 13])]), outdir, "bad_avgpool_pads", check=False)
    save(model([oh.make_node("ConvTranspose", ["x", "w"], ["y"], name="up0", strides=[2, 2], output_padding=[2, 2])],
               "bad_convt_outpad", [x4, vi("w", F, [3, 4, 3, 3])], [vi("y", F, [2, 4, 19, 19])]),
         outdir, "bad_convt_outpad", check=False)
    save(model([oh.make_node("MatMul", ["x", "w"], ["y"], name="mm0")],
               "bad_matmul1d", [vi("x", F, [8]), vi("w", F, [8, 16])], [vi("y", F, [16])]), outdir, "bad_matmul1d")


def outputs(outdir):
    """bad_output_is_input.onnx: Gemm(x, w) whose graph output is x, a graph input (refused:
    a graph output must be written by a node).
    two_outputs.onnx: PyTorch's two-head shape, x [4, 8] -> f1 Gemm 16 -> Relu -> f2 Gemm 10
    (output "y2") and f3 Gemm 5 (output "y3", the last node): the loss goes on y3."""
    x, w = vi("x", F, [4, 8]), vi("w", F, [16, 8])
    save(model([oh.make_node("Gemm", ["x", "w"], ["y"], name="fc0", transB=1)], "bad_output_is_input", [x, w],
               [vi("x", F, [4, 8])]), outdir, "bad_output_is_input")
    nodes = [oh.make_node("Gemm", ["x", "w1"], ["h"], name="f1", transB=1),
             oh.make_node("Relu", ["h"], ["r"], name="relu"),
             oh.make_node("Gemm", ["r", "w2"], ["y2"], name="f2", transB=1),
             oh.make_node("Gemm", ["r", "w3"], ["y3"], name="f3", transB=1)]
    save(model(nodes, "two_outputs", [x, vi("w1", F, [16, 8]), vi("w2", F, [10, 16]), vi("w3", F, [5, 16])],
               [vi("y2", F, [4, 10]), vi("y3", F, [4, 5])]), outdir, "two_outputs")


def pads(outdir):
    """torch_avgpool.onnx: PyTorch's export of Conv2d(3, 4, 3) -> ReLU -> F.avg_pool2d(2) ->
    flatten -> Linear(36, 5) on [2, 3, 8, 8] (graph only, opset 13, training mode), which
    writes a Pad with all-zero pads before the AveragePool; bad_pad_nonzero.onnx: a Pad of
    1 on each side (opset 13 pads input), refused."""
    import torch
    import torch.nn.functional as tf

    class Avg(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv2d(3, 4, 3)
            self.fc = torch.nn.Linear(36, 5)

        def forward(self, x):
            return self.fc(torch.flatten(tf.avg_pool2d(tf.relu(self.c(x)), 2), 1))

    torch.manual_seed(0)
    torch.onnx.export(Avg(), torch.zeros(2, 3, 8, 8), os.path.join(outdir, "torch_avgpool.onnx"),
                      export_params=False, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=13, input_names=["input"],
                      output_names=["out"])
    nodes = [oh.make_node("Pad", ["x", "p"], ["y"], name="pad0")]
    save(model(nodes, "bad_pad_nonzero", [vi("x", F, [1, 2, 4, 4])], [vi("y", F, [1, 2, 6, 6])],
               [oh.make_tensor("p", I64, [8], [0, 0, 1, 1, 0, 0, 1, 1])]), outdir, "bad_pad_nonzero")


def batch_fixed(outdir):
    """batch_fixed.onnx: a model that builds at batch 2 only (what PyTorch writes for
    x.view(2, -1)): x [2, 4, 4] -> Reshape to [2, -1] -> Gemm(w [3, 16], transB). At batch 1
    the Reshape gives [2, 8] and the Gemm's inner dimensions differ: `sweep --max-batch`
    must say so before its table."""
    shape = oh.make_tensor("shape", I64, [2], [2, -1])
    nodes = [oh.make_node("Reshape", ["x", "shape"], ["h"], name="view0"),
             oh.make_node("Gemm", ["h", "w"], ["y"], name="fc0", transB=1)]
    save(model(nodes, "batch_fixed", [vi("x", F, [2, 4, 4]), vi("w", F, [3, 16])], [vi("y", F, [2, 3])], [shape]),
         outdir, "batch_fixed")


def shape_views(outdir):
    """PyTorch's x.view(x.size(0), -1) with a dynamic batch (2026-12-05). Exported with
    dynamic_axes on the batch, torch 1.13 writes the size as a shape computation,
    Shape -> Gather(indices constant 0) -> Unsqueeze -> Concat(with constant [-1]) ->
    Reshape (Unsqueeze's axes an attribute at opset 11, a Constant input at 13); without
    dynamic_axes it writes the traced batch as a constant instead (batch_fixed.onnx).

    torch_view13.onnx / torch_view11.onnx: Conv2d(3, 4, 3) -> ReLU -> Conv2d(4, 4, 3, pad 1)
    -> ReLU -> MaxPool2d(2) -> x.view(x.size(0), -1) -> Linear(36, 5) on [N, 3, 8, 8] (N
    symbolic), opsets 13 and 11.
    torch_sigmoid.onnx: x.view(x.size(0), x.size(1) * x.size(2)) (Shape, Gather, Mul) ->
    Linear(16, 32) -> nn.Sigmoid -> Linear(32, 32) -> torch.sigmoid -> Linear(32, 5) on
    [N, 4, 4], opset 13.
    bad_gather_data.onnx: Gather of a float input (an embedding lookup: data-dependent),
    refused; bad_shape_as_data.onnx: Add(x, Shape(x)) on an int64 x reads a shape value as
    data, refused."""
    import torch

    class View(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv2d(3, 4, 3)
            self.c2 = torch.nn.Conv2d(4, 4, 3, padding=1)
            self.pool = torch.nn.MaxPool2d(2)
            self.fc = torch.nn.Linear(36, 5)

        def forward(self, x):
            x = self.pool(torch.relu(self.c2(torch.relu(self.c(x)))))
            x = x.view(x.size(0), -1)
            return self.fc(x)

    class SigMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(16, 32)
            self.act = torch.nn.Sigmoid()
            self.fc2 = torch.nn.Linear(32, 32)
            self.fc3 = torch.nn.Linear(32, 5)

        def forward(self, x):
            x = x.view(x.size(0), x.size(1) * x.size(2))
            return self.fc3(torch.sigmoid(self.fc2(self.act(self.fc1(x)))))

    torch.manual_seed(0)
    for name, mod, x, opset in (("torch_view13", View(), torch.zeros(2, 3, 8, 8), 13),
                                ("torch_view11", View(), torch.zeros(2, 3, 8, 8), 11),
                                ("torch_sigmoid", SigMLP(), torch.zeros(2, 4, 4), 13)):
        torch.onnx.export(mod, x, os.path.join(outdir, name + ".onnx"),
                          export_params=False, training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, opset_version=opset, input_names=["input"],
                          output_names=["out"], dynamic_axes={"input": {0: "N"}, "out": {0: "N"}})
    nodes = [oh.make_node("Gather", ["x", "idx"], ["y"], name="embed0", axis=0)]
    save(model(nodes, "bad_gather_data", [vi("x", F, [10, 4])], [vi("y", F, [3, 4])],
               [oh.make_tensor("idx", I64, [3], [1, 2, 3])]), outdir, "bad_gather_data")
    nodes = [oh.make_node("Shape", ["x"], ["s"], name="shape0"),
             oh.make_node("Add", ["x", "s"], ["y"], name="add0")]
    save(model(nodes, "bad_shape_as_data", [vi("x", I64, [2, 2])], [vi("y", I64, [2, 2])]), outdir,
         "bad_shape_as_data")


def bad_losses(outdir):
    """Losses PyTorch writes that the executor does not compute (refused when read since
    2026-12-05; before, accepted and computed wrongly without a word):
    bad_loss_weights.onnx: Gemm -> SoftmaxCrossEntropyLoss(logits, y, weights) (what
    F.cross_entropy(..., weight=w) writes): the weights were ignored;
    bad_loss_4d.onnx: Conv -> SoftmaxCrossEntropyLoss(logits [2, 5, 8, 8], y [2, 8, 8]), a
    per-pixel loss: taken over 320 classes."""
    w = oh.make_tensor("cw", F, [5], [10.0, 0.01, 0.01, 0.01, 0.01])
    nodes = [oh.make_node("Gemm", ["x", "w"], ["z"], name="fc0", transB=1),
             oh.make_node("SoftmaxCrossEntropyLoss", ["z", "y", "cw"], ["loss"], name="loss0", reduction="mean")]
    save(model(nodes, "bad_loss_weights", [vi("x", F, [4, 8]), vi("w", F, [5, 8]), vi("y", I64, [4])],
               [vi("loss", F, [])], [w]), outdir, "bad_loss_weights")
    nodes = [oh.make_node("Conv", ["x", "k"], ["z"], name="conv0", pads=[1, 1, 1, 1]),
             oh.make_node("SoftmaxCrossEntropyLoss", ["z", "y"], ["loss"], name="loss0", reduction="mean")]
    save(model(nodes, "bad_loss_4d", [vi("x", F, [2, 3, 8, 8]), vi("k", F, [5, 3, 3, 3]), vi("y", I64, [2, 8, 8])],
               [vi("loss", F, [])]), outdir, "bad_loss_4d")


def identities(outdir):
    """identity_mlp.onnx: what PyTorch's EVAL exports with parameters write for merged
    initializers: Gemm(x, Identity(w)) -> Relu -> Identity -> Gemm(., w2); every Identity is
    dropped when read (since 2026-12-05), its output standing for its input."""
    w = oh.make_tensor("w", F, [6, 4], [0.1 * (i % 7) for i in range(24)])
    w2 = oh.make_tensor("w2", F, [3, 6], [0.05 * (i % 5) for i in range(18)])
    nodes = [oh.make_node("Identity", ["w"], ["w_alias"], name="id_w"),
             oh.make_node("Gemm", ["x", "w_alias"], ["h"], name="fc0", transB=1),
             oh.make_node("Relu", ["h"], ["a"], name="relu0"),
             oh.make_node("Identity", ["a"], ["a2"], name="id_a"),
             oh.make_node("Gemm", ["a2", "w2"], ["y"], name="fc1", transB=1)]
    save(model(nodes, "identity_mlp", [vi("x", F, [2, 4])], [vi("y", F, [2, 3])], [w, w2]), outdir, "identity_mlp")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "data", "onnx")
    os.makedirs(outdir, exist_ok=True)
    ext_mlp(outdir)
    torch_ce(outdir)
    param_first_add(outdir)
    unrunnable(outdir)
    outputs(outdir)
    pads(outdir)
    batch_fixed(outdir)
    bad_losses(outdir)
    identities(outdir)
    shape_views(outdir)


if __name__ == "__main__":
    main()
