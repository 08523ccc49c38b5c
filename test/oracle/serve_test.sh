#!/usr/bin/env bash
# kubevirt-oracle serve end to end: a throwaway certificate, the oracle and vmgate serve on free
# loopback ports over manifests/examples/cluster, every manifests/examples/reviews/*.json posted
# with curl to each endpoint for its resource (mutate, validate, and for a VMI KubeVirt's own
# -validate-create/-validate-update), concurrent requests, unusable bodies; then SIGTERM, which
# must end the oracle with status 0. Writes only to a temporary directory.
#
#   test/oracle/serve_test.sh [ORACLE [VMGATE]]   (default build/kubevirt-oracle build/vmgate)
#
# Checked: HTTP 200, an AdmissionReview answer with the request's uid, allowed (and a denial's
# code) as vmgate serve answers on the same endpoint, a patch that decodes to a JSON Patch when a
# mutating endpoint admits; 400 with a Status saying why for bodies KubeVirt cannot use (not
# JSON, no request, not application/json) and 404 for an unknown path, the server still answering
# afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
oracle=${1:-build/kubevirt-oracle}
vmgate=${2:-build/vmgate}
for b in "$oracle" "$vmgate"; do
  [[ -x $b ]] || { echo "serve_test: $b is not built" >&2; exit 1; }
done

