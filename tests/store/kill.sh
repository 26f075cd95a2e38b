# Must show 2: kill -9 a writer at 20 random moments during appends; after
# each kill the store opens and holds exactly the runs committed before it
# (an ingest is one commit: both runs of its batch, or neither).
source "$(dirname "$0")/lib.sh"
KILLS=${1:-20}
seed=${FP_KILL_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$seed
echo "kill test: seed $seed (FP_KILL_SEED=$seed reproduces the moments)"

# batches of 2 runs x 6,000 samples: each ingest parses, copies, writes, commits
# (and g<i>: batches that are let finish after every 5th kill, so the store grows)
for i in $(seq 1 "$KILLS"); do
    "$GEN" --runs 2 --nodes 15 --gpus 4 --metrics 10 --iters 10 --prefix "k$i" --seed "$i" > "b$i.jsonl"
    [ $((i % 5)) != 0 ] || "$GEN" --runs 2 --nodes 15 --gpus 4 --metrics 10 --iters 10 --prefix "g$i" --seed "$((i + 1000))" > "g$i.jsonl"
done
cat b*.jsonl g*.jsonl > all.jsonl

# how long one uninterrupted ingest into a non-empty store takes here, to
# spread the kills over it: the shortest of 3 (load only adds time; a probe
# slowed by a burst would let most kills land after the writer finished)
"$F" store ingest g5.jsonl --store probe.h5 2> /dev/null
span_ms=
for p in 1 2 3; do
    cp probe.h5 probe$p.h5
    t0=$(date +%s%N)
    "$F" store ingest b1.jsonl --store probe$p.h5 2> /dev/null
    t=$(( ($(date +%s%N) - t0) / 1000000 + 10 ))
    [ -z "$span_ms" ] || [ "$t" -lt "$span_ms" ] && span_ms=$t
done
limit_ms=$((span_ms * 11 / 10))
echo "one ingest takes ~${span_ms} ms; kills land uniformly in [0, ${limit_ms}] ms"

expected=""   # runs known committed
killed=0 finished=0 landed=0
for i in $(seq 1 "$KILLS"); do
    "$F" store ingest "b$i.jsonl" --store s.h5 --lock-timeout 5 2> /dev/null &
    pid=$!
    delay_ms=$(( RANDOM % limit_ms ))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -9 "$pid" 2> /dev/null || true
    rc=0
    wait "$pid" 2> /dev/null || rc=$?
    batch="k$i-0 k$i-1 "
    if [ ! -e s.h5 ]; then
        # killed before the first commit ever landed: no store is a valid state
        [ -z "$expected" ] || fail "kill $i: the store vanished"
        got=""
    else
        got=$(run_ids s.h5) || fail "kill $i (at ${delay_ms} ms, rc $rc): the store does not open"
    fi
    with=$(echo "$expected $batch" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
    if [ "$got" = "$with" ]; then
        expected=$with
        landed=$((landed + 1))
    elif [ "$got" != "$expected" ]; then
        fail "kill $i at ${delay_ms} ms (rc $rc): store holds [$got], expected [$expected] or [$with]"
    elif [ "$rc" = 0 ]; then
        fail "kill $i: the ingest exited 0 but its runs are not in the store"
    fi
    if [ "$rc" = 137 ]; then killed=$((killed + 1)); else finished=$((finished + 1)); fi
    if [ -e s.h5 ]; then
        # every stored run is whole: export reads all of it (6,000 samples and
        # a run line per run); the samples themselves are compared at the end
        "$F" store export --store s.h5 -o out.jsonl 2> err.txt || { cat err.txt; fail "kill $i: export failed"; }
        nruns=$(echo $expected | wc -w)
        [ "$(wc -l < out.jsonl)" = $((nruns * 6001)) ] || fail "kill $i: export has $(wc -l < out.jsonl) lines"
    fi
    echo "kill $i at ${delay_ms} ms: rc $rc, store holds $(echo $got | wc -w) runs"
    if [ $((i % 5)) = 0 ]; then
        "$F" store ingest "g$i.jsonl" --store s.h5 2> /dev/null || fail "ingest g$i failed"
        expected=$(echo "$expected g$i-0 g$i-1" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
        [ "$(run_ids s.h5)" = "$expected" ] || fail "after g$i: store holds [$(run_ids s.h5)]"
    fi
done

# retention is one commit too: kill compact and rm at random moments; the
# store holds the runs from before the command or from after it, all whole
cp -r s.h5.d cprobe.h5.d && cp s.h5 cprobe.h5
t0=$(date +%s%N)
"$F" store compact --store cprobe.h5 --target-size 1G 2> /dev/null
span_ms=$(( ($(date +%s%N) - t0) / 1000000 + 10 ))
echo "one compact takes ~${span_ms} ms"
rkilled=0
for i in $(seq 1 6); do
    if [ $((i % 2)) = 1 ]; then
        cmd=(store compact --target-size 1G) after=$expected
    else
        set -- $expected
        cmd=(store rm "$1,$2") after=$(echo "$expected" | tr ' ' '\n' | sed "/^$1\$/d; /^$2\$/d; /^\$/d" | tr '\n' ' ')
    fi
    "$F" "${cmd[@]}" --store s.h5 --lock-timeout 5 2> /dev/null &
    pid=$!
    delay_ms=$(( RANDOM % (span_ms * 11 / 10) ))
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -9 "$pid" 2> /dev/null || true
    rc=0
    wait "$pid" 2> /dev/null || rc=$?
    [ "$rc" = 137 ] && rkilled=$((rkilled + 1))
    got=$(run_ids s.h5) || fail "${cmd[*]} killed at ${delay_ms} ms: the store does not open"
    if [ "$got" = "$after" ]; then
        expected=$after
    elif [ "$got" != "$expected" ]; then
        fail "${cmd[*]} killed at ${delay_ms} ms (rc $rc): store holds [$got]"
    fi
    "$F" store export --store s.h5 -o out.jsonl 2> err.txt || { cat err.txt; fail "export after ${cmd[*]} kill"; }
    [ "$(wc -l < out.jsonl)" = $(( $(echo $expected | wc -w) * 6001 )) ] || fail "export after ${cmd[*]}: $(wc -l < out.jsonl) lines"
    echo "${cmd[*]} killed at ${delay_ms} ms: rc $rc, store holds $(echo $got | wc -w) runs"
done
echo "6 retention commands: $rkilled interrupted"
"$F" store export --store s.h5 -o out.jsonl
$PY "$HERE/compare_jsonl.py" all.jsonl out.jsonl $expected || fail "stored runs differ from their input"
echo "$KILLS kills: $killed interrupted a writer, $finished came after it finished; $landed batches committed"
[ "$killed" -ge $((KILLS / 4)) ] || fail "too few kills interrupted a writer to prove anything"
# and the store still takes writes
"$F" store ingest b1.jsonl --store fresh.h5 2> /dev/null
"$GEN" --runs 1 --prefix after > after.jsonl
"$F" store ingest after.jsonl --store s.h5 2> /dev/null || fail "store refuses writes after the kills"
# no file is left that the manifest does not list, once a writer has run
# (a killed writer's partition is an orphan until the next writer removes it)
listed=$($PY -c "import h5py,sys; f=h5py.File('s.h5','r'); print(' '.join(sorted(set(x.decode() for x in f['catalog']['file']) | {f.attrs['baselines'].decode()} - {''})))")
[ "$(ls s.h5.d | tr '\n' ' ' | sed 's/ $//')" = "$listed" ] || fail "s.h5.d holds [$(ls s.h5.d)], the manifest lists [$listed]"
echo "store kill: all checks passed"
