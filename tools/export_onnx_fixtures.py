#!/usr/bin/python3
"""Export the ONNX fixtures of tests/data/onnx/ (graph only) and ONNX's inferred shapes.

Run with Debian's interpreter, which sees python3-torch, python3-torchvision and
python3-onnx (torch 1.13, torchvision 0.14, onnx 1.12):

    /usr/bin/python3 tools/export_onnx_fixtures.py [OUTDIR]

For each of resnet18, resnet50, vgg16, mobilenet_v2 and googlenet it writes
OUTDIR/NAME.onnx, exported with export_params=False (parameters become graph inputs
without data, so the files stay small), training=TrainingMode.TRAINING,
do_constant_folding=False, opset 13, static shapes (no dynamic axes), input
"input" [batch, 3, 224, 224], output "output"; and OUTDIR/NAME.shapes.json:
{"model": NAME, "batch": N, "shapes": {tensor name: [dims...]}} with the shape ONNX's
own onnx.shape_inference.infer_shapes gives every graph input, value_info entry and
graph output (tensors whose inferred shape is not fully static are left out).

It also writes bad_unsupported.onnx: input [1, 4] -> Relu -> Cos -> output, for the
reader's unsupported-operator error. The tests (tests/test_onnx.c) never need torch.
"""
import json
import os
import sys

import onnx
import onnx.helper as oh
import torch
import torchvision

MODELS = [
    # name, constructor, batch
    ("resnet18", lambda: torchvision.models.resnet18(weights=None), 1),
    ("resnet50", lambda: torchvision.models.resnet50(weights=None), 2),
    ("vgg16", lambda: torchvision.models.vgg16(weights=None), 1),
    ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(weights=None), 2),
    ("googlenet", lambda: torchvision.models.googlenet(
        weights=None, aux_logits=False, init_weights=False, transform_input=False), 1),
]


def static_shape(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    dims = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(d.dim_value)
    return dims


def export(name, ctor, batch, outdir):
    torch.manual_seed(0)
    model = ctor()
    model.train()
    x = torch.zeros(batch, 3, 224, 224)
    path = os.path.join(outdir, name + ".onnx")
    torch.onnx.export(model, x, path, export_params=False,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=13,
                      input_names=["input"], output_names=["output"])
    m = onnx.load(path)
    n = write_shapes(m, outdir, name, batch)
    ops = {}
    for nd in m.graph.node:
        ops[nd.op_type] = ops.get(nd.op_type, 0) + 1
    print("%s: %d nodes %s, %d inputs, %d shapes, %d bytes" % (
        name, len(m.graph.node), json.dumps(ops, sort_keys=True), len(m.graph.input), n,
        os.path.getsize(path)))


def write_shapes(m, outdir, name, batch):
    """NAME.shapes.json with ONNX's inferred static shapes; returns their count."""
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    g = inferred.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        s = static_shape(vi)
        if s is not None:
            shapes[vi.name] = s
    with open(os.path.join(outdir, name + ".shapes.json"), "w") as f:  # one tensor a line
        f.write('{"model": %s, "batch": %d, "shapes": {\n' % (json.dumps(name), batch))
        f.write(",\n".join("%s: %s" % (json.dumps(k), json.dumps(shapes[k])) for k in sorted(shapes)))
        f.write("\n}}\n")
    return len(shapes)


def bad_unsupported(outdir):
    x = oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 4])
    y = oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 4])
    nodes = [oh.make_node("Relu", ["x"], ["r"], name="relu0"),
             oh.make_node("Cos", ["r"], ["y"], name="cos0")]
    g = oh.make_graph(nodes, "bad_unsupported", [x], [y])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="xengine")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(outdir, "bad_unsupported.onnx"))


def save_with_shapes(m, outdir, name, batch):
    """Checks m, saves NAME.onnx and NAME.shapes.json (ONNX's inferred shapes)."""
    onnx.checker.check_model(m)
    path = os.path.join(outdir, name + ".onnx")
    onnx.save(m, path)
    write_shapes(onnx.load(path), outdir, name, batch)


