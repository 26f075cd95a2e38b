#!/usr/bin/env bash
# An output path that is not a regular file is written in place, never
# replaced: a symbolic link stays a link (its target gets the text), a FIFO
# stays a FIFO (its reader gets the text), and /dev/stdout is the process's
# own stdout (a log it is appended to is not truncated). Renaming PATH.tmp over them (as a
# regular file is written) once turned /dev/null into a regular file when a
# root user wrote a report there.
. "$FP_TESTS/lib.sh"
cd "$WORK"
F=$FLEETPRINT
expect_rc 0 "$F" simulate --nodes 6 --seed 2 --runs 1 --out sim.jsonl

ln -s target.json link.json
expect_rc 0 "$F" report --input sim.jsonl -q --json link.json
[ -L link.json ] || fail "the link link.json was replaced by a file"
py -c "import json; v=json.load(open('target.json')); assert v['verdict'] in ('pass','warn','fail')"
echo "a link: written through, still a link"

mkfifo pipe.json
timeout 60 cat pipe.json >got.json &
reader=$!
expect_rc 0 timeout 60 "$F" report --input sim.jsonl -q --json pipe.json
wait $reader || fail "the FIFO's reader got nothing (exit $?)"
[ -p pipe.json ] || fail "the FIFO pipe.json was replaced by a file"
py -c "import json; json.load(open('got.json'))"
echo "a FIFO: its reader got the JSON, still a FIFO"
echo "the log before" >log.txt
"$F" report --input sim.jsonl -q --json /dev/stdout >>log.txt 2>/dev/null ||
  fail "report --json /dev/stdout: exit $?"
[ "$(head -1 log.txt)" = "the log before" ] || fail "/dev/stdout appended to truncated the log"
grep -q '"failing_nodes"' log.txt || fail "/dev/stdout: no JSON in the log"
echo "/dev/stdout: the JSON appended to the log, which kept its line"
! ls | grep -q '\.tmp$' || fail "a temporary left behind: $(ls)"
echo ok
