#!/bin/bash
# Must show 3: every .cu file compiles for sm_80 and sm_90, and every kernel
# launch in it is checked (each <<<...>>> followed by cudaGetLastError or a
# helper that calls it). Skips (77) where nvcc is absent.
set -u
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "nvcc not found: skipped"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
for cu in "$FP_SRC"/core/*.cu "$FP_SRC"/kernels/*.cu; do
    name=$(basename "$cu")
    if ! "$NVCC" -std=c++17 -c -I"$FP_SRC/include" \
        --generate-code=arch=compute_80,code=sm_80 --generate-code=arch=compute_90,code=sm_90 \
        -Werror all-warnings "$cu" -o "$out/$name.o" 2>"$out/$name.err"; then
        echo "FAIL $name:"; cat "$out/$name.err"; fail=1; continue
    fi
    launches=$(grep -c '<<<' "$cu")
    checks=$(grep -cE 'cudaGetLastError|return (launched|FP_K_LAUNCHED)\(' "$cu")
    if [ "$launches" -gt "$checks" ]; then
        echo "FAIL $name: $launches launches, only $checks checked"; fail=1; continue
    fi
    echo "ok   $name: sm_80 + sm_90, $launches launch(es) checked"
done
exit $fail
