#!/usr/bin/env bash
# vmgate serve and kubevirt-oracle serve (KubeVirt v1.8.2's own webhook handlers, the real peer)
# under the same load, beside the harness's nginx (ceiling) and Go net/http webhook: one run of
# ../shared/bench/run.sh per target (the harness takes one target), then one merged table of
# medians. Both targets answer POST /virtualmachines-mutate over the same cluster objects.
#
#   bench/peer.sh [HARNESS]        (default: ../shared/bench/run.sh beside the checkout)
#
# Needs build/vmgate (cmake --build build --target vmgate) and build/kubevirt-oracle
# (tools/build-oracle). Env (defaults): OBJECTS=manifests/examples/cluster, CONNS="8 64",
# BODIES="small large", NEWCONN_CONNS="" (no new-connection points), and any other knob of the
# harness (REPS, DURATION, QUIET_WAIT, NOISY_PCT, ...), passed through. The oracle runs with
# GOMAXPROCS=1, as the harness runs the Go webhook. Output: the merged table on stdout and in
# $WORK/peer.md (WORK defaults to a new temporary directory); each run's own summary.md and raw
# results stay under $WORK/{vmgate,kubevirt-oracle}/run-*/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
harness=${1:-$(cd .. && pwd)/shared/bench/run.sh}
[[ -x $harness ]] || { echo "peer.sh: no harness at $harness" >&2; exit 2; }
for b in build/vmgate build/kubevirt-oracle; do
  [[ -x $b ]] || { echo "peer.sh: $b is not built" >&2; exit 2; }
done
export OBJECTS=${OBJECTS:-manifests/examples/cluster}
export CONNS=${CONNS-"8 64"} BODIES=${BODIES:-"small large"} NEWCONN_CONNS=${NEWCONN_CONNS-""}
export BENCH_PATH=/virtualmachines-mutate
WORK=${WORK:-$(mktemp -d -t vmgate-peer-bench.XXXXXX)}
mkdir -p "$WORK"

vmgate_cmd="$root/build/vmgate serve --listen 127.0.0.1:\$PORT --metrics-listen 127.0.0.1:0 --shutdown-delay 0s --objects $OBJECTS"
oracle_cmd="GOMAXPROCS=1 $root/build/kubevirt-oracle serve --objects $OBJECTS"
WORK=$WORK/vmgate TARGET_NAME=vmgate "$harness" "$vmgate_cmd" >/dev/null
WORK=$WORK/kubevirt-oracle TARGET_NAME=kubevirt-oracle "$harness" "$oracle_cmd" >/dev/null

python3 - "$WORK" "${NOISY_PCT:-25}" "$vmgate_cmd" "$oracle_cmd" <<'EOF' | tee "$WORK/peer.md"
import csv, glob, os, statistics, sys
work, noisy, vmgate_cmd, oracle_cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {t: sorted(glob.glob(os.path.join(work, t, "run-*")))[-1] for t in ("vmgate", "kubevirt-oracle")}
rows = []
for target, run in runs.items():
    for r in csv.DictReader(open(os.path.join(run, "results.tsv")), delimiter="\t"):
        if r["mode"] == "ka":
            r["run"] = target
            rows.append(r)
servers = ["vmgate", "kubevirt-oracle", "nginx", "go"]
size = {"small": "3 KB", "medium": "7 KB", "large": "20 KB"}

def agg(body, conns, server):
    g = [r for r in rows if r["body"] == body and int(r["conns"]) == conns and r["server"] == server]
    if not g:
        return None
    quiet = [r for r in g if float(r["other_cpu_pct"]) <= noisy]
    use = quiet or g
    m = lambda k: statistics.median(float(r[k]) for r in use)  # noqa: E731
    return {"rps": m("rps"), "p50": m("p50_us") / 1000, "p99": m("p99_us") / 1000, "cpu": m("srv_cpu_us_per_req"),
            "n": len(use), "all": len(g), "noisy": len(g) - len(quiet), "err": sum(int(r["errors"]) for r in g)}

bodies = list(dict.fromkeys(r["body"] for r in rows))
conns = sorted({int(r["conns"]) for r in rows})
print("| body | conns | " + " | ".join(f"{s} req/s" for s in servers) + " | vmgate / oracle | "
      + " | ".join(f"{s} p50 / p99 ms" for s in servers) + " | CPU µs/req vmgate / oracle |")
print("|---|---:|" + "---:|" * (2 * len(servers) + 2))
for b in bodies:
    for c in conns:
        a = {s: agg(b, c, s) for s in servers}
        cell = lambda s, f: f(a[s]) if a[s] else "—"  # noqa: E731
        ratio = f"{a['vmgate']['rps'] / a['kubevirt-oracle']['rps']:.0f}×" if a["vmgate"] and a["kubevirt-oracle"] else "—"
        print(f"| {size.get(b, b)} | {c} | " + " | ".join(cell(s, lambda x: f"{x['rps']:,.0f}".replace(",", " ")) for s in servers)
              + f" | {ratio} | " + " | ".join(cell(s, lambda x: f"{x['p50']:.2f} / {x['p99']:.2f}") for s in servers)
              + " | " + " / ".join(cell(s, lambda x: f"{x['cpu']:.0f}") for s in ("vmgate", "kubevirt-oracle")) + " |")
total = len(rows)
noisy_points = sum(1 for r in rows if float(r["other_cpu_pct"]) > noisy)
errors = sum(int(r["errors"]) for r in rows)
others = sorted(float(r["other_cpu_pct"]) for r in rows)
print()
print(f"Medians over the quiet points (other CPU ≤ {noisy:.0f} % of a core) of each cell, nginx and go over both runs; "
      f"{total} points measured, {noisy_points} of them above {noisy:.0f} % other CPU (median other CPU "
      f"{statistics.median(others):.0f} %, max {others[-1]:.0f} %); {errors} errors.")
print()
for target, run in runs.items():
    print(f"- {target}: {run}")
    for line in open(os.path.join(run, "env.txt")):
        if line.startswith(("date:", "loadavg", "elapsed")):
            print(f"  - {line.strip()}")
    sanity = os.path.join(run, "sanity.txt")
    if os.path.exists(sanity):
        for line in open(sanity):
            print(f"  - sanity: {line.strip()}")
EOF
