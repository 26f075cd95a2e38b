# Must show 4: h5py (Debian's python3-h5py) reads a run's samples, its
# verdicts and the baselines by their documented names, and they match the
# JSONL export and store history.
source "$(dirname "$0")/lib.sh"
"$PY" -c "import h5py" 2> /dev/null || { echo "python3-h5py is not installed"; exit 77; }
"$GEN" --runs 3 --nodes 8 --gpus 2 --metrics 6 --iters 4 --sku2-nodes 3 --prefix h > in.jsonl
echo '{"run":"h-0","suite":"kernels","test":"t0","metric":"m1","unit":"GB/s","better":"higher","entity":"node:n0000","value":null}' >> in.jsonl
"$F" store ingest in.jsonl --store s.h5 2> /dev/null
"$F" baseline build --store s.h5 --reject 0 2> /dev/null
# the verdicts of one run kept with it (detect exits 1 when something fails)
rc=0
"$F" detect --store s.h5 --run h-2 --record -q 2> /dev/null || rc=$?
[ "$rc" -le 1 ] || fail "detect --record exited $rc"
"$F" store history n0000 --store s.h5 > history.txt
"$F" store export --store s.h5 --baselines -o out.jsonl
"$PY" "$HERE/h5py_check.py" s.h5 out.jsonl history.txt node:n0000
echo "store h5py: all checks passed"
