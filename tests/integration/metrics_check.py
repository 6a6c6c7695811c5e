"""metrics_check.py: idgen serve's /metrics against the Prometheus naming guide, read with
the Prometheus client's own parser, and the Grafana dashboard against what was read.

Usage: /usr/bin/python3 metrics_check.py METRICS_FILE VERSION DASHBOARD_JSON
(Debian's python3-prometheus-client imports only in /usr/bin/python3.) Prints one line per
problem and exits 1 if there is any.
"""
import json
import re
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

metrics_path, version, dashboard_path = sys.argv[1:4]
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)


families = {f.name: f for f in text_string_to_metric_families(open(metrics_path).read())}
samples = {}
for f in families.values():
    for s in f.samples:
        samples.setdefault(s.name, []).append(s)


def value(name, **labels):
    for s in samples.get(name, []):
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    problems.append(f"no sample {name}{labels or ''}")
    return None


# Base units: seconds and bytes, never milliseconds; counters end in _total.
for name, f in families.items():
    check(not re.search(r"_(ms|milliseconds|us|ns)$", name), f"{name}: not a base unit")
    if f.type == "counter":
        check(all(s.name.endswith(("_total", "_created")) for s in f.samples),
              f"counter {name} has a sample without _total")
    check(f.documentation, f"{name} has no HELP")

# idgen_build_info{version,layout,provider} 1
info = samples.get("idgen_build_info", [])
check(len(info) == 1 and info[0].value == 1, "idgen_build_info is not one sample of 1")
if info:
    check(info[0].labels.get("version") == version,
          f"idgen_build_info version {info[0].labels.get('version')} is not {version}")
    check(set(info[0].labels) == {"version", "layout", "provider"},
          f"idgen_build_info labels {sorted(info[0].labels)}")

# process_*: what every Prometheus client exports.
now = time.time()
rss = value("process_resident_memory_bytes")
check(rss is None or 1 << 20 < rss < 1 << 32, f"process_resident_memory_bytes {rss}")
fds = value("process_open_fds")
check(fds is None or 4 <= fds < value("process_max_fds"), f"process_open_fds {fds}")
cpu = value("process_cpu_seconds_total")
check(cpu is None or 0 <= cpu < 3600, f"process_cpu_seconds_total {cpu}")
start = value("process_start_time_seconds")
check(start is None or now - 3600 < start <= now + 1, f"process_start_time_seconds {start}")
for name in ("process_cpu_seconds", "process_resident_memory_bytes"):
    check(families.get(name) is not None, f"no family {name}")

# Times as Unix seconds, near now.
for name in ("idgen_last_issued_timestamp_seconds", "idgen_hwm_persisted_timestamp_seconds",
             "idgen_cap_timestamp_seconds"):
    v = value(name)
    check(v is None or now - 600 < v < now + 600, f"{name} {v} is not a Unix time near now")

# One latency histogram per protocol, each counting what its protocol's counter counts.
for hist, counter in (("idgen_http_request_duration_seconds", "idgen_http_requests_total"),
                      ("idgen_resp_command_duration_seconds", "idgen_resp_commands_total")):
    f = families.get(hist)
    if not check(f is not None and f.type == "histogram", f"no histogram {hist}"):
        continue
    count = value(hist + "_count")
    total = sum(s.value for s in samples.get(counter, []))
    check(count is not None and count == total and count > 0,
          f"{hist}_count {count} is not the {total} of {counter}")
    inf = value(hist + "_bucket", le="+Inf")
    check(inf == count, f"{hist}: +Inf bucket {inf} is not the count {count}")
check("idgen_request_duration_seconds" not in families, "the mixed histogram is still there")

# Failed authentications, counted where they happened.
check((value("idgen_auth_failures_total", listener="resp") or 0) >= 1,
      "a wrong AUTH was not counted in idgen_auth_failures_total{listener=resp}")
check((value("idgen_auth_failures_total", listener="http") or 0) >= 1,
      "a wrong bearer token was not counted in idgen_auth_failures_total{listener=http}")

