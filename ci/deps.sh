#!/usr/bin/env bash
# Install the Debian packages fleetprint needs to build and test.
# Idempotent: installs only what is missing. Not root: names what is missing
# and the apt line to run, and exits 3.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config
  openmpi-bin libopenmpi-dev
  libhdf5-dev hdf5-tools libdeflate-dev
  libopenblas-dev
  libjansson-dev
  libhwloc-dev
  python3-h5py python3-numpy
  libxml2-utils
  prometheus
  munge slurmctld slurmd slurm-client
  clang libclang-rt-dev
)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 3
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${#missing[@]} packages"
