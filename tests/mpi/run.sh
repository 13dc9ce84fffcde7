#!/bin/sh
# tests/mpi/run.sh SERIAL_BUILD MPI_BUILD (make test-mpi): eval and compare
# under mpirun at 1..4 ranks against the one-process eval of SERIAL_BUILD, on a
# generated sweep (7 runs in a corpus and 3 run files, latencies, 5000
# queries: 35 units of 1024 queries, so the shares are unequal and cross
# runs).  Every output file and stdout must be the same bytes; a bad row in
# one share must end every rank with the one-process message; a failed
# gate must give exit status 3; judge at 1..4 ranks must write one
# process's files (on the LLM stub) and resume from a killed job's rank
# caches; commands that do not split must be refused.
# --allow-run-as-root here only: the test may run as root in a container.
set -eu
SERIAL=${1:?usage: tests/mpi/run.sh SERIAL_BUILD MPI_BUILD}
MPI=${2:?usage: tests/mpi/run.sh SERIAL_BUILD MPI_BUILD}
RANKS=${MPI_TEST_RANKS:-1 2 3 4}
LIMIT=${MPI_TEST_LIMIT:-180} # seconds for any one mpirun: a hang fails the test
DATA=$(cd "$(dirname "$0")/.." && pwd)/data/bad # the bad-HDF5 fixtures
STUB_PY=$(cd "$(dirname "$0")/.." && pwd)/llm_stub.py # the scripted LLM server
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ragsweep-test-mpi.XXXXXX")
[ -n "${MPI_TEST_KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
MPIRUN="mpirun --oversubscribe --allow-run-as-root --mca btl self,vader"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "  ok   $1"; }
bad() { fail=$((fail + 1)); echo "  FAIL $1"; }

cd "$WORK"
"$SERIAL/gen_sweep" -o c.h5 --queries 5000 --k 50 --runs 7 --runs-per-file 3 --seed 17 >/dev/null
INPUTS="$WORK/c.h5 $(ls "$WORK"/c_runs_*.h5 | tr '\n' ' ')"
[ "$(echo $INPUTS | wc -w)" -ge 3 ] || { echo "test-mpi: gen_sweep wrote no run files" >&2; exit 1; }

# same DIR CASE: every file of ref/CASE and DIR/CASE, and their stdout, byte for byte.
same() {
  if ! diff -r "ref/$2" "$1/$2" >/dev/null; then
    bad "$1/$2: files differ from the one-process eval"; diff -r "ref/$2" "$1/$2" | head -5; return
  fi
  if ! cmp -s "ref/$2.stdout" "$1/$2.stdout"; then
    bad "$1/$2: stdout differs from the one-process eval"; diff "ref/$2.stdout" "$1/$2.stdout" | head -5; return
  fi
  ok "$1/$2: $(ls "ref/$2" | wc -l) files and stdout identical"
}

# Output folders are given by the same relative name in each folder, so
# that stdout's "wrote ..." lines compare too.
run_case() { # DIR CASE BIN [MPIRUN ARGS] -- EVAL ARGS
  dir=$1 case=$2
  shift 2
  mkdir -p "$dir"
  (cd "$dir" && timeout "$LIMIT" "$@" >"$case.stdout" 2>"$case.stderr") && echo 0 >"$dir/$case.rc" || echo $? >"$dir/$case.rc"
}

EVAL_A="eval $INPUTS -o a --per-query --worst 5 --top 5 --quiet"
EVAL_B="eval $INPUTS -o b -m nDCG@10 -m AP -m RR -m P@5 --queries=all --report --quiet"
CMP_C="compare $INPUTS -o c --worst 3 --all-pairs"
run_case ref a "$SERIAL/ragsweep" $EVAL_A --threads 2
run_case ref c "$SERIAL/ragsweep" $CMP_C --threads 2
run_case ref b "$SERIAL/ragsweep" $EVAL_B --threads 2
for c in a b c; do [ "$(cat ref/$c.rc)" = 0 ] || { echo "test-mpi: the one-process eval failed:" >&2; cat ref/$c.stderr >&2; exit 1; }; done
rm -f ref/b/report.html # dated; its data are the CSVs beside it

