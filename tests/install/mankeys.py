#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Print the keys a JSON object has, as hdrstrip(8) lists them: the tags of
the .TP list after the first line that contains MARKER ("with these keys, in
this order"), in order, one a line. A tag in italics (.I) is a placeholder
(e.g. "counters"), printed as such. Tests compare it with real output.

  mankeys.py MAN MARKER
"""
import shlex
import sys


def tag_words(line):
    """The key names of one .TP tag line (.B x, .I x, .BR a ", " b ...)."""
    macro, _, rest = line.partition(" ")
    words = shlex.split(rest.replace("\\-", "-"))
    if macro in (".B", ".I"):
        return words[:1]
    if macro in (".BR", ".IR"):
        # Alternating fonts: the keys, then the separators between them.
        return [w for i, w in enumerate(words) if i % 2 == 0]
    return []


def main():
    man, marker = sys.argv[1], sys.argv[2]
    lines = open(man, encoding="utf-8").read().splitlines()
    start = next((i for i, l in enumerate(lines) if marker in l), None)
    if start is None:
        sys.exit("%s: no line with %r" % (man, marker))
    keys, tag = [], False
    for line in lines[start + 1:]:
        if line.startswith(".RE") or line.startswith(".SS") or line.startswith(".SH"):
            break
        if tag:
            keys += tag_words(line)
        tag = line.startswith(".TP")
    if not keys:
        sys.exit("%s: no keys listed after %r" % (man, marker))
    print("\n".join(keys))


if __name__ == "__main__":
    main()
