#!/usr/bin/env bash
# A command that multiplies no matrix does not load OpenBLAS (whose
# constructor starts a thread pool): `detect --classify` waiting on its input
# has no libopenblas mapped and one thread; a host GEMM loads it on first use.
. "$FP_TESTS/lib.sh"
cd "$WORK"
mkfifo in
"$FLEETPRINT" detect --classify <in >classify.out 2>&1 &
pid=$!
exec 3>in # the command now waits on its standard input
for _ in $(seq 50); do [ -r "/proc/$pid/maps" ] && grep -q libjansson "/proc/$pid/maps" && break; sleep 0.1; done
maps=$(cat "/proc/$pid/maps"); threads=$(ls "/proc/$pid/task" | wc -l)
echo "kernels.gemm.f64_flops" >&3
exec 3>&-
wait "$pid" || fail "detect --classify exited $?"
grep -q "^kernels.gemm.f64_flops compute$" classify.out || fail "classify: $(cat classify.out)"
! grep -q libopenblas <<<"$maps" || fail "detect --classify loaded OpenBLAS"
[ "$threads" = 1 ] || fail "detect --classify runs $threads threads"
echo "ok: no OpenBLAS and 1 thread in a command without GEMM"
expect_rc 0 "$FLEETPRINT" run --test gemm --threads 1 --gemm-size 128 -n 2 -w 1
expect_out "kernels/gemm f64_flops"
echo "ok: a host GEMM loads it when needed"