for p in $RANKS; do
  run_case "np$p" a $MPIRUN -np "$p" "$MPI/ragsweep" $EVAL_A --threads 1
  if [ "$(cat np$p/a.rc)" = 0 ]; then same "np$p" a; else bad "np$p/a: exit $(cat np$p/a.rc)"; cat "np$p/a.stderr"; fi
  run_case "np$p" b $MPIRUN -np "$p" "$MPI/ragsweep" $EVAL_B --threads 1
  rm -f "np$p/b/report.html"
  if [ "$(cat np$p/b.rc)" = 0 ]; then same "np$p" b; else bad "np$p/b: exit $(cat np$p/b.rc)"; cat "np$p/b.stderr"; fi
  # compare: the ranks score, rank 0 tests (permutations, bootstrap) and writes.
  run_case "np$p" c $MPIRUN -np "$p" "$MPI/ragsweep" $CMP_C --threads 1
  if [ "$(cat np$p/c.rc)" = 0 ]; then same "np$p" c; else bad "np$p/c: exit $(cat np$p/c.rc)"; cat "np$p/c.stderr"; fi
done

# A failed gate: exit status 3 through mpirun, gates.csv as one process writes it.
GATE="eval $INPUTS -o g --gate nDCG@10>=0.99 --top 0 --quiet"
run_case ref g "$SERIAL/ragsweep" $GATE
run_case np3 g $MPIRUN -np 3 "$MPI/ragsweep" $GATE --threads 1
if [ "$(cat ref/g.rc)" = 3 ] && [ "$(cat np3/g.rc)" = 3 ]; then same np3 g; else bad "gate: exit $(cat ref/g.rc) (one process) and $(cat np3/g.rc) (3 ranks), expected 3"; fi

# A bad row in the last share: a doc index out of range at query 4900 of
# the last run.  Every rank ends, non-zero, with the one-process message.
mkdir -p badrow && cp c.h5 c_runs_*.h5 badrow/
last=$(ls badrow/c_runs_*.h5 | tail -1)
/usr/bin/python3 - "$last" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    name = sorted(f["runs"].keys())[-1]
    f["runs"][name]["doc"][4900, 3] = 2_000_000_000
PY
BAD_INPUTS="$WORK/badrow/c.h5 $(ls "$WORK"/badrow/c_runs_*.h5 | tr '\n' ' ')"
run_case ref bad "$SERIAL/ragsweep" eval $BAD_INPUTS -o bad --quiet
for p in 2 4; do
  run_case "np$p" bad $MPIRUN -np "$p" "$MPI/ragsweep" eval $BAD_INPUTS -o bad --quiet --threads 1
  if [ "$(cat np$p/bad.rc)" != 0 ] && grep -qF "$(cat ref/bad.stderr)" "np$p/bad.stderr" && [ ! -e "np$p/bad" ]; then
    ok "np$p/bad: exit $(cat np$p/bad.rc), the one-process message, no output folder"
  else
    bad "np$p/bad: exit $(cat np$p/bad.rc), stderr:"; cat "np$p/bad.stderr"; echo "  expected: $(cat ref/bad.stderr)"
  fi
done

# A file that crashes libhdf5 (its query ids): the ranks share the crash
# check, and every rank ends with its message (no rank left in the open).
for p in 2 3; do
  run_case "np$p" crash $MPIRUN -np "$p" "$MPI/ragsweep" eval "$DATA/crash_queries_id.h5" -o crash --quiet
  if [ "$(cat np$p/crash.rc)" != 0 ] && grep -q "libhdf5 crashed decoding /queries/id" "np$p/crash.stderr"; then
    ok "np$p/crash: exit $(cat np$p/crash.rc), libhdf5's crash reported"
  else bad "np$p/crash: exit $(cat np$p/crash.rc)"; cat "np$p/crash.stderr"; fi
