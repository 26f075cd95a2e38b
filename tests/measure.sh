# Helpers for the tests that measure an injected fault (sourced).
#
# inject SPEC: the arguments that inject the fault SPEC (--inject SPEC), for
# the tests that measure one. FP_TEST_FAULT_SCALE (default 1) scales its
# strength, to check that a test's assertions fail without its fault:
#   0    no fault at all (prints nothing)
#   0.5  half strength: factor F becomes 1 + (F - 1) / 2 (a fault without a
#        factor, such as bitflip, stays as it is)
# e.g. FP_TEST_FAULT_SCALE=0 ctest -R coll_links must fail.
inject() {
    local scale=${FP_TEST_FAULT_SCALE:-1}
    awk -v spec="$1" -v k="$scale" 'BEGIN {
        if (k + 0 == 0) exit
        n = split(spec, part, ",")
        for (i = 1; i <= n; i++)
            if (part[i] ~ /^factor=/)
                part[i] = sprintf("factor=%g", 1 + (substr(part[i], 8) - 1) * k)
        out = part[1]
        for (i = 2; i <= n; i++) out = out "," part[i]
        print "--inject " out
    }'
    [ "$scale" = 1 ] || echo "note: FP_TEST_FAULT_SCALE=$scale: fault '$1' scaled by $scale" >&2
}

# clock_ok LOG LIMIT_US: whether the run whose output is LOG knew every rank's
# clock offset to within LIMIT_US ("clock offsets within X us", Cristian's
# bound from start-up). Lateness and link times compare time stamps of
# different ranks; on a busy machine the start-up ping-pong can be delayed by
# milliseconds, and those comparisons are then off by as much (see issue 19's
# report). A run whose bound is too loose for what it measures shows nothing
# either way: the caller measures again, and says so.
clock_ok() {
    awk -v limit="$2" 'match($0, /clock offsets within [0-9.]+ us/) {
        split(substr($0, RSTART, RLENGTH), w, " "); worst = w[4]; found = 1 }
    END {
        if (!found) { print "no clock offset line in the output"; exit 1 }
        printf "clock offsets within %s us (limit %s us)%s\n", worst, limit,
               worst + 0 <= limit + 0 ? "" : ": not usable, measuring again"
        exit !(worst + 0 <= limit + 0) }' "$1"
}
