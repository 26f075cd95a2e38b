#!/usr/bin/env bash
# Every command x every option (issue 20, must show 4): each command's --help
# lists its own options; an option of another command exits 2 with one line
# "option '--X' does not apply to CMD"; a short option means one long option
# in every command. Prints the table: '+' the command takes the option, '2' it
# refuses it with exit 2. Options are checked before MPI starts (no mpirun).
set -u
F=$FLEETPRINT
# about a thousand starts of the binary: OpenBLAS starts its worker threads
# when it is loaded, before main, and beside a CPU hog that took a start from
# 144 to 235 ms; nothing here multiplies a matrix
export OPENBLAS_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmds=$("$F" --help | awk '/^commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}')
[ "$(wc -w <<<"$cmds")" -ge 12 ] || fail "fewer than 12 commands in fleetprint --help: $cmds"

# ---- each command's options, from its --help --------------------------------------
for c in $cmds; do
    "$F" "$c" --help >"$work/$c.help" || fail "$c --help exits $?"
    grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' "$work/$c.help" | grep -oE -- '--[a-z0-9-]+' |
        grep -vx -- '--help' | sort -u >"$work/$c.opts"
    grep -oE '^  -[a-zA-Z], --[a-z][a-z0-9-]*' "$work/$c.help" | sed 's/^  //' >>"$work/shorts"
done
sort -u "$work"/*.opts >"$work/all"

# ---- short options mean one thing everywhere ------------------------------------------
dups=$(sort -u "$work/shorts" | cut -d, -f1 | sort | uniq -d)
[ -z "$dups" ] || fail "short options with more than one meaning: $dups ($(sort -u "$work/shorts" | tr '\n' ' '))"

# ---- the table -----------------------------------------------------------------------------
printf '%-20s' option
for c in $cmds; do printf ' %-9s' "$c"; done
echo
refused=0
while read -r o; do
    printf '%-20s' "$o"
    for c in $cmds; do
        if grep -qx -- "$o" "$work/$c.opts"; then
            printf ' %-9s' +
            continue
        fi
        rc=0
        "$F" "$c" "$o" >"$work/out" 2>"$work/err" || rc=$?
        [ "$rc" = 2 ] || { cat "$work/err"; fail "$c $o exits $rc, want 2"; }
        grep -q "^fleetprint $c: option '$o' does not apply to $c (an option of " "$work/err" ||
            { cat "$work/err"; fail "$c $o: no 'does not apply' line"; }
        [ "$(wc -l <"$work/err")" = 1 ] || { cat "$work/err"; fail "$c $o: more than one line"; }
        printf ' %-9s' 2
        refused=$((refused + 1))
    done
    echo
done <"$work/all"

# ---- the cases issue 20 names ------------------------------------------------------------
rc=0
"$F" burnin --suite collectives --test allreduce -b 8M --pairs ring --fused-m 5 2>"$work/err" || rc=$?
[ "$rc" = 2 ] || fail "burnin with collective options exits $rc, want 2"
for o in --suite --test --min-bytes --pairs --fused-m --chunks --array-size; do
    ! grep -qx -- "$o" "$work/burnin.opts" || fail "burnin --help lists $o"
done
for o in --drain-file --exclude-file --explain --classify; do
    ! grep -qx -- "$o" "$work/report.opts" || fail "report --help lists $o"
done
echo "ok: $refused inapplicable command x option pairs exit 2, $(wc -l <"$work/all") options, $(wc -w <<<"$cmds") commands"
