"""An assay check type written in Python, built into a WebAssembly component with
componentize-py against wit/0.1.0's `assertion-plugin` world.

`py-word-limit`: the output has at most `max` words (and at least `min`, default 0).
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types


def _bounds(config: str) -> tuple[int, int]:
    try:
        c = json.loads(config)
    except ValueError as e:
        raise Err(f"the configuration is not JSON: {e}")
    unknown = set(c) - {"min", "max"}
    if unknown:
        raise Err(f"unknown key(s): {', '.join(sorted(unknown))} (known: min, max)")
    if "max" not in c:
        raise Err("`max` is required: the most words allowed")
    lo, hi = c.get("min", 0), c["max"]
    if not (isinstance(lo, int) and isinstance(hi, int)) or lo < 0 or hi < lo:
        raise Err("`min` and `max` must be whole numbers with 0 <= min <= max")
    return lo, hi


class Assertion(exports.Assertion):
    def check_types(self) -> list[types.CheckType]:
        schema = {"type": "object", "required": ["max"],
                  "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}}
        return [types.CheckType(name="py-word-limit",
                                summary="the output has min..max words (Python plugin)",
                                config_schema=json.dumps(schema))]

    def validate(self, check_type: str, config: str) -> None:
        _bounds(config)

    def evaluate(self, check_type: str, config: str, run) -> types.Verdict:
        lo, hi = _bounds(config)
        n = len(run.output().split())
        return types.Verdict(passed=lo <= n <= hi,
                             message=f"the output has {n} words, {lo}-{hi} wanted",
                             evidence=None)
