#!/usr/bin/env bash
# preflight --prometheus-local DIR on 4 emulated nodes of 2 ranks each: every
# node's first rank writes its own node's textfile, and rank 0 the run file,
# into DIR with %n as the node's name (one folder per node here, as each host
# would have its own):
#   - local/nK/ holds fleetprint-nK.prom and nothing else (n0's also the run
#     file), byte for byte the file --prometheus DIR/ writes on rank 0;
#   - promtool check metrics is clean on each; node_exporter's gather check
#     over all of them together (no series twice, one help text per family);
#   - the collective's per-rank series are summarised per node, or kept for a
#     rank that does not pass;
#   - a pattern with another % sequence is refused before any test runs.
. "$FP_TESTS/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: no promtool (Debian package prometheus; ci/deps.sh installs it)"; exit 77; }
cd "$WORK"
F=$FLEETPRINT
export FP_RANKS_PER_NODE=2

# the verdict is not the point here (a loaded machine may warn or fail a node)
rc=0
mpi 8 "$F" preflight --test membw --test allreduce --test links --array-size 2M --threads 1 \
  --min-bytes 64K --max-bytes 256K --prometheus-local "$WORK/local/%n/" --prometheus "$WORK/shared/" \
  >pf.log 2>&1 || rc=$?
[ "$rc" -le 1 ] || { cat pf.log; fail "preflight exited $rc"; }
for k in 0 1 2 3; do
  want="fleetprint-n$k.prom"
  [ "$k" = 0 ] && want="fleetprint-n0.prom fleetprint-run.prom"
  got=$(cd "local/n$k" && ls | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$want" ] || fail "local/n$k holds '$got', expected '$want'"
  cmp "local/n$k/fleetprint-n$k.prom" "shared/fleetprint-n$k.prom" || fail "n$k's local file differs from rank 0's"
done
cmp local/n0/fleetprint-run.prom shared/fleetprint-run.prom || fail "the local run file differs from rank 0's"
[ "$(ls shared | wc -l)" = 5 ] || { ls shared; fail "shared/: expected 4 node files and the run file"; }
for f in local/*/*.prom; do
  promtool check metrics <"$f" >lint.txt 2>&1 || { cat lint.txt; fail "promtool check metrics $f"; }
done
py - "$FP_TESTS" <<'PY'
import glob, sys
sys.path.insert(0, sys.argv[1])
from prom_gather import gather
paths = sorted(glob.glob("local/*/*.prom"))
series = gather(paths)  # no series twice, one help text per family
ranks = {}
for path, name, labels, value in series:
    node = path.split("/")[1]
    if "run" not in path:
        assert labels.get("Hostname") == node, f"{path}: {name}{labels} is not {node}'s"
    if name.startswith("fleetprint_node_collective_") or (
            name.startswith("fleetprint_collective_") and "gpu" in labels):
        ranks[node] = ranks.get(node, 0) + 1
assert sorted(ranks) == ["n0", "n1", "n2", "n3"], f"per-rank collective series only in {sorted(ranks)}"
print(f"ok: {len(series)} series in {len(paths)} local files, none collected twice")
PY
[ $? = 0 ] || fail "the local files collide or lack their node's series"

expect_rc 2 mpi 2 "$F" preflight --test membw --prometheus-local "$WORK/bad/%q/"
expect_out "prometheus-local '.*%q/': expected a folder"
[ ! -e bad ] || fail "a refused pattern made a folder"
echo "ok: 4 nodes wrote their own files; identical to rank 0's folder; promtool clean; no duplicates"