def tiny_models(outdir):
    """Hand-built graphs for the operators and reader paths the torchvision models miss."""
    F, I64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
    vi = oh.make_tensor_value_info
    # tiny_ops: Conv, Reshape by a Constant shape, Clip by an initializer min and a
    # Constant max, Dropout with constant ratio / training_mode, the loss with labels.
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], name="conv0", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        oh.make_node("Constant", [], ["shape"], name="shape0",
                     value=oh.make_tensor("shape_v", I64, [2], [0, -1])),
        oh.make_node("Reshape", ["c", "shape"], ["r"], name="reshape0"),
        oh.make_node("Constant", [], ["six"], name="six0", value=oh.make_tensor("six_v", F, [], [6.0])),
        oh.make_node("Clip", ["r", "zero", "six"], ["cl"], name="clip0"),
        oh.make_node("Constant", [], ["ratio"], name="ratio0", value_float=0.25),
        oh.make_node("Constant", [], ["train"], name="train0",
                     value=oh.make_tensor("train_v", onnx.TensorProto.BOOL, [], [True])),
        oh.make_node("Dropout", ["cl", "ratio", "train"], ["d", "mask"], name="drop0"),
        oh.make_node("SoftmaxCrossEntropyLoss", ["d", "labels"], ["loss"], name="loss0"),
    ]
    g = oh.make_graph(nodes, "tiny_ops",
                      [vi("x", F, [2, 3, 8, 8]), vi("w", F, [4, 3, 3, 3]), vi("labels", I64, [2])],
                      [vi("loss", F, [])],
                      initializer=[oh.make_tensor("zero", F, [], [0.0])])
    save_with_shapes(oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="xengine"),
                     outdir, "tiny_ops", 2)
    # tiny_misc: ConvTranspose, InstanceNormalization, LRN, LeakyRelu, AveragePool,
    # Flatten, MatMul, Add with broadcast, Softmax; float initializers with data.
    nodes = [
        oh.make_node("ConvTranspose", ["x", "wt"], ["u"], name="up0", strides=[2, 2], kernel_shape=[2, 2]),
        oh.make_node("InstanceNormalization", ["u", "s", "b"], ["n"], name="in0", epsilon=1e-3),
        oh.make_node("LRN", ["n"], ["l"], name="lrn0", size=3),
        oh.make_node("LeakyRelu", ["l"], ["lr"], name="lrelu0", alpha=0.2),
        oh.make_node("AveragePool", ["lr"], ["p"], name="pool0", kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1),
        oh.make_node("Flatten", ["p"], ["f"], name="flat0"),
        oh.make_node("MatMul", ["f", "wm"], ["mm"], name="mm0"),
        oh.make_node("Add", ["mm", "bias"], ["a"], name="add0"),
        oh.make_node("Softmax", ["a"], ["y"], name="softmax0"),
    ]
    g = oh.make_graph(nodes, "tiny_misc",
                      [vi("x", F, [1, 4, 8, 8]), vi("wt", F, [4, 2, 2, 2]), vi("wm", F, [162, 10])],
                      [vi("y", F, [1, 10])],
                      initializer=[oh.make_tensor("s", F, [2], [1.0, 2.0]),
                                   oh.make_tensor("b", F, [2], [0.5, -0.5]),
                                   oh.make_tensor("bias", F, [10], [float(i) for i in range(10)])])
    save_with_shapes(oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="xengine"),
                     outdir, "tiny_misc", 1)
    # symbolic batch: readable only with a batch size
    g = oh.make_graph([oh.make_node("Relu", ["x"], ["y"], name="relu0")], "symbolic",
                      [vi("x", F, ["N", 4])], [vi("y", F, ["N", 4])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="xengine")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(outdir, "symbolic_batch.onnx"))
    # dangling: a node reads a tensor nothing defines (not a valid model: no checker)
    g = oh.make_graph([oh.make_node("Add", ["x", "nowhere"], ["y"], name="add0")], "dangling",
                      [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], producer_name="xengine")
    onnx.save(m, os.path.join(outdir, "bad_dangling.onnx"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "data", "onnx")
    os.makedirs(outdir, exist_ok=True)
    for name, ctor, batch in MODELS:
        export(name, ctor, batch, outdir)
    bad_unsupported(outdir)
    tiny_models(outdir)


if __name__ == "__main__":
    main()
