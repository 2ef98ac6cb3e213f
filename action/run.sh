#!/usr/bin/env bash
# The GitHub Action's (action.yml) `assay doctor` and `assay run` steps.
#
#   run.sh doctor   # assay doctor [--shard K/N] [PATHS…]
#   run.sh run      # assay run [--shard K/N] --reporter github,junit,markdown --output-dir DIR ARGS… [-- PATHS…]
#
# The action's inputs arrive as environment variables, never as text of the script (GitHub's
# rule against script injection): INPUT_PATHS, INPUT_ARGS, INPUT_SHARD, INPUT_SHARDS,
# INPUT_OUTPUT_DIR, INPUT_ARTIFACT_NAME. INPUT_PATHS and INPUT_ARGS are split into words as a
# shell splits them (quotes keep spaces, a backslash escapes) by xargs: nothing in them is
# expanded or run — `$(…)`, backquotes, `;`, `|` and globs reach assay as plain text.
#
# `run` writes `exit-code`, `run-dir` (absolute) and `artifact-name` to $GITHUB_OUTPUT, then
# exits with assay's exit code (0 passed, 1 a case failed, 2 a broken suite, 3 infrastructure,
# 143 cancelled). A bad input exits 2 with an `::error` before assay starts.
set -euo pipefail

# shellcheck source=action/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Splits $2 into words, as a shell would but without expanding anything, into the array named $1.
split_words() {
  local -n into=$1
  local list
  into=()
  list=$(mktemp)
  if ! printf '%s' "$2" | xargs -r printf '%s\0' >"$list" 2>/dev/null; then
    rm -f "$list"
    fail "input $3 is not a list of words (an unmatched quote?): $2" 2
  fi
  readarray -d '' -t into <"$list"
  rm -f "$list"
}

one_line() {
  case $2 in
    *$'\n'* | *$'\r'*) fail "input $1 must be one line" 2 ;;
  esac
}

mode=${1:-}
case $mode in
  doctor | run) ;;
  *) fail "usage: run.sh doctor|run (got '${mode}')" 2 ;;
esac

paths=()
split_words paths "${INPUT_PATHS-.}" paths
args=()
split_words args "${INPUT_ARGS:-}" args

shard=${INPUT_SHARD:-}
shards=${INPUT_SHARDS:-}
shard_args=()
if [ -n "$shard" ] || [ -n "$shards" ]; then
  if ! [[ $shard =~ ^[1-9][0-9]{0,5}$ && $shards =~ ^[1-9][0-9]{0,5}$ ]]; then
    fail "inputs shard and shards must both be set, to whole numbers (shard K of N), got shard '$shard', shards '$shards'" 2
  fi
  if [ "$shard" -gt "$shards" ]; then
    fail "input shard ($shard) is greater than shards ($shards)" 2
  fi
  shard_args=(--shard "$shard/$shards")
fi

path_args=()
if [ ${#paths[@]} -gt 0 ]; then
  path_args=(-- "${paths[@]}")
fi

if [ "$mode" = doctor ]; then
  # Only what doctor takes: `args` may hold options of `assay run` alone (--reporter, -j, …);
  # the run itself still checks what they ask for, and exits 3 with the fix.
  set -x
  exec assay doctor "${shard_args[@]}" "${path_args[@]}"
fi

output_dir=${INPUT_OUTPUT_DIR:-assay-run}
one_line output-dir "$output_dir"
case $output_dir in
  /*) run_dir=$output_dir ;;
  *) run_dir="$PWD/$output_dir" ;;
esac

artifact_name=${INPUT_ARTIFACT_NAME:-}
if [ -z "$artifact_name" ]; then
  if [ -n "$shard" ]; then artifact_name="assay-shard-$shard"; else artifact_name=assay-run; fi
fi
one_line artifact-name "$artifact_name"

set +e
(
  set -x
  assay run "${shard_args[@]}" --reporter github,junit,markdown --output-dir "$output_dir" \
    "${args[@]}" "${path_args[@]}"
)
code=$?
set -e

{
  echo "exit-code=$code"
  echo "run-dir=$run_dir"
  echo "artifact-name=$artifact_name"
} >>"${GITHUB_OUTPUT:-/dev/null}"
exit "$code"
