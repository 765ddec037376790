#!/usr/bin/env python3
"""Write a random layered DAG in networkx node-link JSON (the Moccasin schema of
../shared/graphs/random_layered_n*.json: nodes[] with name, out_cost (bytes), param_cost
0, duration; links[] with keys "0" (source) and "1" (target); graph.order a topological
order), for test fixtures the shared graphs do not cover.

    python3 tools/layered_dag.py N [--width-mode narrow|wide] [--skip K] [--seed S] [-o FILE]  (default: stdout)

Node 0 is a source and node 1 a sink (duration 0); the other N - 2 nodes form layers
(narrow: 1-3 nodes each; wide: about U(w/2, 3w/2), w = max(4, 1.5 sqrt(N))). Each node
reads 1-3 nodes of the layer before and, with probability 0.3 each, up to 2 more of the
K - 1 layers before that; every node of a layer has a reader in the next one, and nodes
without one feed the sink. Sizes are multiples of 10 bytes in [10, 8000], durations
integers in [1, 1000], drawn by Python's random.Random(S): the same arguments give the
same file. tests/data/layered_n120.json: `python3 tools/layered_dag.py 120 --width-mode
wide --skip 4 --seed 3 -o tests/data/layered_n120.json`. Only a fixture maker: the
planner's path from input to schedule is C.
"""
import argparse, json, math, random, sys

def emit(nodes, links, order, name, path):
    g = {"directed": True, "multigraph": False,
         "graph": {"name": name, "order": order},
         "nodes": nodes, "links": [{"0": u, "1": v} for u, v in links]}
    if path == "-":
        json.dump(g, sys.stdout)
        return
    with open(path, "w") as f:
        json.dump(g, f)

def node(name, rng, dur=None):
    return {"out_cost": rng.randint(1, 800) * 10, "param_cost": 0,
            "duration": rng.randint(1, 1000) if dur is None else dur, "name": name}

def layered(a, rng):
    n = a.n
    inner = n - 2
    w = max(4, int(math.sqrt(n) * 1.5))
    layers, cnt = [], 0
    while cnt < inner:
        if a.width_mode == "narrow":
            k = rng.randint(1, 3)
        else:
            k = rng.randint(max(1, w // 2), w + w // 2)
        if inner - cnt <= 3:
            k = inner - cnt          # small last layer (sink reads it)
        elif k > inner - cnt - 1:
            k = inner - cnt - rng.randint(1, 3)
        k = min(k, inner - cnt)
        layers.append(list(range(2 + cnt, 2 + cnt + k)))
        cnt += k
    nodes = [node(0, rng, 0), node(1, rng, 0)] + [node(i, rng) for i in range(2, n)]
    links = set()
    for li, L in enumerate(layers):
        for v in L:
            if li == 0:
                links.add((0, v)); continue
            prev = layers[li - 1]
            for u in rng.sample(prev, min(len(prev), rng.randint(1, 3))):
                links.add((u, v))
            for _ in range(2):
                if a.skip > 1 and li >= 2 and rng.random() < 0.3:
                    lj = li - rng.randint(2, min(a.skip, li))
                    links.add((rng.choice(layers[lj]), v))
        if li > 0:
            # every node of the previous layer gets a user in this layer
            in_layer = set(L)
            used = {u for u, x in links if x in in_layer}
            for u in layers[li - 1]:
                if u not in used:
                    links.add((u, rng.choice(L)))
    has_user = {u for u, _ in links}
    for L in layers:
        for v in L:
            if v not in has_user:
                links.add((v, 1))
    order = [0] + [v for L in layers for v in L] + [1]
    name = f"layered_n{n}_{a.width_mode}_skip{a.skip}_s{a.seed}"
    return nodes, sorted(links), order, name

p = argparse.ArgumentParser(description="Write a random layered DAG (networkx node-link JSON, the schema of "
                            "../shared/graphs/random_layered_n*.json) for test fixtures; the same arguments "
                            "give the same file.")
p.add_argument("n", type=int, help="number of nodes (node 0 a source, node 1 a sink, the rest in layers)")
p.add_argument("--width-mode", default="wide", choices=["narrow", "wide"],
               help="layer widths: narrow 1-3 nodes, wide about U(w/2, 3w/2) with w = max(4, 1.5 sqrt(n)) "
                    "(default: wide)")
p.add_argument("--skip", type=int, default=1,
               help="K: a node may also read up to 2 nodes of the K - 1 layers before the previous one "
                    "(default: 1, none)")
p.add_argument("--seed", type=int, default=1, help="random.Random seed (default: 1)")
p.add_argument("-o", default="-", help="output file (default: standard output)")
a = p.parse_args()
rng = random.Random(a.seed)
nodes, links, order, name = layered(a, rng)
emit(nodes, links, order, name, a.o)
