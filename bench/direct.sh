#!/bin/sh
# bench/direct.sh BUILD_DIR [SIZES]: `ragsweep eval QRELS RUN` (the direct
# eval of TREC text, what a team with text runs types) beside the trec_eval
# drop-in (BUILD_DIR/trec_eval, trec_eval's default measures) on the same
# generated files as bench/run.sh.  Each round times the drop-in and the
# direct eval at every thread count in turn, so that a slow phase of a
# shared machine falls on both.  Prints best and median of REPEAT rounds,
# peak RSS, and the direct eval's time as a multiple of the drop-in's
# (best against best); the direct eval's aggregate.csv must be the same at
# every thread count.  Rows go to bench/results/ratios.csv as
# direct_eval_text (peer: the drop-in).  No target: this tracks the path.
set -eu
BUILD=${1:-build-bench}
SIZES=${2:-${BENCH_SIZES:-10000 100000}}
REPEAT=${BENCH_REPEAT:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BIN="$ROOT/$BUILD/ragsweep"
TE="$ROOT/$BUILD/trec_eval"
GEN="$ROOT/../shared/tools/gen_trec.py"
WORK=${BENCH_WORK:-$HERE/work}
RATIOS="$HERE/results/ratios.csv"
[ -x "$BIN" ] && [ -x "$TE" ] || { echo "bench: build $BIN and $TE first (make bench)" >&2; exit 1; }
[ -f "$GEN" ] || { echo "bench: $GEN not found (../shared is needed)" >&2; exit 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/,/ /g')
cores=$(nproc)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$HERE/rounds.sh" # timed
mkdir -p "$WORK" "$HERE/results"
echo "machine: $cpu, $cores cores; $(date -u)"
printf '%-11s %3s %9s %9s %8s %9s %9s %8s  %s\n' workload thr direct_s median_s peak_MB te_s te_med x_te "[load]"
rows="$tmp/rows.csv"
: >"$rows"
for nq in $SIZES; do
  dir="$WORK/gen_${nq}x100"
  [ -f "$dir/run.txt" ] || /usr/bin/python3 "$GEN" --nq "$nq" --k 100 --out-dir "$dir" >/dev/null
  te_once() { /usr/bin/time -f '%e %M' -o "$tmp/time" "$TE" --threads "$1" "$dir/qrels.txt" "$dir/run.txt" >/dev/null; }
  direct_once() {
    rm -rf "$tmp/out.$1"
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$BIN" eval "$dir/qrels.txt" "$dir/run.txt" -o "$tmp/out.$1" \
      --threads "$1" --quiet --top 0 >/dev/null
  }
  t=1
  while [ "$t" -le "$cores" ]; do eval "d_$t='' e_$t='' rss_$t=0"; t=$((t + 1)); done
  i=0
  while [ "$i" -lt "$REPEAT" ]; do
    t=1
    while [ "$t" -le "$cores" ]; do
      cat "$dir/qrels.txt" "$dir/run.txt" >/dev/null # (see rounds.sh: pages untouched for seconds may be gone)
      timed te_once "$t"
      read -r sec _ <"$tmp/time"
      eval "e_$t=\"\$e_$t $sec\""
      timed direct_once "$t"
      read -r sec kb <"$tmp/time"
      eval "d_$t=\"\$d_$t $sec\"; prev=\$rss_$t"
      if [ "$kb" -gt "$prev" ]; then eval "rss_$t=$kb"; fi
      t=$((t + 1))
    done
    i=$((i + 1))
  done
  t=1
  while [ "$t" -le "$cores" ]; do
    if [ "$t" -gt 1 ] && ! cmp -s "$tmp/out.1/aggregate.csv" "$tmp/out.$t/aggregate.csv"; then
      echo "bench: ${nq}x100: the direct eval's aggregate.csv at $t threads differs from 1 thread" >&2
      exit 1
    fi
    eval "d=\$d_$t e=\$e_$t rss=\$rss_$t"
    db=$(echo $d | tr ' ' '\n' | sort -n | head -1)
    dm=$(echo $d | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    eb=$(echo $e | tr ' ' '\n' | sort -n | head -1)
    em=$(echo $e | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    x=$(awk -v a="$db" -v b="$eb" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf '%-11s %3d %9s %9s %8.1f %9s %9s %8s  [%s]\n' "${nq}x100" "$t" "$db" "$dm" \
      "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" "$eb" "$em" "$x" "$load"
    ours_vs_peer=$(awk -v a="$db" -v b="$eb" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
    echo "$date,$cpu,$cores,$load,direct_eval_text,${nq}x100,$t,$db,$dm,$((rss / 1024)),,,,$eb,$ours_vs_peer,,," >>"$rows"
    t=$((t + 1))
  done
done
[ -f "$RATIOS" ] || echo "date,cpu,cores,load1,benchmark,workload,threads,best_s,median_s,peak_rss_mb,floor_s,ratio_to_floor,floor_target,peer_s,ours_vs_peer,peer_target,speedup_vs_1_thread,verdict" >"$RATIOS"
cat "$rows" >>"$RATIOS"
echo "x_te: the direct eval's best time over the drop-in's (trec_eval's default measures; the direct eval's are its own)"
echo "appended to $RATIOS"
