#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check the PromQL of deploy/grafana's dashboard and deploy/prometheus'
rules against the metric families hdrstrip emits.

  check_queries.py --dashboard JSON --rules YAML [--names FILE] [--promql OUT]

--names FILE: the families a real scrape had (one a line, from the
exposition's '# TYPE' lines): every hdrstrip_* name a query or a template
variable uses must be one of them. --promql OUT writes every dashboard
query, Grafana's variables replaced, as a rules file for 'promtool check
rules' to parse. The dashboard must show what operators watch: masked,
dropped, rejected and observed rates, the normaliser's drops by reason,
untracked, events dropped and the agent's reload failures.
"""
import argparse
import json
import re
import sys

import yaml

NAME = re.compile(r"\bhdrstrip_[a-z0-9_]+\b")
# What the dashboard has to show (issue 36), by the families it reads.
WANTED = {
    "masked": ["hdrstrip_headers_masked_total", "hdrstrip_response_headers_masked_total",
               "hdrstrip_headers_removed_total"],
    "dropped": ["hdrstrip_packets_dropped_total", "hdrstrip_retransmits_dropped_total"],
    "rejected": ["hdrstrip_packets_rejected_total"],
    "observed": ["hdrstrip_headers_observed_total", "hdrstrip_packets_observed_total"],
    "normaliser drops by reason": ["hdrstrip_bad_checksum_total",
                                   "hdrstrip_retransmit_mismatch_total",
                                   "hdrstrip_retransmit_unverified_total",
                                   "hdrstrip_malformed_total"],
    "untracked": ["hdrstrip_untracked_total"],
    "events dropped": ["hdrstrip_events_dropped_total"],
    "agent reload failures": ["hdrstrip_agent_reload_failures_total"],
}


def dashboard_queries(dash):
    """(where, expr) of every panel target and query variable."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append(("panel %r" % p.get("title"), t["expr"]))
            walk(p.get("panels", []))
    walk(dash["panels"])
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if v.get("type") == "query":
            out.append(("variable %r" % v["name"], q["query"] if isinstance(q, dict) else q))
    return out


def grafana_to_promql(expr):
    """A Grafana query as Prometheus would get it."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    return re.sub(r"\$\{?[a-z_]+\}?", ".*", expr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dashboard", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--names")
    ap.add_argument("--promql")
    a = ap.parse_args()
    dash = json.load(open(a.dashboard))
    rules = yaml.safe_load(open(a.rules))
    queries = dashboard_queries(dash)
    rule_exprs = [("rule %r" % r.get("alert", r.get("record")), r["expr"])
                  for g in rules["groups"] for r in g["rules"]]
    bad = []
    for where, q in queries + rule_exprs:
        if not NAME.search(q):
            bad.append("%s reads no hdrstrip metric: %s" % (where, q))
    if a.names:
        names = {l.strip() for l in open(a.names) if l.strip()}
        for where, q in queries + rule_exprs:
            for n in sorted(set(NAME.findall(q)) - names):
                bad.append("%s reads %s, which hdrstrip does not emit" % (where, n))
    used = {n for _, q in queries if not q.startswith("label_values") for n in NAME.findall(q)}
    for what, fams in WANTED.items():
        for f in fams:
            if f not in used:
                bad.append("the dashboard shows no %s: no panel reads %s" % (what, f))
    for p in dash["panels"]:
        if p["type"] != "row" and p.get("datasource", {}).get("uid") != "${datasource}":
            bad.append("panel %r does not use the dashboard's datasource variable" % p["title"])
    if a.promql:
        doc = {"groups": [{"name": "dashboard", "rules": [
            {"record": "hdrstrip_dashboard_query_%d" % i, "expr": grafana_to_promql(q)}
            for i, (_, q) in enumerate(queries) if not q.startswith("label_values")]}]}
        yaml.safe_dump(doc, open(a.promql, "w"))
    if bad:
        sys.exit("\n".join(bad))
    print("queries: %d in the dashboard, %d rules; every metric is one hdrstrip emits%s"
          % (len(queries), len(rule_exprs), "" if a.names else " (names not checked)"))


if __name__ == "__main__":
    main()