done

# Doc ids libhdf5 fails to read part way: only the rank whose share holds
# /docs/id sees it in its probe; every rank ends with that message and no
# rank reads the strings itself.
for p in 2 3; do
  run_case "np$p" unreadable $MPIRUN -np "$p" "$MPI/ragsweep" eval "$DATA/docs_id_unreadable.h5" -o unreadable --quiet
  if [ "$(cat np$p/unreadable.rc)" != 0 ] && grep -q "/docs/id: libhdf5 cannot decode the strings" "np$p/unreadable.stderr" &&
    [ ! -e "np$p/unreadable" ]; then
    ok "np$p/unreadable: exit $(cat np$p/unreadable.rc), the probe's verdict on /docs/id, no output folder"
  else bad "np$p/unreadable: exit $(cat np$p/unreadable.rc)"; cat "np$p/unreadable.stderr"; fi
done

# An error before the sweep (-o names a file): every rank ends.
touch np2/file
run_case np2 ofile $MPIRUN -np 2 "$MPI/ragsweep" eval $INPUTS -o file --quiet
if [ "$(cat np2/ofile.rc)" != 0 ] && grep -q "is a file, expected a folder" np2/ofile.stderr; then ok "np2: -o FILE ends both ranks"
else bad "np2: -o FILE: exit $(cat np2/ofile.rc)"; cat np2/ofile.stderr; fi

# judge at 1..4 ranks against one process, on the scripted LLM stub
# (tests/llm_stub.py on 127.0.0.1, started here and stopped on exit; every
# wait is bounded).  qrels.txt and agreement.csv byte for byte;
# judgments.jsonl up to latency_ms (each request's measured time).
mkdir -p jd && cd jd
for q in 1 2 3 4 5 6 7 8; do printf 'q%s\twhat about %s?\n' $q $q; done >queries.tsv
# d7 fails (HTTP 500) wherever it is retrieved: a few failures, never the
# run of them that reads as a server down.
for d in $(seq 1 20); do case $((d % 5)) in 0) w=alpha ;; 1) w=beta ;; *) w=plain ;; esac; [ $d = 7 ] && w=gamma
  printf 'd%s\t%s passage %s\n' $d $w $d; done >docs.tsv
for q in 1 2 3 4 5 6 7 8; do printf 'q%s 0 d%s %s\n' $q $((q + 2)) $((q % 3)); done >qrels.txt
for r in 0 1 2; do for q in 1 2 3 4 5 6 7 8; do for k in 1 2 3 4 5; do
  printf 'q%s Q0 d%s %s %s R%s\n' $q $((1 + (q * 3 + k * (r + 2)) % 20)) $k $((10 - k)) $r; done; done; done >runs.txt
for r in 0 1 2; do grep " R$r\$" runs.txt >R$r.txt; done
"$SERIAL/ragsweep" import -o corpus.h5 --qrels qrels.txt --queries queries.tsv --docs docs.tsv R0=R0.txt R1=R1.txt R2=R2.txt >/dev/null
cat >script.json <<'JSON'
{"rules": [{"match": "Passage: gamma", "behaviour": {"status": 500, "error_message": "boom"}},
           {"match": "Passage: beta", "behaviour": {"content": "maybe"}},
           {"match": "Passage: alpha", "behaviour": {"content": "YES"}}], "default": {"content": "NO"}}
JSON
/usr/bin/python3 "$STUB_PY" --port-file port --script script.json --log log.jsonl \
  --max-seconds "$LIMIT" >/dev/null 2>&1 &
