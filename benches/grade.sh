#!/usr/bin/env bash
# `assay grade --output` on a captured output with the clauditor L1 set, side by side with
# clauditor (`clauditor validate --output`, its L1 on a captured output) and promptfoo (the
# same nine checks through its `echo` provider) on the same output. Goal: assay ≤ 30 ms.
#
#   bash benches/grade.sh            # installs clauditor-eval and promptfoo under $TOOLS once
#
# Needs hyperfine, python3 (venv) and npm. Figures go in docs/benchmarks.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
TOOLS="${ASSAY_BENCH_TOOLS:-$HOME/.cache/assay-bench}"
RUNS="${RUNS:-30}"

mkdir -p "$TOOLS"
if [ ! -x "$TOOLS/venv/bin/clauditor" ]; then
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q clauditor-eval
fi
if [ ! -x "$TOOLS/pf/node_modules/.bin/promptfoo" ]; then
  mkdir -p "$TOOLS/pf"
  (cd "$TOOLS/pf" && npm init -y >/dev/null && npm install --silent promptfoo)
fi
(cd "$repo" && cargo build --release --quiet --bin assay)

export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR="$TOOLS/pfcfg"
spec=.claude/commands/summarize-csv.eval.json
assay="$repo/target/release/assay grade $spec --output output.md"
clauditor="$TOOLS/venv/bin/clauditor validate .claude/commands/summarize-csv.md --output output.md"
promptfoo="$TOOLS/pf/node_modules/.bin/promptfoo eval -c promptfooconfig.yaml --no-cache --no-write --no-table"

# Like for like: all three pass this output, and all three fail a bad one.
bad="$(mktemp -d)"
cp -r "$here/grade/." "$bad/"
printf 'Error: no data\n' > "$bad/output.md"
for dir in "$here/grade" "$bad"; do
  for tool in assay clauditor promptfoo; do
    if (cd "$dir" && ${!tool} >/dev/null 2>&1); then got=pass; else got=fail; fi
    want=pass; [ "$dir" = "$bad" ] && want=fail
    if [ "$got" != "$want" ]; then
      echo "$tool: expected $want on $dir/output.md, got $got" >&2
      exit 1
    fi
  done
done
rm -rf "$bad"

cd "$here/grade"
hyperfine -N --warmup 3 --runs "$RUNS" --export-json /tmp/assay-bench-grade.json \
  -n assay "$assay" -n clauditor "$clauditor" -n promptfoo "$promptfoo"

python3 - <<'PY'
import json
r = {x["command"]: x for x in json.load(open("/tmp/assay-bench-grade.json"))["results"]}
a = r["assay"]["median"]
print(f"assay median {a*1000:.1f} ms (goal <= 30 ms: {'met' if a <= 0.030 else 'NOT met'})")
for other in ("clauditor", "promptfoo"):
    m = r[other]["median"]
    print(f"{other} median {m*1000:.0f} ms: assay takes {a/m:.4f}x its time ({m/a:.0f}x faster)")
PY
