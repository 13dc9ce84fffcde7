#!/bin/sh
# bench/peer.sh WORK_DIR: builds the peer, trec_eval 10.0 (usnistgov/trec_eval
# at commit f4253652), with its own Makefile's default CFLAGS, which carry no
# -O: the -O0 build that users of `make` in a trec_eval checkout run.  The
# source is $BENCH_TREC_EVAL_SRC (a checkout or an exported tree) when set,
# else a git clone of https://github.com/usnistgov/trec_eval at that commit.
# Prints the binary's path on stdout; prints why on stderr and exits 1 when
# neither source works (the benchmark then reports no peer ratio).
set -eu
WORK=$1
COMMIT=f4253652
URL=https://github.com/usnistgov/trec_eval
DEST="$WORK/trec_eval-10.0-O0"
BIN="$DEST/build/trec_eval"
log="$WORK/trec_eval-10.0-O0.log"

if [ -x "$BIN" ] && [ -f "$DEST/.source" ]; then echo "$BIN"; exit 0; fi
rm -rf "$DEST" && mkdir -p "$DEST"
src=""
if [ -n "${BENCH_TREC_EVAL_SRC:-}" ]; then
  if [ -f "$BENCH_TREC_EVAL_SRC/trec_eval.c" ] && [ -f "$BENCH_TREC_EVAL_SRC/Makefile" ]; then
    src="$BENCH_TREC_EVAL_SRC"
  else
    echo "bench: BENCH_TREC_EVAL_SRC=$BENCH_TREC_EVAL_SRC holds no trec_eval source (trec_eval.c, Makefile); trying git" >&2
  fi
fi
if [ -z "$src" ]; then
  if git clone -q "$URL" "$DEST/clone" >"$log" 2>&1 && git -C "$DEST/clone" checkout -q "$COMMIT" >>"$log" 2>&1; then
    src="$DEST/clone"
  else
    echo "bench: peer trec_eval 10.0 unavailable: no BENCH_TREC_EVAL_SRC and 'git clone $URL' failed (see $log); no peer ratio" >&2
    exit 1
  fi
fi
# Built in a copy, so the source tree is never written.
mkdir -p "$DEST/build"
(cd "$src" && tar -cf - --exclude=.git .) | (cd "$DEST/build" && tar -xf -)
make -C "$DEST/build" clean >>"$log" 2>&1 || true
if ! make -C "$DEST/build" trec_eval >>"$log" 2>&1 || [ ! -x "$BIN" ]; then
  echo "bench: peer trec_eval 10.0 did not build from $src (see $log); no peer ratio" >&2
  exit 1
fi
if ! grep -q '^CFLAGS *= -g -I\$H ' "$DEST/build/Makefile" || grep -q '^CFLAGS.*-O[1-9s]' "$DEST/build/Makefile"; then
  echo "bench: note: $src/Makefile's CFLAGS are not trec_eval 10.0's default (-g, no -O)" >&2
fi
echo "$src" >"$DEST/.source"
echo "$BIN"