STUB=$!
trap 'kill $STUB 2>/dev/null; [ -n "${MPI_TEST_KEEP:-}" ] || rm -rf "$WORK"' EXIT
i=0; while [ ! -s port ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s port ] || { echo "test-mpi: the LLM stub did not start" >&2; exit 1; }
URL="http://127.0.0.1:$(cat port)/v1"
asked() { wc -l <log.jsonl; }
JUDGE="judge corpus.h5 --depth 5 --model m --base-url $URL --max-retries 0 --max-failures 50% --quiet"
unlat() { sed 's/"latency_ms":[0-9.e+-]*//' "$1/judgments.jsonl" >"$1.unlat"; }
same_judge() { # DIR: its outputs against one/
  for f in qrels.txt agreement.csv; do cmp -s "one/$f" "$1/$f" || { bad "$1/$f differs from the one-process judge"; return; }; done
  unlat one && unlat "$1"
  if cmp -s one.unlat "$1.unlat"; then ok "$1: qrels.txt, agreement.csv and judgments.jsonl (but latency_ms) as one process"
  else bad "$1/judgments.jsonl differs from the one-process judge"; diff one.unlat "$1.unlat" | head -4; fi
}
timeout "$LIMIT" "$SERIAL/ragsweep" $JUDGE -o one >one.stdout 2>one.stderr || { echo "test-mpi: one-process judge failed:" >&2; cat one.stderr >&2; exit 1; }
pairs=$(asked)
for p in $RANKS; do
  before=$(asked)
  timeout "$LIMIT" $MPIRUN -np "$p" "$MPI/ragsweep" $JUDGE -o "np$p" >"np$p.stdout" 2>"np$p.stderr" && rc=0 || rc=$?
  if [ "$rc" = 0 ] && [ $(($(asked) - before)) = "$pairs" ] && [ -z "$(ls np$p | grep rank)" ]; then same_judge "np$p"
  else bad "judge np$p: exit $rc, $(($(asked) - before)) requests for $pairs pairs, files: $(ls np$p | tr '\n' ' ')"; cat "np$p.stderr"; fi
done
# Again at 3 ranks into np2: only the failed requests (HTTP 500) are asked
# again, as one process asks them.
before=$(asked)
timeout "$LIMIT" "$SERIAL/ragsweep" $JUDGE -o one >/dev/null 2>&1 || true
again=$(($(asked) - before))
before=$(asked)
timeout "$LIMIT" $MPIRUN -np 3 "$MPI/ragsweep" $JUDGE -o np2 >/dev/null 2>&1 || true
if [ $(($(asked) - before)) = "$again" ]; then ok "judge again at 3 ranks: $again requests, as one process"
else bad "judge again at 3 ranks: $(($(asked) - before)) requests, one process asks $again"; fi
# A killed job's rank cache is merged first: nothing it holds is asked again.
timeout "$LIMIT" "$SERIAL/ragsweep" $JUDGE -o part --shard 0/2 >/dev/null 2>&1
mkdir -p left && cp part/cache.sqlite left/cache.sqlite.rank0
held=$("$SERIAL/ragsweep" cache stats left/cache.sqlite.rank0 | sed -n '1s/^.*: \([0-9]*\) entries.*/\1/p')
before=$(asked)
timeout "$LIMIT" $MPIRUN -np 2 "$MPI/ragsweep" $JUDGE -o left >left.stdout 2>left.stderr && rc=0 || rc=$?
if [ "$rc" = 0 ] && [ ! -e left/cache.sqlite.rank0 ] && [ $(($(asked) - before)) = $((pairs - held)) ]; then
  ok "judge after a kill: the leftover rank cache ($held replies) merged and removed, $((pairs - held)) asked"
else bad "judge after a kill: exit $rc, $(($(asked) - before)) asked, expected $((pairs - held))"; cat left.stderr; fi
cd "$WORK"

# Commands that do not split refuse more than one rank.
run_case np2 check $MPIRUN -np 2 "$MPI/ragsweep" check "$WORK/c.h5"
if [ "$(cat np2/check.rc)" = 1 ] && grep -q "does not split its work" np2/check.stderr; then ok "np2: check refused"
else bad "np2: check: exit $(cat np2/check.rc)"; cat np2/check.stderr; fi

echo "test-mpi: $pass passed, $fail failed"
[ "$fail" = 0 ]
