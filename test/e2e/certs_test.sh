#!/usr/bin/env bash
# `vmgate certs` against a real kube-apiserver (tools/testenv): the self-managed CA and serving
# certificate, the caBundles of manifests/webhooks (clientConfig.url to a local `vmgate serve`,
# no caBundle rendered), and a forced renewal while VM creations flow through the apiserver:
# zero failed admissions, the configurations carry {old, new} before the Secret switches, the
# old CA stays in every caBundle until the served certificate is the new one (sampled over and
# over), and the end state is bundle = {new} with the new certificate served. Then a Secret
# edited into garbage is repaired under the same load, a service account without the Role gets
# a 403 naming the verb and the resource (exit 1), the contract's RBAC is enough, and SIGTERM
# stops the sidecar with 0.
# Usage: test/e2e/certs_test.sh   (after the build; about a minute)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
[[ -x $vmgate ]] || { echo "certs_test: build vmgate first ($vmgate)" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

started=$SECONDS

e2e_start_testenv
tls=$work/tls

server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$work/apiserver-ca.crt"
kubectl config view --minify --raw -o jsonpath='{.users[0].user.client-certificate-data}' | base64 -d >"$work/admin.crt"
kubectl config view --minify --raw -o jsonpath='{.users[0].user.client-key-data}' | base64 -d >"$work/admin.key"

# ---------------------------------------------------------------- the webhooks, no caBundle
kubectl create namespace vmgate-system >/dev/null
kubectl create namespace team-a >/dev/null
https_port=$(free_port)
metrics_port=$(free_port)
sed -E "s#^( *)service: \{namespace: vmgate-system, name: vmgate, path: ([^,]*), port: 443\}#\1url: https://127.0.0.1:$https_port\2#" \
  manifests/webhooks/vmgate-webhooks.yaml >"$work/webhooks.yaml"
check "the webhook configurations apply without a caBundle" kubectl apply -f "$work/webhooks.yaml"
# A fifth webhook that names the Service (as in a cluster): its endpoints are found through the
# Service's port and the EndpointSlices' matching named port. Its one endpoint is not ready (no
# pod runs here), so it is left out of the probe; its rule matches nothing the test sends.
cat >"$work/service.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: vmgate, namespace: vmgate-system}
spec:
  ports: [{name: https, port: 443, targetPort: 8443}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: vmgate-1, namespace: vmgate-system, labels: {kubernetes.io/service-name: vmgate}}
addressType: IPv4
ports: [{name: https, port: 8443}]
endpoints: [{addresses: [10.0.0.99], conditions: {ready: false}}]
EOF
kubectl apply -f "$work/service.yaml" >/dev/null
kubectl patch validatingwebhookconfiguration vmgate --type json -p '[{"op": "add", "path": "/webhooks/-", "value":
  {"name": "service.vmgate.kubevirt.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
   "failurePolicy": "Ignore", "clientConfig": {"service": {"namespace": "vmgate-system", "name": "vmgate", "path": "/x"}},
   "rules": [{"operations": ["CREATE"], "apiGroups": ["kubevirt.io"], "apiVersions": ["v1"],
              "resources": ["virtualmachineinstancemigrations"]}]}}]' >/dev/null
check "... and carry none" test -z "$(kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration vmgate \
  -o jsonpath='{.items[*].webhooks[*].clientConfig.caBundle}')"

certs_args=(--kubeconfig "$KUBECONFIG" --namespace vmgate-system --service vmgate --secret vmgate-tls
  --mutating-webhook-configuration vmgate --validating-webhook-configuration vmgate)

# The Secret's key as PEM.
secret_key() { kubectl get secret vmgate-tls -n vmgate-system -o json | python3 -c \
  'import json,sys,base64; print(base64.b64decode(json.load(sys.stdin)["data"].get(sys.argv[1], "")).decode(), end="")' "$1"; }
# Every caBundle of both configurations equals the Secret's ca-bundle.crt.
bundles_match_secret() {
  local bundle
  bundle=$(secret_key ca-bundle.crt | base64 -w0)
  kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration vmgate -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
bundles = [w["clientConfig"].get("caBundle", "") for i in items for w in i["webhooks"]]
sys.exit(0 if len(bundles) == 5 and all(b == sys.argv[1] for b in bundles) else 1)' "$bundle"
}
cas_in_bundle() { secret_key ca-bundle.crt | grep -c 'BEGIN CERTIFICATE'; }

