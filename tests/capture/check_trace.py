#!/usr/bin/env python3
"""Checks a Chrome Trace Event file written by recorder (record::Timing): it validates against
trace_event.schema.json (Debian's python3-jsonschema) and its duration events nest perfectly on
each (pid, tid), as Perfetto requires: sorted by (ts, -dur), every event ends inside the event
that encloses its start. Also: every run holds the same module calls (each key once) and the
same ops, in the same order.

    check_trace.py trace.json [module spans per run [op spans per run [backward spans per run]]]
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
    # In integer nanoseconds: ts and dur carry three decimals, and float sums would round.
    events.sort(key=lambda e: (round(e["ts"] * 1000), -round(e["dur"] * 1000)))
    stack = []
    for e in events:
        start = round(e["ts"] * 1000)
        end = start + round(e["dur"] * 1000)
        while stack and stack[-1][1] <= start:
            stack.pop()
        if stack and end > stack[-1][1]:
            errors.append(f"{e['name']} [{start}, {end}] partially overlaps "
                          f"{stack[-1][2]} (must nest)")
        stack.append((start, end, e["name"]))

runs = {}
for e in trace["traceEvents"]:
    if e["ph"] == "X":
        runs.setdefault(e["args"]["run"],
                        {"user_annotation": [], "cpu_op": [], "backward": []})[e["cat"]].append(
            e["name"])
first = None
for r, events in sorted(runs.items()):
    calls, ops = events["user_annotation"], events["cpu_op"]
    if len(set(calls)) != len(calls):
        errors.append(f"run {r}: a module key appears twice")
    if first is None:
        first = events
    elif events != first:
        errors.append(f"run {r}: other module calls or ops than run 0")
if len(sys.argv) > 2 and first is not None and len(first["user_annotation"]) != int(sys.argv[2]):
    errors.append(f"{len(first['user_annotation'])} module spans per run, expected {sys.argv[2]}")
if len(sys.argv) > 3 and first is not None and len(first["cpu_op"]) != int(sys.argv[3]):
    errors.append(f"{len(first['cpu_op'])} op spans per run, expected {sys.argv[3]}")
if len(sys.argv) > 4 and first is not None and len(first["backward"]) != int(sys.argv[4]):
    errors.append(f"{len(first['backward'])} backward spans per run, expected {sys.argv[4]}")

if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"{sys.argv[1]}: valid, {sum(len(v) for v in by_thread.values())} events in "
      f"{len(runs)} runs nest perfectly")
