#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check the JSON lines of 'hdrstrip events --json' (read from stdin).

Every line must be one JSON object with the fields hdrstrip(8) documents;
each --want KEY=VALUE must hold for every event (numbers compared as
numbers, "null" as JSON null); --count N (or --min/--max) bounds how many
there are. Prints "events N" and exits 1 with the reason when a check fails.
"""
import argparse
import json
import sys

FIELDS = ("time", "dev", "hook", "direction", "family", "src", "sport", "dst", "dport", "name",
          "received", "rule", "generation", "action", "reason")


def parse_want(s):
    key, _, value = s.partition("=")
    if value == "null":
        return key, None
    try:
        return key, int(value)
    except ValueError:
        return key, value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--want", action="append", default=[], type=parse_want)
    ap.add_argument("--count", type=int)
    ap.add_argument("--min", type=int, default=0)
    ap.add_argument("--max", type=int)
    a = ap.parse_args()
    events = []
    for n, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError as e:
            sys.exit("line %d is not JSON (%s): %r" % (n, e, line[:200]))
        missing = [f for f in FIELDS if f not in ev]
        if missing:
            sys.exit("line %d lacks %s: %r" % (n, ", ".join(missing), line[:300]))
        for f in ("sport", "dport", "rule", "generation", "family"):
            if not isinstance(ev[f], int):
                sys.exit("line %d: %s is not a number: %r" % (n, f, ev[f]))
        for key, value in a.want:
            if ev.get(key) != value:
                sys.exit("line %d: %s is %r, expected %r: %s" % (n, key, ev.get(key), value,
                                                               line.strip()[:300]))
        events.append(ev)
    if a.count is not None and len(events) != a.count:
        sys.exit("%d events, expected %d" % (len(events), a.count))
    if len(events) < a.min:
        sys.exit("%d events, expected at least %d" % (len(events), a.min))
    if a.max is not None and len(events) > a.max:
        sys.exit("%d events, expected at most %d" % (len(events), a.max))
    print("events %d" % len(events))


if __name__ == "__main__":
    main()
