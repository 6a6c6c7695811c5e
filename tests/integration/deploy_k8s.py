"""deploy_k8s.py: checks deploy/k8s/statefulset.yaml against the Containerfile and prints
what `idgen serve` must accept, for deploy_config.sh to run it.

Usage: /usr/bin/python3 deploy_k8s.py YAML CONTAINERFILE VERSION
Prints three lines: the serve arguments (entrypoint after the binary, then the
container's args) as JSON, the environment as JSON (downward-API values filled with an
example), the named container ports as JSON. Exits 1 with one FAIL line per problem.
"""
import json
import os
import re
import sys

import yaml  # Debian's python3-yaml: run with /usr/bin/python3

yaml_path, containerfile_path, version = sys.argv[1:4]
problems = []


def check(ok, what):
    if not ok:
        problems.append(what)
    return ok


def containerfile_facts(path):
    """USER, VOLUME, EXPOSE and ENTRYPOINT of the Containerfile's last stage."""
    text = re.sub(r"\\\n", " ", open(path).read())
    facts = {}
    for line in text.splitlines():
        words = line.split(None, 1)
        if len(words) < 2:
            continue
        key, value = words[0].upper(), words[1].strip()
        if key == "FROM":
            facts = {}  # a new stage: only the last one runs
        elif key == "USER":
            facts["user"] = value
        elif key == "VOLUME":
            facts["volume"] = value
        elif key == "EXPOSE":
            facts["expose"] = sorted(int(p.split("/")[0]) for p in value.split())
        elif key == "ENTRYPOINT":
            facts["entrypoint"] = json.loads(value)
    return facts


image = containerfile_facts(containerfile_path)
docs = [d for d in yaml.safe_load_all(open(yaml_path)) if d]
by_kind = {d["kind"]: d for d in docs}
for kind in ("Service", "StatefulSet", "PodDisruptionBudget"):
    check(kind in by_kind, f"no {kind} in {yaml_path}")
if problems:
    print("\n".join("FAIL: " + p for p in problems), file=sys.stderr)
    sys.exit(1)

sts = by_kind["StatefulSet"]
pod = sts["spec"]["template"]
labels = pod["metadata"]["labels"]
selector = sts["spec"]["selector"]["matchLabels"]
check(selector.items() <= labels.items(), "the StatefulSet's selector misses its pods")
pdb_selector = by_kind["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"]
check(pdb_selector.items() <= labels.items(), "the PodDisruptionBudget selects no idgen pod")
check(by_kind["Service"]["spec"]["selector"].items() <= labels.items(),
      "the Service selects no idgen pod")
spec = pod["spec"]
(container,) = spec["containers"]

# The image: what `make image` tags, run as the Containerfile's user.
check(container["image"] == f"idgen:{version}",
      f"image {container['image']!r} is not make image's idgen:{version}")
uid = int(image["user"].split(":")[0])
pod_sc = spec.get("securityContext", {})
ctr_sc = container.get("securityContext", {})
check(pod_sc.get("runAsNonRoot") is True, "runAsNonRoot is not true")
check(pod_sc.get("runAsUser") == uid, f"runAsUser is not the image's uid {uid}")
check(pod_sc.get("fsGroup") is not None, "no fsGroup: the state volume is root's")
check(ctr_sc.get("readOnlyRootFilesystem") is True, "the root filesystem is writable")
check(ctr_sc.get("allowPrivilegeEscalation") is False, "privilege escalation is allowed")
check("ALL" in ctr_sc.get("capabilities", {}).get("drop", []), "capabilities are not dropped")
requests = container.get("resources", {}).get("requests", {})
check("cpu" in requests and "memory" in requests, "no cpu and memory requests")

# Ports: the names the probes and the Service use, the numbers the image exposes.
ports = {p["name"]: p["containerPort"] for p in container["ports"]}
check(sorted(ports.values()) == image["expose"],
      f"container ports {sorted(ports.values())} are not the image's EXPOSE {image['expose']}")
for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
    get = container.get(probe, {}).get("httpGet", {})
    check(get.get("path") == path and get.get("port") in ("http", ports.get("http")),
          f"{probe} is not GET {path} on the http port")
notes = pod["metadata"].get("annotations", {})
check(notes.get("prometheus.io/scrape") == "true", "no prometheus.io/scrape annotation")
check(notes.get("prometheus.io/port") == str(ports.get("http")),
      "prometheus.io/port is not the http port")
check(notes.get("prometheus.io/path") == "/metrics", "prometheus.io/path is not /metrics")

# The environment, with the downward API's values filled in.
env = {}
for e in container.get("env", []):
    if "value" in e:
        env[e["name"]] = str(e["value"])
    elif "fieldRef" in e.get("valueFrom", {}):
        env[e["name"]] = "2"
    else:
        problems.append(f"env {e['name']}: neither a value nor a fieldRef")
mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
volumes = {v["name"]: v for v in spec.get("volumes", [])}
claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}

# The state directory: the image's volume, on a claim that outlives the pod.
state = env.get("IDGEN_STATE_DIR")
check(state == image["volume"], f"IDGEN_STATE_DIR {state!r} is not the image's VOLUME")
check(mounts.get(state) in claims, f"{state} is not mounted from a volumeClaimTemplate")

# The token: a file from a Secret, mounted read-only.
args = container.get("args", [])
token = env.get("IDGEN_AUTH_TOKEN_FILE")
if "--auth-token-file" in args:
    token = args[args.index("--auth-token-file") + 1]
if check(token, "no IDGEN_AUTH_TOKEN_FILE or --auth-token-file"):
    folder, name = os.path.split(token)
    secret = volumes.get(mounts.get(folder), {}).get("secret")
    if check(secret, f"{folder} is not a Secret volume"):
        keys = [i["path"] for i in secret.get("items", [])] or [name]
        check(name in keys, f"the Secret volume has no {name}")
    ro = [m for m in container["volumeMounts"] if m["mountPath"] == folder]
    check(ro and ro[0].get("readOnly") is True, f"{folder} is not mounted read-only")

if problems:
    print("\n".join("FAIL: " + p for p in problems), file=sys.stderr)
    sys.exit(1)
print(json.dumps(image["entrypoint"][1:] + args))
print(json.dumps(env))
print(json.dumps(ports))