# ---------------------------------------------------------------- --once: the init container
check "certs --once issues into a missing Secret and exits 0" \
  "$vmgate" certs "${certs_args[@]}" --once --write-dir "$tls" 2>"$work/certs-init.log"
check "the Secret holds tls.crt, tls.key, ca.crt, ca.key, ca-bundle.crt" bash -c \
  "kubectl get secret vmgate-tls -n vmgate-system -o jsonpath='{.data}' | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if sorted(d) == [\"ca-bundle.crt\",\"ca.crt\",\"ca.key\",\"tls.crt\",\"tls.key\"] else 1)'"
check "every webhook's caBundle is ca-bundle.crt" bundles_match_secret
check "--write-dir: ..data swapped in, files are symlinks into it" \
  bash -c "test -L '$tls/..data' && test \"\$(readlink '$tls/tls.crt')\" = ..data/tls.crt"
check "--write-dir holds the Secret's pair" bash -c "diff <(cat '$tls/tls.crt') <(kubectl get secret vmgate-tls -n vmgate-system -o jsonpath='{.data.tls\\.crt}' | base64 -d)"
openssl x509 -in "$tls/tls.crt" -noout -text >"$work/leaf.txt"
for san in "DNS:vmgate," "DNS:vmgate.vmgate-system," "DNS:vmgate.vmgate-system.svc," \
  "DNS:vmgate.vmgate-system.svc.cluster.local" "IP Address:127.0.0.1"; do
  check "the leaf has SAN $san" grep -q "$san" "$work/leaf.txt"
done
check "the leaf is serverAuth only, ECDSA P-256, SHA-256" bash -c \
  "grep -A1 'Extended Key Usage' '$work/leaf.txt' | grep -qx ' *TLS Web Server Authentication' &&
   grep -q 'NIST CURVE: P-256' '$work/leaf.txt' && grep -q 'ecdsa-with-SHA256' '$work/leaf.txt'"
check "a second --once is steady and changes nothing" bash -c \
  "before=\$(kubectl get secret vmgate-tls -n vmgate-system -o jsonpath='{.metadata.resourceVersion}');
   '$vmgate' certs ${certs_args[*]} --once --write-dir '$tls' 2>'$work/certs-again.log' &&
   grep -q '\"msg\":\"steady\"' '$work/certs-again.log' &&
   test \"\$(kubectl get secret vmgate-tls -n vmgate-system -o jsonpath='{.metadata.resourceVersion}')\" = \"\$before\""

# ---------------------------------------------------------------- serve and the sidecar
setsid "$vmgate" serve --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$https_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert "$tls/tls.crt" --tls-key "$tls/tls.key" --watch-interval 200ms --cache-sync-timeout 5s \
  --shutdown-delay 0s --access-log false >"$work/serve.log" 2>&1 &
pids+=($!)
check "vmgate serve gets ready on the issued certificate" \
  wait_until 20 curl -sf "http://127.0.0.1:$metrics_port/readyz" -o /dev/null
cat >"$work/vm.yaml" <<'EOF'
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: vm-certs, namespace: team-a}
spec:
  runStrategy: Halted
  template:
    spec:
      domain:
        memory: {guest: 128Mi}
        devices: {}
EOF
check "a VM creation is admitted through the webhooks (server dry run)" \
  kubectl create --dry-run=server -f "$work/vm.yaml" -o name

setsid "$vmgate" certs "${certs_args[@]}" --write-dir "$tls" --check-interval 1s >"$work/sidecar.log" 2>&1 &
sidecar=$!
pids+=("$sidecar")

# ---------------------------------------------------------------- load and samples
# VM creations (dryRun=All) through the apiserver from 4 keep-alive clients until $work/stop
# appears; every answer other than 201 is a failed admission.
cat >"$work/load.py" <<'PY'
import http.client, json, os, ssl, sys, threading, time, urllib.parse
server, ca, cert, key, stop, out = sys.argv[1:7]
url = urllib.parse.urlparse(server)
body = json.dumps({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"generateName": "load-", "namespace": "team-a"},
                   "spec": {"runStrategy": "Halted", "template": {"spec": {"domain": {
                       "memory": {"guest": "128Mi"}, "devices": {}}}}}})