tmp=$(mktemp -d)
declare -A pid=()
cleanup() {
  local p
  for p in "${pid[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null

# start NAME PORT_REGEX CMD...: starts CMD (port 0: it picks a free port and logs it), waits for
# the log line naming the port (KubeVirt's package initialisation takes ~3 s), sets port[NAME].
declare -A port=()
start() {
  local name=$1 regex=$2
  shift 2
  "$@" >"$tmp/$name.log" 2>&1 &
  pid[$name]=$!
  local i p
  for i in $(seq 1 300); do
    p=$(grep -o -m1 -E "$regex" "$tmp/$name.log" | grep -o -E '[0-9]+$' || true)
    if [[ -n $p ]]; then
      port[$name]=$p
      return 0
    fi
    kill -0 "${pid[$name]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "serve_test: $name did not start:" >&2
  cat "$tmp/$name.log" >&2
  exit 1
}
start oracle 'listening on https://127\.0\.0\.1:[0-9]+' \
  "$oracle" serve --listen 127.0.0.1:0 --tls-cert "$tmp/tls.crt" --tls-key "$tmp/tls.key" \
  --objects manifests/examples/cluster
start vmgate '"https":"127\.0\.0\.1:[0-9]+' \
  "$vmgate" serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --tls-cert "$tmp/tls.crt" \
  --tls-key "$tmp/tls.key" --objects manifests/examples/cluster --shutdown-delay 0s --access-log false

status=0
python3 - "$tmp" "${port[oracle]}" "${port[vmgate]}" manifests/examples/reviews/*.json <<'EOF' || status=1
import base64, json, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

tmp, oracle_port, vmgate_port, reviews = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
failures = []

def post(port, path, data, content_type="application/json"):
    args = ["curl", "-sS", "--max-time", "20", "--cacert", f"{tmp}/tls.crt", "-o", "-",
            "-w", "\n%{http_code}", "--data-binary", "@-", f"https://localhost:{port}{path}"]
    if content_type:
        args[1:1] = ["-H", f"Content-Type: {content_type}"]
    out = subprocess.run(args, input=data, capture_output=True, check=True).stdout.decode()
    body, _, code = out.rpartition("\n")
    return int(code), body

def fail(what, why):
    failures.append(f"{what}: {why}")

def answer(what, code, body, uid):
    if code != 200:
        fail(what, f"HTTP {code}: {body[:300]}")
        return None
    r = json.loads(body)
    if r.get("kind") != "AdmissionReview" or not isinstance(r.get("response"), dict):
        fail(what, f"not an AdmissionReview answer: {body[:300]}")
        return None
    if r["response"].get("uid") != uid:
        fail(what, f"uid {r['response'].get('uid')!r}, sent {uid!r}")
    return r["response"]

checked = 0
for path in reviews:
    data = open(path, "rb").read()
    req = json.loads(data)["request"]
    resource, uid = req["resource"]["resource"], req["uid"]
    endpoints = [f"/{resource}-mutate", f"/{resource}-validate"]
    if resource == "virtualmachineinstances":
        endpoints.append(f"/{resource}-validate-{req['operation'].lower()}")
    for ep in endpoints:
        what = f"{path} {ep}"
        o = answer(what, *post(oracle_port, ep, data), uid)
        v = answer(what + " (vmgate)", *post(vmgate_port, ep, data), uid)
        if o is None or v is None:
            continue
        checked += 1
        print(f"  {path} {ep}: oracle allowed={o['allowed']} code={o.get('status', {}).get('code', 200)}, "
              f"vmgate allowed={v['allowed']} code={v.get('status', {}).get('code', 200)}")
        if o["allowed"] != v["allowed"]:
            fail(what, f"oracle allowed={o['allowed']} ({o.get('status', {}).get('message', '')}), "
                       f"vmgate allowed={v['allowed']} ({v.get('status', {}).get('message', '')})")
        elif not o["allowed"] and o.get("status", {}).get("code") != v.get("status", {}).get("code"):
            fail(what, f"denial code {o.get('status', {}).get('code')}, vmgate {v.get('status', {}).get('code')}")
        if ep.endswith("-mutate") and o["allowed"]:
            if o.get("patchType") != "JSONPatch":
                fail(what, "admitted without a JSONPatch")
            else:
                ops = json.loads(base64.b64decode(o["patch"], validate=True))
                if not isinstance(ops, list) or not ops or not all("op" in p and "path" in p for p in ops):
                    fail(what, f"patch is not a JSON Patch: {ops!r:.200}")

# Concurrent requests on keep-alive-less connections: all answered, each with its uid.
body = json.loads(open(reviews[0], "rb").read())
bodies = []
for i in range(24):
    body["request"]["uid"] = f"concurrent-{i}"
    bodies.append((f"concurrent-{i}", json.dumps(body).encode()))
ep = f"/{body['request']['resource']['resource']}-mutate"
with ThreadPoolExecutor(8) as pool:
    results = list(pool.map(lambda b: (b[0], post(oracle_port, ep, b[1])), bodies))
for uid, (code, text) in results:
    answer(f"concurrent {uid}", code, text, uid)

# Bodies KubeVirt cannot use: 400 with a Status saying why; unknown paths 404.
for what, path, data, ctype in [
        ("not JSON", "/virtualmachines-mutate", b"{not json", "application/json"),
        ("no request", "/virtualmachines-validate", b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', "application/json"),
        ("no request (VMI)", "/virtualmachineinstances-validate-create", b"{}", "application/json"),
        ("empty body", "/virtualmachineinstances-mutate", b"", "application/json"),
        ("wrong content type", "/virtualmachines-mutate", open(reviews[0], "rb").read(), "text/plain")]:
    code, text = post(oracle_port, path, data, ctype)
    try:
        status = json.loads(text)
    except ValueError:
        status = {}
    if code != 400 or status.get("kind") != "Status" or status.get("code") != 400 or not status.get("message"):
        fail(what, f"HTTP {code} {text[:200]!r}, expected 400 with a Status saying why")
    else:
        print(f"  {what}: 400 {status['message']}")
code, _ = post(oracle_port, "/no-such-webhook", b"{}")
if code != 404:
    fail("unknown path", f"HTTP {code}, expected 404")
# Still serving.
data = open(reviews[0], "rb").read()
answer("after the bad bodies", *post(oracle_port, f"/{json.loads(data)['request']['resource']['resource']}-mutate", data),
       json.loads(data)["request"]["uid"])

print(f"serve_test: {checked} review/endpoint pairs compared with vmgate, 24 concurrent requests, 6 refusals")
for f in failures:
    print(f"FAIL {f}", file=sys.stderr)
sys.exit(1 if failures else 0)
EOF

# SIGTERM: the oracle stops listening and exits 0, leaving no process behind.
kill -TERM "${pid[oracle]}"
oracle_exit=0
for _ in $(seq 1 150); do
  kill -0 "${pid[oracle]}" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "${pid[oracle]}" 2>/dev/null; then
  echo "serve_test: the oracle did not exit within 15 s of SIGTERM" >&2
  status=1
else
  wait "${pid[oracle]}" || oracle_exit=$?
  unset 'pid[oracle]'
  if [[ $oracle_exit -ne 0 ]]; then
    echo "serve_test: the oracle exited $oracle_exit after SIGTERM" >&2
    status=1
  fi
fi
if grep -q panicked "$tmp/oracle.log"; then
  echo "serve_test: KubeVirt's code panicked:" >&2
  cat "$tmp/oracle.log" >&2
  status=1
fi
kill -TERM "${pid[vmgate]}" 2>/dev/null || true
wait "${pid[vmgate]}" 2>/dev/null || true
unset 'pid[vmgate]'

if [[ $status -ne 0 ]]; then
  echo "serve_test: FAILED (oracle log below)" >&2
  cat "$tmp/oracle.log" >&2
  exit 1
fi
echo "serve_test: passed"
