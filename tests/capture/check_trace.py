#!/usr/bin/env python3
"""Checks a Chrome Trace Event file written by recorder (record::Timing): it validates against
trace_event.schema.json (Debian's python3-jsonschema) and its duration events nest perfectly on
each (pid, tid), as Perfetto requires: sorted by (ts, -dur), every event ends inside the event
that encloses its start. Also: every run holds the same module keys once each.

    check_trace.py trace.json [expected events per run]
"""
import json
import pathlib
import sys

import jsonschema

here = pathlib.Path(__file__).resolve().parent
trace = json.loads(pathlib.Path(sys.argv[1]).read_text())
schema = json.loads((here / "trace_event.schema.json").read_text())
jsonschema.validate(trace, schema)

errors = []
by_thread = {}
for e in trace["traceEvents"]:
    if e["ph"] == "X":
        by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
for key, events in by_thread.items():
    events.sort(key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in events:
        start, end = e["ts"], e["ts"] + e["dur"]
        while stack and stack[-1][1] <= start:
            stack.pop()
        if stack and end > stack[-1][1] + 1e-9:
            errors.append(f"{e['name']} [{start}, {end}] partially overlaps "
                          f"{stack[-1][2]} (must nest)")
        stack.append((start, end, e["name"]))

runs = {}
for e in trace["traceEvents"]:
    if e["ph"] == "X":
        runs.setdefault(e["args"]["run"], []).append(e["name"])
keys = None
for r, names in sorted(runs.items()):
    if len(set(names)) != len(names):
        errors.append(f"run {r}: a module key appears twice")
    if keys is None:
        keys = names
    elif names != keys:
        errors.append(f"run {r}: other module keys than run 0")
if len(sys.argv) > 2 and keys is not None and len(keys) != int(sys.argv[2]):
    errors.append(f"{len(keys)} events per run, expected {sys.argv[2]}")

if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"{sys.argv[1]}: valid, {sum(len(v) for v in by_thread.values())} events in "
      f"{len(runs)} runs nest perfectly")
