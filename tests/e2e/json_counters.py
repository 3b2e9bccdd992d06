#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Print hdrstrip's counters as "name value" lines, one per counter.

    json_counters.py stats [DEV] < output of 'hdrstrip stats [DEV] --json'
    json_counters.py bpftool     < output of 'bpftool -j map dump pinned .../counters'

'stats': the object may be the counters themselves or hold them under the
device name (or a list of per-device objects with "dev"/"ifname"); nested
objects such as per_header are printed as per_header.NAME lines.
'bpftool': the per-CPU values of key 0 are summed field by field.
"""
import json
import sys


def flatten(obj, prefix=""):
    for k, v in obj.items():
        if isinstance(v, dict):
            yield from flatten(v, prefix + k + ".")
        elif isinstance(v, bool):
            continue
        elif isinstance(v, (int, float)):
            yield prefix + k, int(v)


def pick_dev(doc, dev):
    """Find the counters of @dev in a stats document."""
    if isinstance(doc, list):
        for d in doc:
            if isinstance(d, dict) and dev in (d.get("dev"), d.get("ifname"), d.get("device"),
                                               d.get("interface")):
                return d
        return doc[0] if len(doc) == 1 else None
    if isinstance(doc, dict):
        if "packets" in doc or "http_requests" in doc:
            return doc
        for key in (dev, "devices", "interfaces"):
            if key in doc:
                return pick_dev(doc[key], dev)
        if len(doc) == 1:
            return pick_dev(next(iter(doc.values())), dev)
    return None


def from_stats(dev):
    doc = json.load(sys.stdin)
    d = pick_dev(doc, dev)
    if d is None:
        print("json_counters: no counters for %r in: %s" % (dev, json.dumps(doc)[:300]),
              file=sys.stderr)
        return 1
    if "counters" in d and isinstance(d["counters"], dict):
        extra = {k: v for k, v in d.items() if k != "counters"}
        d = dict(d["counters"], **extra)
    for k, v in flatten(d):
        print(k, v)
    return 0


def from_bpftool():
    doc = json.load(sys.stdin)
    total = {}
    for entry in doc:
        values = entry.get("formatted", entry).get("values", [])
        for per_cpu in values:
            v = per_cpu.get("value")
            if not isinstance(v, dict):
                print("json_counters: bpftool shows no field names (no BTF?)", file=sys.stderr)
                return 1
            for k, n in v.items():
                total[k] = total.get(k, 0) + int(n)
    for k in sorted(total):
        print(k, total[k])
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "stats":
        return from_stats(sys.argv[2] if len(sys.argv) > 2 else None)
    if len(sys.argv) >= 2 and sys.argv[1] == "bpftool":
        return from_bpftool()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