lock = threading.Lock()
counts = {"sent": 0, "failed": 0, "errors": []}
def worker():
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    connection = None
    while not os.path.exists(stop):
        try:
            if connection is None:
                connection = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=15)
            connection.request("POST", "/apis/kubevirt.io/v1/namespaces/team-a/virtualmachines?dryRun=All", body,
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            text = response.read()
            ok = response.status == 201
            error = None if ok else f"{response.status}: {text[:300]!r}"
        except Exception as e:  # a transport error of the client itself counts too
            ok, error, connection = False, repr(e), None
        with lock:
            counts["sent"] += 1
            if not ok:
                counts["failed"] += 1
                if len(counts["errors"]) < 5:
                    counts["errors"].append(error)
threads = [threading.Thread(target=worker) for _ in range(4)]
start = time.time()
for t in threads: t.start()
for t in threads: t.join()
counts["seconds"] = round(time.time() - start, 1)
json.dump(counts, open(out, "w"))
PY
# Samples until $work/stop: the configurations' caBundles (B0), the Secret's ca.crt, the
# certificate served on the webhook port (L), the caBundles again (B1). Invariant per sample:
# L is verified by B0 or by B1 (which of the two depends on when within the sample the switch
# fell), and a Secret whose ca.crt is new is only seen with configurations that trust it.
cat >"$work/sample.py" <<'PY'
import base64, http.client, json, os, socket, ssl, subprocess, sys, tempfile, time, urllib.parse
server, ca, cert, key, stop, port, out = sys.argv[1:8]
url = urllib.parse.urlparse(server)
context = ssl.create_default_context(cafile=ca)
context.load_cert_chain(cert, key)
api = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=15)
def get(path):
    api.request("GET", path)
    response = api.getresponse()
    return json.loads(response.read())
def bundles():
    result = []
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        item = get(f"/apis/admissionregistration.k8s.io/v1/{kind}/vmgate")
        result += [base64.b64decode(w["clientConfig"].get("caBundle", "")).decode() for w in item["webhooks"]]
    return result
def served():
    plain = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    plain.check_hostname = False
    plain.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as raw:
        with plain.wrap_socket(raw) as tls:
            return ssl.DER_cert_to_PEM_cert(tls.getpeercert(binary_form=True))
workdir = tempfile.mkdtemp()
def verified(leaf, bundle):
    if "BEGIN CERTIFICATE" not in bundle:
        return False
    with open(f"{workdir}/leaf.pem", "w") as f: f.write(leaf)
    with open(f"{workdir}/bundle.pem", "w") as f: f.write(bundle)
    return subprocess.run(["openssl", "verify", "-CAfile", f"{workdir}/bundle.pem", f"{workdir}/leaf.pem"],
                          capture_output=True).returncode == 0
samples = []
while not os.path.exists(stop):
    before = bundles()
    secret = get("/api/v1/namespaces/vmgate-system/secrets/vmgate-tls")
    secret_ca = base64.b64decode(secret["data"].get("ca.crt", "")).decode()
    secret_leaf = base64.b64decode(secret["data"].get("tls.crt", "")).decode()
    leaf = served()
    after = bundles()
    samples.append({
        "t": time.time(),
        "leaf": leaf,
        "leaf_ok": all(verified(leaf, b0) or verified(leaf, b1) for b0, b1 in zip(before, after)),
        # The Secret was read after B0 and before B1: a switched Secret implies B1 trusts its leaf
        # (not judged while the test has the Secret's tls.crt edited into garbage).
        "secret_ok": "BEGIN CERTIFICATE" not in secret_leaf or all(verified(secret_leaf, b1) for b1 in after),
        "secret_garbage": "BEGIN CERTIFICATE" not in secret_leaf,
        "cas": [b.count("BEGIN CERTIFICATE") for b in after],
        "secret_ca": secret_ca,
    })
json.dump(samples, open(out, "w"))
PY
rm -f "$work/stop"
python3 "$work/load.py" "$server" "$work/apiserver-ca.crt" "$work/admin.crt" "$work/admin.key" "$work/stop" "$work/load.json" &
load_pid=$!
python3 "$work/sample.py" "$server" "$work/apiserver-ca.crt" "$work/admin.crt" "$work/admin.key" "$work/stop" \
  "$https_port" "$work/samples.json" &
