#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What 'hdrstrip status' says against what the kernel has attached.

    faults.py dev NS DEV HDRSTRIP      an interface in network namespace NS
    faults.py cgroup CG HDRSTRIP       proxy mode on cgroup directory CG

Prints one line, "LIST HOOKS PROG_IDS MAP_IDS" (the list file status
names, the hooks, the programs' ids and their maps', comma-separated;
"- - - -" when nothing is attached), and exits 0 when status and the kernel
agree; else prints why and exits 1.
"""
import json
import subprocess
import sys


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def status(argv):
    """status --json of one device: (list, {hook: prog_id}) or None."""
    rc, out = run(argv + ["--json"])
    if rc == 1 and "not attached" in out:
        return None
    if rc != 0:
        sys.exit("status failed (exit %d): %s" % (rc, out.strip()))
    st = json.loads(out)[0]
    return st["list"], {h["hook"]: h["prog_id"] for h in st["hooks"]}


def kernel_dev(ns, dev):
    """{hook: prog_id} of the programs attached to DEV (XDP: whatever is
    there, a dispatcher included; TC: hdrstrip's filters)."""
    rc, out = run(["nsenter", "--net=/run/netns/" + ns, "bpftool", "-j", "net", "show",
                   "dev", dev])
    if rc != 0:
        sys.exit("bpftool net show dev %s failed: %s" % (dev, out.strip()))
    hooks = {}
    for part in json.loads(out):
        for x in part.get("xdp", []):
            hooks["xdp"] = x.get("id")
        for t in part.get("tc", []):
            if not t.get("name", "").startswith("hdrstrip_tc"):
                continue
            hook = "tc-ingress" if t["kind"].endswith("ingress") else "tc-egress"
            if hook in hooks:
                sys.exit("two hdrstrip filters on %s %s" % (dev, hook))
            hooks[hook] = t["id"]
    return hooks


def kernel_cgroup(cg):
    rc, out = run(["bpftool", "-j", "cgroup", "show", cg])
    if rc != 0:
        sys.exit("bpftool cgroup show %s failed: %s" % (cg, out.strip()))
    ids = [p["id"] for p in json.loads(out.strip() or "[]") if p.get("name") == "hdrstrip_sockops"]
    if len(ids) > 1:
        sys.exit("%d hdrstrip sockops programs on %s" % (len(ids), cg))
    return {"cgroup": ids[0]} if ids else {}


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "dev":
        ns, dev, cli = sys.argv[2:]
        st = status(["nsenter", "--net=/run/netns/" + ns, cli, "status", dev])
        kern = kernel_dev(ns, dev)
    elif len(sys.argv) == 4 and sys.argv[1] == "cgroup":
        cg, cli = sys.argv[2:]
        st = status([cli, "status", "--cgroup", cg])
        kern = kernel_cgroup(cg)
    else:
        sys.exit(__doc__)
    hooks = st[1] if st else {}
    if set(hooks) != set(kern):
        sys.exit("status shows hooks %s, the kernel %s" % (sorted(hooks), sorted(kern)))
    for h, pid in hooks.items():
        # A multi-program XDP dispatcher is the kernel's XDP program, with
        # hdrstrip's behind it: its id differs.
        if kern[h] != pid and h != "xdp":
            sys.exit("status shows %s program %d, the kernel %d" % (h, pid, kern[h]))
    if not st:
        print("- - - -")
        return
    progs = sorted(set(hooks.values()) | set(kern.values()))
    maps = set()
    for pid in progs:
        rc, out = run(["bpftool", "-j", "prog", "show", "id", str(pid)])
        if rc == 0:
            maps.update(json.loads(out).get("map_ids", []))
    print(st[0], ",".join(sorted(hooks)), ",".join(map(str, progs)),
          ",".join(map(str, sorted(maps))) or "-")


if __name__ == "__main__":
    main()
