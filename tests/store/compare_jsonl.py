#!/usr/bin/python3
"""compare_jsonl.py IN OUT [RUN_ID...]: the runs in OUT (a `store export`) hold
exactly the samples of the same runs in IN (the JSONL that was ingested), in
the same order, and every context field IN gives is the same in OUT. With run
ids, OUT must hold exactly those runs. Exit 0 when equal; prints what differs."""
import json
import math
import sys


FIELDS = ("suite", "test", "metric", "unit", "better", "entity", "size", "iter", "value", "t")


def load(path):
    runs, ctx = {}, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            o = json.loads(line)
            kind = o.get("kind", "sample")
            if kind == "run":
                ctx[o["run"]["id"]] = o["run"]
                runs.setdefault(o["run"]["id"], [])
            elif kind == "sample":
                s = {k: v for k, v in o.items() if k in FIELDS}
                s.setdefault("size", 0)
                s.setdefault("iter", 0)
                s.setdefault("t", 0.0)
                runs.setdefault(o["run"], []).append(s)
    return runs, ctx


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def main():
    src, src_ctx = load(sys.argv[1])
    out, out_ctx = load(sys.argv[2])
    want = sys.argv[3:]
    bad = 0
    if want and sorted(want) != sorted(out):
        print(f"runs in export {sorted(out)} != expected {sorted(want)}")
        bad += 1
    for rid, samples in out.items():
        if rid not in src:
            print(f"run {rid} is not in the input")
            bad += 1
            continue
        if len(samples) != len(src[rid]):
            print(f"run {rid}: {len(samples)} samples exported, {len(src[rid])} ingested")
            bad += 1
            continue
        for i, (a, b) in enumerate(zip(src[rid], samples)):
            for k in a:
                if not same(a[k], b.get(k)):
                    print(f"run {rid} sample {i}: {k} ingested {a[k]!r} exported {b.get(k)!r}")
                    bad += 1
                    break
        for k, v in src_ctx.get(rid, {}).items():
            got = out_ctx.get(rid, {}).get(k)
            if k == "ranks":
                v = [{kk: vv for kk, vv in r.items()} for r in v]
                got = [{kk: r.get(kk) for kk in v[j]} for j, r in enumerate(got or [])]
            if not same(v, got):
                print(f"run {rid}: context {k} ingested {v!r} exported {got!r}")
                bad += 1
    total = sum(len(s) for s in out.values())
    print(f"compared {len(out)} runs, {total} samples: {'equal' if not bad else f'{bad} differences'}")
    return 1 if bad else 0


sys.exit(main())
