#!/bin/sh
# bench/mpi.sh SERIAL_BUILD MPI_BUILD (make bench-mpi): the 100-configuration
# x 100k-query sweep (100 runs x 100k queries x 100 docs, 8 GB in a corpus
# and 10 run files, made by gen_sweep as bench/sweep.sh's "100x100k", in
# BENCH_WORK so the benchmarks share it) scored by eval under mpirun at
# P = 1, 2 (BENCH_RANKS) ranks of one thread each, beside the one-process
# build at 1 and 2 threads.  Whole-process wall time, BENCH_REPEAT times
# each (median and best; and the median CPU time, user + system, of the
# process and its ranks), with the load average before each timing (the
# machine may be shared); every configuration must write the same
# aggregate.csv bytes.  Appends to bench/results/mpi.csv.
set -eu
RAGSWEEP_WITH_BENCH=1 "$(dirname "$0")/../scripts/install-deps.sh" # GNU time
SERIAL=${1:?usage: bench/mpi.sh SERIAL_BUILD MPI_BUILD}
MPI=${2:?usage: bench/mpi.sh SERIAL_BUILD MPI_BUILD}
RANKS=${BENCH_RANKS:-1 2}
REPEAT=${BENCH_REPEAT:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${BENCH_WORK:-$HERE/work}
OUT="$HERE/results/mpi.csv"
MPIRUN="mpirun --oversubscribe --allow-run-as-root --mca btl self,vader --bind-to none"
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/,/ /g')
cores=$(nproc)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$WORK" "$HERE/results"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The corpus: generated once (bench/sweep.sh's layout and seed), under a
# lock so that two benchmarks never write it at the same time.
d="$WORK/100x100k"
exec 9>"$WORK/.100x100k.lock"
flock 9
# bench/sweep.sh (another checkout) may be writing it without the lock:
# a folder still growing is waited for, not removed.
waited=0
while [ -d "$d" ] && [ ! -f "$d/.done" ] && [ -n "$(find "$d" -newermt '-60 seconds' 2>/dev/null | head -1)" ] &&
  [ "$waited" -lt 900 ]; do
  sleep 10; waited=$((waited + 10))
done
if [ ! -f "$d/.done" ]; then
  rm -rf "$d" && mkdir -p "$d"
  echo "bench-mpi: generating $d (100 runs x 100k queries x 100 docs, 8 GB)" >&2
  "$SERIAL/gen_sweep" -o "$d/c.h5" --queries 100000 --k 100 --docs 2000000 --runs 100 --runs-per-file 10 >&2
  touch "$d/.done"
fi
flock -u 9
files=$(ls "$d"/c.h5 "$d"/c_runs_*.h5 | tr '\n' ' ')
bytes=$(du -cb $files | tail -1 | cut -f1)
cat $files >/dev/null # into the page cache

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rows="$tmp/rows.csv"
: >"$rows"
ref=""
one() { # LABEL BUILD RANKS THREADS COMMAND...
  label=$1 build=$2 ranks=$3 threads=$4
  shift 4
  times="" cpus="" loads="" i=0
  while [ "$i" -lt "$REPEAT" ]; do
    rm -rf "$tmp/out"
    loads="$loads $(cut -d' ' -f1 /proc/loadavg)"
    # wall time, and the CPU time of the process and its children (the ranks)
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@" eval $files -o "$tmp/out" --threads "$threads" --quiet --top 0 >/dev/null
    read -r wall user sys <"$tmp/time"
    times="$times $wall"
    cpus="$cpus $(echo "$user + $sys" | bc -l)"
    i=$((i + 1))
  done
  if [ -z "$ref" ]; then cp "$tmp/out/aggregate.csv" "$tmp/ref.csv"; ref=1
  elif ! cmp -s "$tmp/out/aggregate.csv" "$tmp/ref.csv"; then echo "bench-mpi: $label: aggregate.csv differs" >&2; exit 1; fi
  med=$(echo $times | tr ' ' '\n' | median)
  best=$(echo $times | tr ' ' '\n' | sort -n | head -1)
  load=$(echo $loads | tr ' ' '\n' | median)
  cpu_s=$(echo $cpus | tr ' ' '\n' | median)
  printf '%-24s median %6.2f s  best %6.2f s  CPU %6.2f s  (load before: %s)\n' "$label" "$med" "$best" "$cpu_s" \
    "$(echo $loads)"
  echo "$date,$cpu,$cores,100x100k,100000,100,100,$bytes,$build,$ranks,$threads,$med,$best,$cpu_s,$load" >>"$rows"
}

echo "machine: $cpu, $cores cores; $(date -u); load $(cat /proc/loadavg)"
one "one process, 1 thread" serial 1 1 "$SERIAL/ragsweep"
one "one process, 2 threads" serial 1 2 "$SERIAL/ragsweep"
for p in $RANKS; do
  one "mpirun -np $p, 1 thread" mpi "$p" 1 $MPIRUN -np "$p" "$MPI/ragsweep"
done
echo "identical aggregate.csv in every configuration"
[ -f "$OUT" ] || echo "date,cpu,cores,workload,queries,docs_per_query,runs,bytes,build,ranks,threads_per_rank,median_s,best_s,cpu_s,load1_before" >"$OUT"
cat "$rows" >>"$OUT"
echo "appended to $OUT"
