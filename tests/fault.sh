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
