#!/usr/bin/env bash
# The manual page and the bash completion come from the option tables: the man
# page names every command and every option of each; the completion offers a
# command's own options and not another's; cmake --install puts the binary,
# the man page, the completion, the scripts and the docs in place.
set -u
F=$FLEETPRINT
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$F" --man >"$work/fleetprint.1" || fail "--man exits $?"
cmds=$("$F" --help | awk '/^commands:/ {on = 1; next} on && NF == 0 {exit} on {print $1}')
for c in $cmds; do
    grep -qx ".SS \"fleetprint $c\"" "$work/fleetprint.1" || fail "man page: no section for $c"
    # every option of the command, in the order its help lists them, in its section
    sed -n "/^.SS \"fleetprint $c\"/,/^.S[SH] /p" "$work/fleetprint.1" | sed 's/\\-/-/g' >"$work/sec"
    for o in $("$F" "$c" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z0-9-]*' |
               grep -oE -- '--[a-z0-9-]+' | grep -vx -- --help); do
        grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)" "$work/sec" || fail "man page: $c lacks $o"
    done
done
if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww "$work/fleetprint.1" >"$work/man.txt" 2>"$work/groff.err" || fail "groff fails"
    [ ! -s "$work/groff.err" ] || { cat "$work/groff.err"; fail "groff warns"; }
fi

"$F" --completion bash >"$work/fleetprint.bash" || fail "--completion bash exits $?"
complete_words() { # words... : what completing the last word offers
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fleetprint; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$work/fleetprint.bash" "$@"
}
[ "$(complete_words fleetprint bur)" = burnin ] || fail "completion: 'bur' is not burnin"
complete_words fleetprint run --pa | grep -qx -- --pairs || fail "completion: run --pa lacks --pairs"
[ -z "$(complete_words fleetprint burnin --pa)" ] || fail "completion: burnin offers --pairs"
complete_words fleetprint burnin --dur | grep -qx -- --duration || fail "completion: burnin --dur"

if [ -n "${FP_BUILD:-}" ] && [ -f "$FP_BUILD/fleetprint.1" ]; then
    cmake --install "$FP_BUILD" --prefix "$work/prefix" >"$work/install.log" 2>&1 ||
        { cat "$work/install.log"; fail "cmake --install fails"; }
    for f in bin/fleetprint share/man/man1/fleetprint.1 share/bash-completion/completions/fleetprint \
             share/fleetprint/scripts/slurm-preflight.sbatch share/fleetprint/scripts/nightly-burnin.sh \
             share/fleetprint/scripts/slurm-healthcheck.sh share/doc/fleetprint/prometheus-alerts.yml \
             share/doc/fleetprint/README.md share/doc/fleetprint/architecture.md; do
        [ -e "$work/prefix/$f" ] || fail "cmake --install: no $f"
    done
    [ -x "$work/prefix/share/fleetprint/scripts/nightly-burnin.sh" ] || fail "scripts not executable"
fi
echo "ok: man page and completion cover $(wc -w <<<"$cmds") commands; install in place"