# Named generators (the server runs default, events, orders, tokens): every generator in
# idgen_generator_info with its kind; every per-generator family labelled by generator.
kinds = {s.labels.get("generator"): s.labels.get("kind")
         for s in samples.get("idgen_generator_info", [])}
check(kinds == {"default": "snowflake", "events": "snowflake", "orders": "segment",
                "tokens": "uuid7"}, f"idgen_generator_info: {kinds}")
per_generator = [n for n in families if n.startswith(("idgen_segment_", "idgen_generator_"))]
per_generator += ["idgen_worker_id", "idgen_lease_state", "idgen_refused_total",
                  "idgen_lease_request_duration_seconds", "idgen_last_issued_timestamp_seconds"]
for name in per_generator:
    # A counter's family drops its _total: find the samples by either name.
    ss = samples.get(name) or (families[name].samples if name in families else [])
    check(ss and all("generator" in s.labels for s in ss),
          f"{name}: no sample, or a sample without a generator label")
for name in ("idgen_worker_id", "idgen_lease_state"):
    gens = {s.labels.get("generator") for s in samples.get(name, [])}
    check(gens == {"default", "events"}, f"{name}: generators {sorted(gens)}")
check(value("idgen_generator_ids_issued_total", generator="orders") == 250,
      "idgen_generator_ids_issued_total{generator=orders} is not 250")
check(value("idgen_generator_ids_issued_total", generator="tokens") == 2,
      "idgen_generator_ids_issued_total{generator=tokens} is not 2")
check(value("idgen_ids_issued_total", kind="segment") == 250,
      "idgen_ids_issued_total{kind=segment} is not 250")
# Three blocks of 100 for 250 numbers (the third one's prefetch may have brought a fourth).
blocks = value("idgen_segment_blocks_fetched_total", generator="orders")
check(blocks is not None and 3 <= blocks <= 4, f"orders: {blocks} blocks fetched")
fetches = value("idgen_segment_fetch_duration_seconds_count", generator="orders", backend="file")
check(fetches == blocks, f"orders: {fetches} fetches timed, {blocks} blocks fetched")
check(families.get("idgen_segment_fetch_duration_seconds") is not None and
      families["idgen_segment_fetch_duration_seconds"].type == "histogram",
      "idgen_segment_fetch_duration_seconds is not a histogram")
left = {s.labels.get("block"): s.value for s in samples.get("idgen_segment_numbers_left", [])}
check(set(left) == {"current", "next"} and left["current"] + left["next"] >= 50,
      f"orders: numbers left {left}")
check(value("idgen_segment_step", generator="orders") == 100, "orders: step is not 100")
check(value("idgen_segment_backend_up", generator="orders") == 1, "orders: backend not up")
check(value("idgen_generator_ready", generator="orders") == 1, "orders: not ready")

# The dashboard names only metrics that this output holds.
dashboard = json.load(open(dashboard_path))
exprs = []


def walk(node):
    if isinstance(node, dict):
        if isinstance(node.get("expr"), str):
            exprs.append(node["expr"])
        for v in node.values():
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)



walk(dashboard)
check(len(exprs) >= 10, f"the dashboard has {len(exprs)} queries")
# Every name in any string: queries, variables' queries, descriptions.
used = set(re.findall(r"\b(?:idgen|process)_[a-z0-9_]+", json.dumps(dashboard)))
for name in sorted(used):
    check(name in samples, f"the dashboard queries {name}, which /metrics does not hold")

# Callers' names (src/server/callers.c): the top 64 and "other", never more; the bound.
callers = [s.labels.get("caller") for s in samples.get("idgen_caller_requests_total", [])]
check(0 < len(callers) <= 65 and "other" in callers and len(set(callers)) == len(callers),
      f"idgen_caller_requests_total: {len(callers)} series, or no 'other', or a repeat")
check("idgen_caller_error_bound" in samples, "no idgen_caller_error_bound")

for p in problems:
    print("FAIL: " + p)
print(f"metrics_check.py: {len(families)} families, {sum(map(len, samples.values()))} "
      f"samples; the dashboard's {len(exprs)} queries use {len(used)} of them")
sys.exit(1 if problems else 0)
