# bench/rounds.sh: sourced by sweep.sh and run.sh.
# time_rounds: the caller's `floor_once T` (prints the floor, in seconds) at
# each thread count T = 1..$cores, then $REPEAT rounds of `run_once T` (the
# timed command, its `/usr/bin/time -f '%e %M'` line in $tmp/time; the
# wall time is then taken again to the millisecond, see timed), each
# round every thread count in turn, so that a slow phase of a shared
# machine (minutes long on a VM) falls on every thread count alike, not on
# one side of the 2 vs 1 ratio.  Leaves floor_T, times_T (seconds, space
# separated) and rss_T (KB) for each T.  With EXTRA_ONCE set to a function
# name, each round ends with that command too: its times go to times_x.
# timed CMD: runs CMD (which leaves `/usr/bin/time -f '%e %M'`'s line in
# $tmp/time) and puts its wall time to the millisecond in place of %e,
# whose 10 ms steps were a quarter of a 40 ms run (10k x 100).
timed() {
  t0=$(date +%s%N)
  "$@"
  t1=$(date +%s%N)
  read -r _ kb <"$tmp/time"
  awk -v a="$t0" -v b="$t1" -v k="$kb" 'BEGIN { printf "%.3f %s\n", (b - a) / 1e9, k }' >"$tmp/time"
}

# Before each timed command the caller's `warm_inputs` (if it defines one)
# reads the inputs once: some VMs page out file pages untouched for a few
# seconds (DAMON's "pageout" scheme: /sys/kernel/mm/damon/admin), and a
# run that finds its inputs gone times the disk, not the program (the
# floor of 100 x 100k went from 0.67 to 1.19-1.27 s between passes).
time_rounds() {
  times_x=""
  t=1
  while [ "$t" -le "$cores" ]; do
    f=$(floor_once "$t")
    eval "floor_$t=$f times_$t='' rss_$t=0"
    t=$((t + 1))
  done
  i=0
  while [ "$i" -lt "$REPEAT" ]; do
    t=1
    while [ "$t" -le "$cores" ]; do
      if command -v warm_inputs >/dev/null 2>&1; then warm_inputs; fi
      timed run_once "$t"
      read -r sec kb <"$tmp/time"
      eval "times_$t=\"\$times_$t $sec\"; prev=\$rss_$t"
      if [ "$kb" -gt "$prev" ]; then eval "rss_$t=$kb"; fi
      t=$((t + 1))
    done
    if [ -n "${EXTRA_ONCE:-}" ]; then # the caller's extra timed command, in the same rounds
      if command -v warm_inputs >/dev/null 2>&1; then warm_inputs; fi
      timed "$EXTRA_ONCE"
      read -r sec kb <"$tmp/time"
      times_x="$times_x $sec"
    fi
    i=$((i + 1))
  done
}
