#!/usr/bin/python3
"""h5py_check.py STORE EXPORT [HISTORY ENTITY]: read a fleetprint store with
h5py by the names docs/store.md documents, and check that
  - every run's samples (rebuilt from /runs/<id>/samples + entities + metrics)
    equal the `store export` JSONL, sample by sample;
  - every run's verdicts (/runs/<id>/verdicts, where it has them) list each
    of its nodes with a verdict 0..3, and agree with HISTORY, the output of
    `store history ENTITY` (at least one run has them when it is given);
  - every baseline row (/baselines/entity, /baselines/sku) equals the exported
    baseline lines, runs included;
  - each per-entity baseline (built with --reject 0) matches numpy's median,
    MAD, percentiles, min and max of that entity's exported samples."""
import json
import math
import sys
from collections import defaultdict

import h5py
import numpy as np


def s(b):
    return b.decode() if isinstance(b, bytes) else str(b)


def key_of(m):
    k = f"{s(m['suite'])}.{s(m['test'])}.{s(m['metric'])}"
    return f"{k}@{int(m['size'])}" if int(m["size"]) else k


def main():
    store, export = sys.argv[1], sys.argv[2]
    samples, base = defaultdict(list), {}
    with open(export) as f:
        for line in f:
            o = json.loads(line)
            if o["kind"] == "sample":
                samples[o["run"]].append(o)
            elif o["kind"] == "baseline":
                base[(o["scope"], o["key"], o[o["scope"]])] = o
    bad = 0
    f = h5py.File(store, "r")
    assert int(f.attrs["fleetprint_schema"]) == 2, "schema attribute"
    # the manifest's catalog lists the same runs as /runs (external links)
    assert sorted(s(r) for r in f["catalog"]["id"]) == sorted(f["runs"].keys()), "catalog"
    nsamples = 0
    for rid, g in f["runs"].items():
        ents = [s(e) for e in g["entities"][:]]
        mets = g["metrics"][:]
        rows = g["samples"][:]
        assert int(g.attrs["nsamples"]) == len(rows)
        want = samples[rid]
        if len(want) != len(rows):
            print(f"run {rid}: h5py reads {len(rows)} samples, export has {len(want)}")
            bad += 1
            continue
        for i, (r, w) in enumerate(zip(rows, want)):
            m = mets[r["metric"]]
            got = {"suite": s(m["suite"]), "test": s(m["test"]), "metric": s(m["metric"]),
                   "unit": s(m["unit"]), "better": "lower" if m["better"] else "higher",
                   "entity": ents[r["entity"]], "size": int(m["size"]), "iter": int(r["iter"]),
                   "value": float(r["value"]), "t": float(r["t"])}
            for k, v in got.items():
                wv = w[k]
                if k == "value" and wv is None:
                    ok = math.isnan(v)
                else:
                    ok = v == wv
                if not ok:
                    print(f"run {rid} sample {i}: {k} h5py {v!r} export {wv!r}")
                    bad += 1
                    break
        nsamples += len(rows)
    print(f"h5py read {len(f['runs'])} runs, {nsamples} samples: same as the export")

    # verdicts kept with a run: every node listed; the same as store history
    listing, entity = {}, None
    if len(sys.argv) > 4:
        entity = sys.argv[4]
        for line in open(sys.argv[3]):
            w = line.split()
            if len(w) >= 5 and w[2] in f["runs"]:
                listing[w[2]] = w[4]
    names = ["pass", "warn", "fail", "unknown"]
    judged = 0
    for rid, g in f["runs"].items():
        if "verdicts" not in g:
            continue
        v = g["verdicts"][:]
        assert set(v.dtype.names) == {"entity", "verdict", "offender", "reason"}, v.dtype
        rows = {s(r["entity"]): r for r in v}
        for n in g["nodes"][:]:
            if f"node:{s(n)}" not in rows:
                print(f"run {rid}: node {s(n)} has no verdict")
                bad += 1
        for r in v:
            if not (0 <= int(r["verdict"]) <= 3 and int(r["offender"]) in (0, 1)):
                print(f"run {rid}: verdict row {s(r['entity'])} is malformed")
                bad += 1
        if entity and entity in rows and listing.get(rid) != names[int(rows[entity]["verdict"])]:
            print(f"run {rid}: {entity} h5py {names[int(rows[entity]['verdict'])]} "
                  f"store history {listing.get(rid)}")
            bad += 1
        judged += 1
    if entity and not judged:
        print("no run has verdicts")
        bad += 1
    print(f"h5py read the verdicts of {judged} runs: every node listed, as store history says")

    b = f["baselines"]
    keys = [s(k) for k in b["keys"]["key"]]
    runs = [s(r) for r in b["runs"][:]]
    off, mem = b["runset_offsets"][:], b["runset_members"][:]
    names = {"entity": [s(e) for e in b["entities"][:]], "sku": [s(e) for e in b["skus"][:]]}
    nrows = 0
    for scope in ("entity", "sku"):
        for row in b[scope][:]:
            key, who = keys[row["key"]], names[scope][row[scope]]
            e = base.get((scope, key, who))
            if e is None:
                print(f"baseline {scope} {key} {who} is not exported")
                bad += 1
                continue
            rs = [runs[i] for i in mem[off[row["runset"]]:off[row["runset"] + 1]]]
            for k in ("count", "rejected", "median", "mad", "p05", "p95", "min", "max"):
                if e[k] != row[k].item():
                    print(f"baseline {scope} {key} {who}: {k} h5py {row[k]} export {e[k]}")
                    bad += 1
            if rs != e["runs"] or int(row["nruns"]) != len(rs):
                print(f"baseline {scope} {key} {who}: runs {rs} export {e['runs']}")
                bad += 1
            nrows += 1
    if nrows != len(base):
        print(f"h5py found {nrows} baseline rows, export has {len(base)}")
        bad += 1
    print(f"h5py read {nrows} baseline rows: same as the export")

    # independent statistics from the exported samples (baselines built with --reject 0)
    vals = defaultdict(list)
    for rid in runs:
        for o in samples[rid]:
            if o["value"] is not None:
                k = f"{o['suite']}.{o['test']}.{o['metric']}"
                k = f"{k}@{o['size']}" if o["size"] else k
                vals[(k, o["entity"])].append(o["value"])
    checked = 0
    for (k, ent), v in vals.items():
        e = base[("entity", k, ent)]
        a = np.array(v)
        med = np.median(a)
        ref = {"count": len(a), "median": med, "mad": np.median(np.abs(a - med)),
               "p05": np.percentile(a, 5), "p95": np.percentile(a, 95),
               "min": a.min(), "max": a.max()}
        for name, r in ref.items():
            if not math.isclose(e[name], r, rel_tol=1e-12, abs_tol=1e-12):
                print(f"baseline {k} {ent}: {name} stored {e[name]} numpy {r}")
                bad += 1
        checked += 1
    print(f"numpy agrees with {checked} per-entity baselines")
    return 1 if bad else 0


sys.exit(main())
