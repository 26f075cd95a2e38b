#!/usr/bin/env bash
# The layers of docs/architecture.md, checked: every folder may use only the
# folders below it. Fails (exit 1, one line per offence) on
#   - an #include of a public header (include/fleetprint/*.h) owned by a folder
#     that is not below the including file's folder (public headers count as
#     their owner's files, so a header may not include upward either);
#   - an #include of another folder's private header ("../x/y.h");
#   - in emu/ (fpemu, a leaf like the CUDA and NCCL libraries it stands in
#     for): an #include "..." of anything but emu's own headers, or of a
#     fleetprint header in any form (system, CUDA and NCCL headers are fine);
#   - with BUILD_DIR: a symbol that a folder's static library (fp_<folder>)
#     takes from a library that is not below it (nm on the built libraries),
#     and any fp_ symbol that libfpemu.a takes (when it is built:
#     -DFLEETPRINT_EMU=ON).
# usage: ci/check-layers.sh [BUILD_DIR]      (ci/test.sh; ctest check_layers)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}

# ---- the layers, bottom to top; folders of one rank may not use each other. emu/
# (fpemu) stands in for the CUDA and NCCL libraries: below core, using nothing of fleetprint
declare -A rank=(
  [emu]=-1
  [core]=0
  [kernels]=1 [collectives]=1 [burnin]=1
  [fingerprint]=2
  [detect]=3 [whatif]=3 [admit]=3
  [reports]=4
  [app]=5
)
# ---- the owner of every public header
declare -A owner=(
  [comm]=core [cuda_kernels]=core [device]=core [hd]=core [inject]=core [log]=core
  [mem]=core [opts]=core [outfile]=core [progress]=core [sample]=core [stats]=core
  [status]=core [suite]=core [timer]=core [world]=core
  [config]=core
  [kernels]=kernels [collectives]=collectives [isolate]=collectives [burnin]=burnin
  [store]=fingerprint [jsonl]=fingerprint [history]=fingerprint
  [detect]=detect [whatif]=whatif [trace]=whatif
  [admit]=admit [topology]=admit [hostlist]=admit
  [report]=reports
)

fail=0
offence() { echo "layers: $*"; fail=1; }

# the ranks, bottom up, on one line: "-1 emu/ < 0 core/ < 1 burnin/ collectives/ kernels/ < ..."
listing=""
for r in $(printf '%s\n' "${rank[@]}" | sort -n -u); do
    names=$(for dir in "${!rank[@]}"; do [ "${rank[$dir]}" != "$r" ] || echo "$dir/"; done |
        sort | paste -sd ' ')
    listing+="${listing:+ < }$r $names"
done
echo "layers (rank folders, bottom up; emu/ is a leaf like a vendor library): $listing"

# may FROM use TO? (same folder, or a lower rank)
may_use() { [ "$1" = "$2" ] || [ "${rank[$2]}" -lt "${rank[$1]}" ]; }

# ---- includes -------------------------------------------------------------------
checked=0
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^">]+)[">]'
check_file() { # file folder
    local file=$1 from=$2 n=0 line inc h to
    while IFS= read -r line; do
        n=$((n + 1))
        [[ $line =~ $include_re ]] || continue
        inc=${BASH_REMATCH[2]}
        # <...>: system, CUDA, NCCL, ... headers; only a fleetprint one counts
        [[ ${BASH_REMATCH[1]} == '"' || $inc == fleetprint/* ]] || continue
        if [[ $inc == fleetprint/*.h ]]; then
            h=${inc#fleetprint/}
            h=${h%.h}
            to=${owner[$h]:-}
            if [ -z "$to" ]; then
                offence "${file#"$root"/}:$n: include/fleetprint/$h.h has no owner in ci/check-layers.sh"
            elif ! may_use "$from" "$to"; then
                offence "${file#"$root"/}:$n: $from includes $inc of $to (above or beside it)"
            fi
        elif [[ $inc == ../* ]]; then
            offence "${file#"$root"/}:$n: $from includes another folder's private header $inc"
        elif [ "$from" = emu ] && [ ! -f "$root/emu/$inc" ] &&
            [ ! -f "$root/emu/include/$inc" ]; then
            offence "${file#"$root"/}:$n: emu includes $inc, not one of its own headers (a leaf)"
        fi
    done <"$file"
    checked=$((checked + 1))
}
for dir in "${!rank[@]}"; do
    while IFS= read -r -d '' f; do
        check_file "$f" "$dir"
    done < <(find "$root/$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print0)
done
for f in "$root"/include/fleetprint/*.h; do
    h=$(basename "$f" .h)
    [ -n "${owner[$h]:-}" ] || { offence "include/fleetprint/$h.h has no owner in ci/check-layers.sh"; continue; }
    check_file "$f" "${owner[$h]}"
done

# ---- links ----------------------------------------------------------------------------
libs=0
# the library of folder $1 (emu/ builds fpemu)
lib_of() {
    if [ "$1" = emu ]; then echo "$build/emu/libfpemu.a"; else echo "$build/$1/libfp_$1.a"; fi
}
if [ -n "$build" ]; then
    declare -A def=()
    for dir in "${!rank[@]}"; do
        lib=$(lib_of "$dir")
        # fpemu is built only with -DFLEETPRINT_EMU=ON
        [ -f "$lib" ] || [ "$dir" = emu ] || { offence "$lib: not built"; continue; }
        [ -f "$lib" ] || continue
        while read -r sym; do def[$sym]=$dir; done < <(nm -g --defined-only "$lib" 2>/dev/null |
            awk 'NF == 3 && $2 ~ /[TDBRVWC]/ {print $3}')
        libs=$((libs + 1))
    done
    for dir in "${!rank[@]}"; do
        lib=$(lib_of "$dir")
        [ -f "$lib" ] || continue
        while read -r obj sym; do
            to=${def[$sym]:-}
            if [ -n "$to" ] && ! may_use "$dir" "$to"; then
                offence "$dir/$obj uses $sym of $to (above or beside it)"
            elif [ "$dir" = emu ] && [[ $sym == fp_* ]]; then
                offence "$dir/$obj takes $sym, a symbol of fleetprint (emu/ is a leaf)"
            fi
        done < <(nm -A -u "$lib" 2>/dev/null | sed -E 's/^[^:]*:([^:]*):[[:space:]]*U[[:space:]]+/\1 /' | sort -u)
    done
fi

if [ "$fail" = 0 ]; then
    links=""
    [ -n "$build" ] && links=", the links of $libs libraries"
    echo "layers: ok (the includes of $checked files$links go downward only)"
fi
exit $fail
