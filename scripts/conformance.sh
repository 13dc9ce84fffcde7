#!/bin/sh
# Runs every command of ../shared/conformance/*/expected/COMMANDS.tsv through
# ragsweep's trec_eval and compares stdout (byte for byte) and the exit code.
# usage: scripts/conformance.sh [BINARY] [CONFORMANCE_DIR]
set -u
BIN=$(cd "$(dirname "${1:-build/ragsweep}")" && pwd)/$(basename "${1:-build/ragsweep}")
DIR=${2:-$(dirname "$0")/../../shared/conformance}
pass=0 fail=0
tmp=$(mktemp)
for tsv in "$DIR"/*/expected/COMMANDS.tsv; do
  ds=$(dirname "$(dirname "$tsv")")
  while IFS="$(printf '\t')" read -r out code cmd; do
    [ "$out" = output ] && continue
    args=${cmd#trec_eval }
    # shellcheck disable=SC2086
    (cd "$ds" && "$BIN" trec_eval $args >"$tmp" 2>/dev/null)
    got=$?
    if [ "$got" = "$code" ] && cmp -s "$tmp" "$ds/expected/$out"; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "FAIL $(basename "$ds")/$out (exit $got, want $code): $(diff "$tmp" "$ds/expected/$out" | head -3 | tr '\n' ' ')"
    fi
  done <"$tsv"
done
rm -f "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
