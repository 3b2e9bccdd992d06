#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A strict checker of Prometheus' text exposition format (version 0.0.4),
for 'hdrstrip stats --prometheus', as node_exporter's textfile collector
reads it. Rules checked:

  - lines end in LF, the input ends in LF, no CR, valid UTF-8;
  - '# HELP name text' and '# TYPE name type' at most once per family, both
    before the family's first sample; HELP escapes only \\\\ and \\n; TYPE is
    counter, gauge, histogram, summary or untyped; other '#' lines are
    comments;
  - metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
    [a-zA-Z_][a-zA-Z0-9_]* and do not start with '__', no label twice;
  - label values are double-quoted with only \\\\, \\" and \\n escaped;
  - a value parses as a float (NaN, +Inf, -Inf allowed), an optional
    timestamp as an integer (here refused: the textfile collector rejects
    them);
  - a family's samples are contiguous; no two samples share name and labels;
  - counters: the family name ends in _total (promtool's rule), samples are
    the family name, values are finite and not negative; histogram and
    summary samples carry their suffixes;
  - every family has HELP and TYPE (what promtool's linter asks for).

Usage: promcheck.py [--json] [FILE]   (standard input by default), or
promcheck.py --self-test to check the checker on inputs it must refuse. Prints the
families as "name type samples" lines; exit 1 with every problem listed.
With --json, prints {name: {"type": t, "samples": [[labels, value], ...]}}.
"""
import json
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count", "")}


class Problems(list):
    def add(self, lineno, msg):
        self.append(f"line {lineno}: {msg}")


def parse_float(s):
    if s in ("NaN", "+Inf", "-Inf", "Inf", "+inf", "-inf", "inf", "nan"):
        return float(s.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", s):
        raise ValueError(s)
    return float(s)


def unescape_help(text, lineno, probs):
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 < len(text) and text[i + 1] in "\\n":
                out.append("\\" if text[i + 1] == "\\" else "\n")
                i += 2
                continue
            probs.add(lineno, f"bad escape in HELP text: {text[i:i + 2]!r}")
        out.append(c)
        i += 1
    return "".join(out)


def parse_labels(s, i, lineno, probs):
    """Parse '{a="b",...}' from s[i] == '{'; return (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(s) and s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            probs.add(lineno, f"bad label name at column {i + 1}")
            return labels, None
        name = m.group(0)
        if name.startswith("__"):
            probs.add(lineno, f"label name {name!r} is reserved (starts with __)")
        if name in labels:
            probs.add(lineno, f"label {name!r} given twice")
        i = m.end()
        if s[i:i + 2] != '="':
            probs.add(lineno, f"expected =\" after label {name!r}")
            return labels, None
        i += 2
        val = []
        while True:
            if i >= len(s):
                probs.add(lineno, f"unterminated value of label {name!r}")
                return labels, None
            c = s[i]
            if c == "\\":
                nxt = s[i + 1:i + 2]
                if nxt not in ('\\', '"', "n"):
                    probs.add(lineno, f"bad escape {s[i:i + 2]!r} in label {name!r}")
                val.append({"\\": "\\", '"': '"', "n": "\n"}.get(nxt, nxt))
                i += 2
                continue
            if c == '"':
                i += 1
                break
            val.append(c)
            i += 1
        labels[name] = "".join(val)
        if i < len(s) and s[i] == ",":
            i += 1
        elif i < len(s) and s[i] != "}":
            probs.add(lineno, f"expected , or }} after label {name!r}")
            return labels, None


def family_of(sample, families):
    """The declared family a sample name belongs to."""
    if sample in families:
        return sample
    for suf in ("_bucket", "_sum", "_count"):
        if sample.endswith(suf) and sample[: -len(suf)] in families:
            return sample[: -len(suf)]
    return sample


def check(data):
    probs = Problems()
    families = {}  # name -> {"type", "help", "samples", "closed"}
    order = []
    seen = set()
    current = None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        probs.add(0, f"not UTF-8: {e}")
        return families, probs
    if text and not text.endswith("\n"):
        probs.add(text.count("\n") + 1, "the last line does not end in LF")
    if "\r" in text:
        probs.add(0, "CR in the input (lines end in LF only)")
    for lineno, line in enumerate(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"), 1):
        if line == "":
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 2 and parts[1] in ("HELP", "TYPE"):
                if len(parts) < 3 or not NAME.fullmatch(parts[2]):
                    probs.add(lineno, f"{parts[1]} without a valid metric name")
                    continue
                name, rest = parts[2], parts[3] if len(parts) > 3 else ""
                fam = families.setdefault(name, {"type": None, "help": None, "samples": [], "closed": False})
                if name not in order:
                    order.append(name)
                if fam["samples"]:
                    probs.add(lineno, f"{parts[1]} of {name} after its samples")
                if parts[1] == "HELP":
                    if fam["help"] is not None:
                        probs.add(lineno, f"second HELP for {name}")
                    fam["help"] = unescape_help(rest, lineno, probs)
                else:
                    if fam["type"] is not None:
                        probs.add(lineno, f"second TYPE for {name}")
                    if rest not in TYPES:
                        probs.add(lineno, f"unknown type {rest!r} for {name}")
                    fam["type"] = rest
            continue
        m = NAME.match(line)
        if not m:
            probs.add(lineno, f"bad metric name in {line[:60]!r}")
            continue
        sname, i, labels = m.group(0), m.end(), {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, lineno, probs)
            if i is None:
                continue
        rest = line[i:]
        if not rest.startswith(" "):
            probs.add(lineno, "expected a space before the value")
            continue
        fields = rest.split()
        if len(fields) not in (1, 2):
            probs.add(lineno, f"expected a value and an optional timestamp, got {rest!r}")
            continue
        try:
            value = parse_float(fields[0])
        except ValueError:
            probs.add(lineno, f"value {fields[0]!r} is not a float")
            continue
        if len(fields) == 2:
            if not re.fullmatch(r"-?\d+", fields[1]):
                probs.add(lineno, f"timestamp {fields[1]!r} is not an integer")
            probs.add(lineno, "a timestamp (node_exporter's textfile collector refuses them)")
        fname = family_of(sname, families)
        fam = families.setdefault(fname, {"type": None, "help": None, "samples": [], "closed": False})
        if fname not in order:
            order.append(fname)
        if fam["closed"]:
            probs.add(lineno, f"samples of {fname} are not contiguous")
        if current is not None and current != fname:
            families[current]["closed"] = True
        current = fname
        key = (sname, tuple(sorted(labels.items())))
        if key in seen:
            probs.add(lineno, f"duplicate series {sname}{labels}")
        seen.add(key)
        t = fam["type"] or "untyped"
        if t == "counter":
            if sname != fname:
                probs.add(lineno, f"counter sample {sname} is not named as its family {fname}")
            if math.isnan(value) or value < 0 or math.isinf(value):
                probs.add(lineno, f"counter {sname} has value {fields[0]}")
        elif t in SUFFIXES and not any(sname == fname + s for s in SUFFIXES[t]):
            probs.add(lineno, f"{t} sample {sname} lacks its suffix")
        fam["samples"].append((labels, value))
    for name in order:
        fam = families[name]
        if fam["type"] is None:
            probs.add(0, f"{name}: no TYPE")
        if fam["help"] is None:
            probs.add(0, f"{name}: no HELP")
        elif not fam["help"].strip():
            probs.add(0, f"{name}: empty HELP")
        if fam["type"] == "counter" and not name.endswith("_total"):
            probs.add(0, f"counter {name} does not end in _total")
    return families, probs


# The checker must refuse what it claims to: (input, a piece of the message).
BAD = [
    (b"# HELP a_total x\n# TYPE a_total counter\na_total 1", "does not end in LF"),
    (b"# HELP a_total x\n# TYPE a_total counter\na_total 1\r\n", "CR"),
    (b"# HELP a_total x\n# TYPE a_total counter\n# TYPE a_total counter\na_total 1\n", "second TYPE"),
    (b"# HELP a_total x\n# TYPE a_total counter\na_total 1\n# HELP a_total y\n", "after its samples"),
    (b"# HELP a x\n# TYPE a counter\na 1\n", "does not end in _total"),
    (b"# HELP a_total x\n# TYPE a_total counter\na_total -1\n", "has value"),
    (b"# HELP a_total x\n# TYPE a_total counter\na_total 1 1700000000\n", "timestamp"),
    (b"# HELP a x\n# TYPE a gauge\na{1x=\"v\"} 1\n", "bad label name"),
    (b"# HELP a x\n# TYPE a gauge\na{x=\"v\\q\"} 1\n", "bad escape"),
    (b"# HELP a x\n# TYPE a gauge\na{x=\"v\",x=\"w\"} 1\n", "given twice"),
    (b"# HELP a x\n# TYPE a gauge\na{__x=\"v\"} 1\n", "reserved"),
    (b"# HELP a x\n# TYPE a gauge\na{x=\"v\"} 1\na{x=\"v\"} 2\n", "duplicate series"),
    (b"# HELP a x\n# TYPE a gauge\n# HELP b x\n# TYPE b gauge\na 1\nb 1\na{l=\"2\"} 1\n",
     "not contiguous"),
    (b"# HELP a x\n# TYPE a gauge\na one\n", "not a float"),
    (b"# TYPE a gauge\na 1\n", "no HELP"),
    (b"# HELP a x\na 1\n", "no TYPE"),
    (b"# HELP a x\n# TYPE a meter\na 1\n", "unknown type"),
    (b"# HELP a bad \\q escape\n# TYPE a gauge\na 1\n", "bad escape in HELP"),
    (b"# HELP a x\n# TYPE a gauge\n9a 1\n", "bad metric name"),
    (b"# HELP a x\n# TYPE a gauge\na{x=\"v} 1\n", "unterminated"),
]
GOOD = (b"# HELP a_total A \\\\ help\\nwith escapes.\n# TYPE a_total counter\n"
        b"a_total{dev=\"e\\\"q\\\\b\\nn\"} 3\na_total{dev=\"f\"} 0\n\n"
        b"# a comment\n# HELP g x\n# TYPE g gauge\ng NaN\ng{a=\"1\"} -Inf\ng{a=\"2\"} 1.5e3\n")


def self_test():
    failed = 0
    for data, want in BAD:
        _, probs = check(data)
        if not any(want in p for p in probs):
            print(f"promcheck self-test: accepted or misread {data!r}: {list(probs)}", file=sys.stderr)
            failed += 1
    fams, probs = check(GOOD)
    if probs or fams["a_total"]["samples"][0][0]["dev"] != 'e"q\\b\nn':
        print(f"promcheck self-test: refused or misread the good input: {list(probs)}", file=sys.stderr)
        failed += 1
    print(f"promcheck self-test: {len(BAD) + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    args = [a for a in sys.argv[1:] if a != "--json"]
    data = open(args[0], "rb").read() if args else sys.stdin.buffer.read()
    families, probs = check(data)
    if probs:
        for p in probs:
            print(f"promcheck: {p}", file=sys.stderr)
        return 1
    if "--json" in sys.argv:
        print(json.dumps({n: {"type": f["type"], "samples": f["samples"]} for n, f in families.items()}))
    else:
        for n, f in families.items():
            print(n, f["type"], len(f["samples"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