sample_pid=$!
sleep 2

# ---------------------------------------------------------------- a forced renewal under load
old_ca=$(secret_key ca.crt)
old_leaf_fp=$(openssl x509 -in "$tls/tls.crt" -noout -fingerprint -sha256)
renew_started=$(date +%s.%N)
check "certs --once --force-renew starts a renewal and exits 0" \
  "$vmgate" certs "${certs_args[@]}" --once --force-renew --write-dir "$tls" 2>"$work/certs-renew.log"
new_ca=$(secret_key ca.crt)
check "the Secret's CA changed" test "$new_ca" != "$old_ca"
served_by_new_ca() {
  openssl s_client -connect "127.0.0.1:$https_port" -servername vmgate.vmgate-system.svc </dev/null 2>/dev/null |
    openssl x509 >"$work/served.pem" 2>/dev/null &&
    openssl verify -CAfile <(printf '%s\n' "$new_ca") "$work/served.pem" >/dev/null 2>&1
}
renewed() { served_by_new_ca && test "$(cas_in_bundle)" = 1 && bundles_match_secret; }
check "the renewal completes: bundle {new} everywhere, the new certificate served" wait_until 30 renewed
renew_seconds=$(python3 -c "import time; print(round(time.time() - $renew_started, 1))")
check "the bundle is exactly the new CA" test "$(secret_key ca-bundle.crt)" = "$new_ca"
check "the served certificate is no longer the old one" \
  test "$(openssl x509 -in "$work/served.pem" -noout -fingerprint -sha256)" != "$old_leaf_fp"
check "the probe found the Service's EndpointSlice (its one endpoint not ready: left out)" \
  grep -q '"services":"vmgate-system/vmgate:443: 0 ready"' "$work/sidecar.log"
# The sidecar logs a step after its API write lands, so the log may trail what the test saw.
check "the log tells the steps (started, published, switched, dropped)" wait_until 10 bash -c \
  "cat '$work/certs-renew.log' '$work/sidecar.log' | grep -q '\"msg\":\"rotation started\"' &&
   cat '$work/certs-renew.log' '$work/sidecar.log' | grep -q '\"msg\":\"serving pair switched\"' &&
   grep -q '\"msg\":\"old CA dropped\"' '$work/sidecar.log'"

# ---------------------------------------------------------------- a Secret edited into garbage
kubectl patch secret vmgate-tls -n vmgate-system --type merge \
  -p "{\"data\":{\"tls.crt\":\"$(printf 'not a certificate' | base64 -w0)\",\"ca-bundle.crt\":\"$(printf garbage | base64 -w0)\"}}" >/dev/null
repaired() {
  secret_key tls.crt >"$work/repaired.crt" && secret_key ca.crt >"$work/repaired-ca.crt" &&
    openssl verify -CAfile "$work/repaired-ca.crt" "$work/repaired.crt" >/dev/null 2>&1 &&
    test "$(cas_in_bundle)" = 1 && bundles_match_secret && served_by_new_ca_of_secret
}
served_by_new_ca_of_secret() {
  openssl s_client -connect "127.0.0.1:$https_port" </dev/null 2>/dev/null | openssl x509 >"$work/served2.pem" 2>/dev/null &&
    openssl verify -CAfile "$work/repaired-ca.crt" "$work/served2.pem" >/dev/null 2>&1
}
check "the sidecar repairs a garbage Secret (overlap kept, then steady)" wait_until 30 repaired
check "... and names what it found" grep -q 'tls.crt is not PEM (no -----BEGIN line)' "$work/sidecar.log"
check "... with a fresh CA" test "$(secret_key ca.crt)" != "$new_ca"

