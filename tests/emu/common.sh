# Shared by the emu tests: fleetprint built with FLEETPRINT_EMU=ON runs its
# cuda and nccl backends on fpemu (emu/). Small sizes: the emulated device
# computes on the host of a shared 2-core machine.
. "$FP_TESTS/lib.sh"
export FLEETPRINT_NVML=${FP_FAKE_NVML:-}
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export NCCL_DEBUG=WARN
# emu N comm cmd args...: fleetprint CMD on N ranks (each its own node unless
# FP_RANKS_PER_NODE says otherwise) with --device cuda --comm COMM
emu() { local n=$1 comm=$2; shift 2; mpi "$n" "$FLEETPRINT" "$@" --device cuda --comm "$comm"; }
SMALL=(-n 2 -w 1 -b 4K -e 64K --timeout 30s)
# no_crash: the last output has no signal report from MPI or the shell
no_crash() { ! grep -Eq "Segmentation fault|signal [0-9]+|Signal: " "$WORK/out" || { cat "$WORK/out" >&2; fail "crashed"; }; }
