#!/usr/bin/env python3
"""Merge a re-run into the benchmark CSV: every (graph, preset, budget, method) row of
NEW replaces the same row of BASE (rows NEW does not have stay), in BASE's order, NEW's
other rows appended. Writes BASE in place through a temporary file.

usage: python3 bench/merge.py BASE.csv NEW.csv

It only moves rows xe_bench wrote; bench/table.py then prints the tables from BASE."""
import csv
import os
import sys


def key(r):
    return (r["graph"], r["preset"], r["budget_pct"], r["method"])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-3])
    base, new = sys.argv[1], sys.argv[2]
    with open(base, newline="") as f:
        rd = csv.DictReader(f)
        fields, rows = rd.fieldnames, list(rd)
    with open(new, newline="") as f:
        rd = csv.DictReader(f)
        if rd.fieldnames != fields:
            sys.exit("merge: %s has other columns than %s" % (new, base))
        fresh = list(rd)
    by_key = {key(r): r for r in fresh}
    used = set()
    out = []
    for r in rows:
        k = key(r)
        if k in by_key:
            if k not in used:
                out.append(by_key[k])
                used.add(k)
        else:
            out.append(r)
    out += [r for r in fresh if key(r) not in used]
    with open(base, "rb") as f:  # keep BASE's line ends
        eol = "\r\n" if f.readline().endswith(b"\r\n") else "\n"
    tmp = base + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator=eol)
        w.writeheader()
        w.writerows(out)
    os.replace(tmp, base)
    print("merge: %d rows of %s, %d replaced, %d added" % (len(out), base, len(used),
                                                          len(fresh) - len(used)))


if __name__ == "__main__":
    main()
