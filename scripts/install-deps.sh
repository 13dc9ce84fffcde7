#!/bin/sh
# Installs the Debian packages ragsweep needs to build, test and benchmark.
# Does nothing (and needs no network) when they are all present already.
# Called by the Makefile before any target that compiles.
set -eu

PACKAGES="build-essential pkg-config zlib1g-dev libhdf5-dev libcsv-dev libcriterion-dev libjson-c-dev"
# The LLM layer: an HTTP client (libcurl multi) and its reply cache (SQLite).
PACKAGES="$PACKAGES libcurl4-openssl-dev libsqlite3-dev"
# The tests write corpora with h5py and check eval against an independent
# Python implementation; one run of it is compressed by the LZ4 filter
# plugin, which libhdf5 loads at run time (ragsweep links HDF5 statically).
PACKAGES="$PACKAGES python3 python3-numpy python3-h5py hdf5-filter-plugin"
# `make test` also checks the morning-after outputs with real peers: the
# HTML report in headless Chromium (driven through ChromeDriver on
# 127.0.0.1), the Prometheus file with promtool, pushes with a Pushgateway.
[ "${RAGSWEEP_WITH_TESTS:-0}" = 1 ] && PACKAGES="$PACKAGES chromium chromium-driver prometheus prometheus-pushgateway"
# The benchmarks also need the workload generator's Python and GNU time.
[ "${RAGSWEEP_WITH_BENCH:-0}" = 1 ] && PACKAGES="$PACKAGES time"
# `make fuzz`: libFuzzer and the sanitizer runtimes come with clang's
# compiler-rt (Debian 12: clang 14).
[ "${RAGSWEEP_WITH_FUZZ:-0}" = 1 ] && PACKAGES="$PACKAGES clang libclang-rt-14-dev"
# `make mpi` / `make test-mpi`: OpenMPI and the OpenMPI build of HDF5
# (parallel HDF5, MPI-IO).  Never for the default build.
[ "${RAGSWEEP_WITH_MPI:-0}" = 1 ] && PACKAGES="$PACKAGES libopenmpi-dev openmpi-bin libhdf5-openmpi-dev"

# libhdf5-openmpi-dev registers hdf5-openmpi.pc (and hdf5-mpi.pc) as the
# hdf5.pc alternative with a higher priority than the serial one: in auto
# mode, installing it would make every `pkg-config hdf5` on the machine
# (other checkouts, other projects) answer with the OpenMPI flavour.  The
# alternative is pinned to the serial file first (manual mode, which an
# install does not override) and checked again afterwards.
HDF5_PC_DIR=/usr/lib/x86_64-linux-gnu/pkgconfig
pin_serial_hdf5_pc() {
  [ -f "$HDF5_PC_DIR/hdf5-serial.pc" ] || return 0
  command -v update-alternatives >/dev/null 2>&1 || return 0
  update-alternatives --query hdf5.pc >/dev/null 2>&1 || return 0
  $SUDO update-alternatives --quiet --set hdf5.pc "$HDF5_PC_DIR/hdf5-serial.pc"
}

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root (or sudo) to install:$missing" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
case "$missing" in *libhdf5-openmpi-dev*) pin_serial_hdf5_pc ;; esac
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
case "$missing" in *libhdf5-openmpi-dev*) pin_serial_hdf5_pc ;; esac
