"""clauditor's own verdicts for the differential test (tests/clauditor_differential.rs).

Reads a JSON list of cases, each {"output": str, "assertions": [dict, ...]}, and prints a
JSON list with, per case, one entry per assertion: true or false as
clauditor.assertions.run_assertions decides it, or {"error": "..."} when clauditor raises
(an invalid regular expression, say). Each assertion runs alone, so one that raises leaves
the others' verdicts intact.
"""

import json
import sys

from clauditor.assertions import run_assertions


def verdict(output, assertion):
    try:
        result = run_assertions(output, [assertion]).results[0]
        return bool(result.passed)
    except Exception as e:  # noqa: BLE001 - any failure is a verdict to compare
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    out = [[verdict(c["output"], a) for a in c["assertions"]] for c in cases]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