sleep 1
touch "$work/stop"
wait "$load_pid" "$sample_pid"
read -r sent failures load_seconds < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["sent"], c["failed"], c["seconds"])' "$work/load.json")
echo "load: $sent VM creations in ${load_seconds}s, $failures failed; first errors: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$work/load.json")"
check "zero failed admissions across the renewal and the repair ($sent sent)" test "$failures" = 0
check "the load was real (more than 100 creations)" test "$sent" -gt 100
check_samples() {
  python3 - "$work/samples.json" <<'PY'
import json, sys
samples = json.load(open(sys.argv[1]))
bad_leaf = [i for i, s in enumerate(samples) if not s["leaf_ok"]]
bad_secret = [i for i, s in enumerate(samples) if not s["secret_ok"]]
overlap = sum(1 for s in samples if max(s["cas"]) >= 2)
leaves = len({s["leaf"] for s in samples})
garbage = sum(1 for s in samples if s["secret_garbage"])
print(f"samples: {len(samples)} ({garbage} while the Secret held garbage), with an overlap bundle: {overlap}, "
      f"distinct served leaves: {leaves}, "
      f"served leaf not trusted: {len(bad_leaf)}, switched Secret not trusted: {len(bad_secret)}")
sys.exit(0 if samples and not bad_leaf and not bad_secret and overlap > 0 and leaves >= 3 else 1)
PY
}
check "every sample: the served certificate trusted by every caBundle; the Secret switched only after the configurations trusted it" check_samples

# ---------------------------------------------------------------- SIGTERM (before the RBAC runs, which then
# carry a whole rotation on their own)
stop_started=$(date +%s%N)
kill -TERM -- "-$sidecar"
status=0
wait "$sidecar" || status=$?
stop_ms=$((($(date +%s%N) - stop_started) / 1000000))
check "SIGTERM: the sidecar exits 0 (in ${stop_ms} ms)" test "$status" = 0
check "... promptly (under 2 s)" test "$stop_ms" -lt 2000
pids=("${pids[@]/$sidecar/}")

# ---------------------------------------------------------------- RBAC
kubectl create serviceaccount vmgate-certs -n vmgate-system >/dev/null
token_kubeconfig "$work/sa.kubeconfig" "$(kubectl create token vmgate-certs -n vmgate-system --duration=1h)"
sa_args=(--kubeconfig "$work/sa.kubeconfig" "${certs_args[@]:2}" --once)
status=0
"$vmgate" certs "${sa_args[@]}" 2>"$work/rbac-none.log" || status=$?
check "no Role: exit 1" test "$status" = 1
check "... naming the verb and the resource" grep -q \
  'error: forbidden: cannot get secrets "vmgate-tls" in namespace vmgate-system (RBAC: the Role or ClusterRole of vmgate certs lacks verb "get" on secrets)' \
  "$work/rbac-none.log"
# The contract's Role only: the ClusterRole on the configurations is missing.
cat >"$work/rbac.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: vmgate-certs, namespace: vmgate-system}
rules:
- {apiGroups: [""], resources: [secrets], resourceNames: [vmgate-tls], verbs: [get, update, patch]}
- {apiGroups: [""], resources: [services], resourceNames: [vmgate], verbs: [get]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: vmgate-certs, namespace: vmgate-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: vmgate-certs}
subjects: [{kind: ServiceAccount, name: vmgate-certs, namespace: vmgate-system}]
EOF
kubectl apply -f "$work/rbac.yaml" >/dev/null
status=0
"$vmgate" certs "${sa_args[@]}" 2>"$work/rbac-role.log" || status=$?
check "the Role without the ClusterRole: exit 1 naming mutatingwebhookconfigurations" bash -c \
  "test $status = 1 && grep -q 'cannot get mutatingwebhookconfigurations \"vmgate\".*lacks verb \"get\"' '$work/rbac-role.log'"
cat >"$work/clusterrbac.yaml" <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: vmgate-certs}
rules:
- apiGroups: [admissionregistration.k8s.io]
  resources: [mutatingwebhookconfigurations, validatingwebhookconfigurations]
  resourceNames: [vmgate]
  verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: vmgate-certs}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: vmgate-certs}
subjects: [{kind: ServiceAccount, name: vmgate-certs, namespace: vmgate-system}]
EOF
kubectl apply -f "$work/clusterrbac.yaml" >/dev/null
# RBAC changes reach the authorizer's cache within a moment.
check "the contract's RBAC is enough for a forced renewal (--once, exit 0)" \
  wait_until 10 "$vmgate" certs "${sa_args[@]}" --force-renew --write-dir "$tls" 2>"$work/rbac-full.log"
check "... including the probe's Service get and EndpointSlice list" \
  grep -q '"services":"vmgate-system/vmgate:443: 0 ready"' "$work/rbac-full.log"

echo "certs e2e: $passed passed, $failed failed; $sent VM creations, $failures failed; renewal ${renew_seconds}s; took $((SECONDS - started))s"
((failed == 0))
