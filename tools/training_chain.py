#!/usr/bin/env python3
"""Write a Checkmate-style linear training graph (networkx node-link JSON) for
benchmarks of the chain DP in the planner (docs/chain-dp.md, "In the planner").

    python3 tools/training_chain.py N SEED > chainN.json

N nodes (even): forward x_0..x_{N/2-1}, each reading the one before; backward node
N/2 + j reads backward node N/2 + j - 1 and forward node N/2 - 2 - j (the forward node
N/2 - 1 - j the gradient belongs to, read through its input). Costs are integers in
[1, 10] ("cost_cpu", read as milliseconds), sizes in [100, 1000] bytes ("cost_ram"),
drawn by Python's random.Random(SEED): the same arguments give the same file. Only a
fixture maker: the planner's path from input to schedule is C.
"""
import json
import random
import sys


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 2 or int(sys.argv[1]) % 2:
        sys.exit("usage: training_chain.py N SEED  (N even, >= 2; --help for more)")
    n, rng = int(sys.argv[1]), random.Random(int(sys.argv[2]))
    f = n // 2
    nodes, links = [], []
    for i in range(f):
        nodes.append({"name": f"f{i}", "backward": False, "cost_cpu": rng.randint(1, 10),
                      "cost_ram": rng.randint(100, 1000), "id": i})
        if i:
            links.append({"source": i - 1, "target": i})
    for j in range(f):
        k, fi = f + j, f - 1 - j
        nodes.append({"name": f"g{fi}", "backward": True, "cost_cpu": rng.randint(1, 10),
                      "cost_ram": rng.randint(100, 1000), "id": k})
        links.append({"source": k - 1, "target": k})
        if fi > 0:
            links.append({"source": fi - 1, "target": k})
    json.dump({"directed": True, "multigraph": False, "graph": {"name": f"training_chain_{n}_{sys.argv[2]}"},
               "nodes": nodes, "links": links}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
