#!/usr/bin/env bash
# The Helm chart (manifests/charts/vmgate) with the pinned helm and kubectl of tools/testenv,
# against a real kube-apiserver: the plain manifests are its rendering; helm lint; every
# certificate mode and the optional objects rendered and accepted by a server-side dry run (the
# cert-manager and ServiceMonitor CRDs installed, the Pod Security "restricted" profile checked);
# values refused by the schema with the key named; certs/generate; then a real release whose
# webhooks point at a local `vmgate serve --kubeconfig` (webhook.url, certs.mode=external):
# mutation and KubeVirt's denial through the installed configurations, an upgrade that changes
# them, and an uninstall that leaves nothing behind (no VM create blocked afterwards).
# Usage: test/e2e/helm_test.sh   (after the build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
vmgate=$build/vmgate
chart=$root/manifests/charts/vmgate
[[ -x $vmgate ]] || { echo "helm_test: build vmgate first ($vmgate)" >&2; exit 2; }

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

start=$SECONDS

e2e_start_testenv
# helm keeps its cache, configuration and data under the test's directory, not $HOME.
export HELM_CACHE_HOME=$dir/helm/cache HELM_CONFIG_HOME=$dir/helm/config HELM_DATA_HOME=$dir/helm/data

# fails COMMAND...: the command fails; its stderr is kept in $work/err.
fails() { ! "$@" >"$work/out" 2>"$work/err"; }
err_has() { grep -qF -- "$1" "$work/err" || { echo "not in the error output: $1" >&2; cat "$work/err" >&2; return 1; }; }

# ---------------------------------------------------------------- one source
check "manifests/ and certs/cert-manager/ are the chart's rendering" env HELM="$(command -v helm)" tools/render-manifests --check

# ---------------------------------------------------------------- lint
lint_clean() { # ARGS...: helm lint --strict passes with no warning or error line
  helm lint --strict "$chart" "$@" >"$work/lint" 2>&1 || { cat "$work/lint" >&2; return 1; }
  ! grep -E '^\[(WARNING|ERROR)\]' "$work/lint" >&2
}
check "helm lint" helm lint "$chart"
check "helm lint --strict, default values" lint_clean
check "helm lint --strict, certs.mode=certManager" lint_clean --set certs.mode=certManager
check "helm lint --strict, certs.mode=external" lint_clean --set certs.mode=external \
  --set certs.external.existingSecret=x --set-file certs.external.caBundle="$dir/certs/ca.crt"
check "helm lint --strict, subresources.enabled (with the whole stack)" lint_clean --namespace kubevirt \
  --set controller.enabled=true --set node.enabled=true --set subresources.enabled=true

# ---------------------------------------------------------------- every mode through a server-side dry run
kubectl create namespace vmgate-system >/dev/null
kubectl create namespace team-a >/dev/null
# Pod Security "restricted" in warn mode: kube-apiserver names every violation of a
# Deployment's pod template on the dry run.
kubectl label namespace vmgate-system pod-security.kubernetes.io/warn=restricted \
  pod-security.kubernetes.io/warn-version=latest >/dev/null

certs/generate --namespace vmgate-system --out "$work/pki" --san IP:127.0.0.1 >"$work/generate.out"
cat >"$work/external.yaml" <<EOF
certs:
  mode: external
  external:
    existingSecret: vmgate-tls
    caBundle: $(base64 -w0 <"$work/pki/ca.crt")
EOF
cat >"$work/cert-manager.yaml" <<'EOF'
certs: {mode: certManager}
EOF
cat >"$work/cert-manager-issuer.yaml" <<'EOF'
certs:
  mode: certManager
  certManager:
    issuerRef: {name: corporate-ca, kind: ClusterIssuer}
EOF
cat >"$work/optional.yaml" <<'EOF'
replicaCount: 3
networkPolicy:
  enabled: true
  metricsFrom:
  - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}
metrics:
  serviceMonitor: {enabled: true, labels: {release: prometheus}}
priorityClassQuota: {enabled: true}
topologySpreadConstraints:
- {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
webhook:
  excludedNamespaces: [kube-system, kube-public]
  namespaceSelector:
    matchExpressions: [{key: environment, operator: NotIn, values: [sandbox]}]
  objectSelector:
    matchLabels: {vmgate: enabled}
  mutating: {failurePolicy: Ignore, reinvocationPolicy: IfNeeded}
extraObjects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: '{{ .Release.Name }}-extra', namespace: '{{ .Release.Namespace }}'}
  data: {note: hello}
EOF

dry_run() { # NAME VALUES...: helm template | kubectl apply --dry-run=server, no PodSecurity warning
  local name=$1
  shift
  local args=()
  for v in "$@"; do args+=(-f "$v"); done
  helm template vmgate "$chart" --namespace vmgate-system "${args[@]}" >"$work/$name.rendered.yaml" || return 1
  kubectl apply --dry-run=server -f "$work/$name.rendered.yaml" >"$work/$name.dry.out" 2>"$work/$name.dry.err" ||
    { cat "$work/$name.dry.err" >&2; return 1; }
  ! grep -i 'podsecurity\|warning' "$work/$name.dry.err" >&2
}
kinds() { grep -E "^kind: ${2:-}" "$1" | sort | uniq -c | awk '{printf "%s=%s ", $3, $1}'; } # FILE [KIND-REGEX]

check "default values (selfSigned): dry run accepted, restricted" dry_run default
check "selfSigned renders the certs containers, the empty Secret and the certs RBAC" \
  test "$(kinds "$work/default.rendered.yaml")" = "ClusterRole=2 ClusterRoleBinding=2 Deployment=1 MutatingWebhookConfiguration=1 PodDisruptionBudget=1 Role=1 RoleBinding=1 Secret=1 Service=2 ServiceAccount=1 ValidatingWebhookConfiguration=1 "
check "selfSigned: certs-init and the certs sidecar run vmgate certs with the contract's flags" \
  test "$(grep -c -- '- --write-dir=/run/vmgate/tls' "$work/default.rendered.yaml")" = 2
check "selfSigned: no caBundle rendered (vmgate certs writes it)" bash -c "! grep -q '^ *caBundle:' '$work/default.rendered.yaml'"
check "certManager: dry run accepted (Issuers and Certificates validated by cert-manager's CRDs)" dry_run cert-manager "$work/cert-manager.yaml"
check "certManager: a self-signed Issuer, a CA Certificate, a CA Issuer and the serving Certificate" \
  test "$(kinds "$work/cert-manager.rendered.yaml" '(Issuer|Certificate)$')" = "Certificate=2 Issuer=2 "
check "certManager: the serving Certificate has the four Service SANs" \
  bash -c "grep -A5 '^  dnsNames:' '$work/cert-manager.rendered.yaml' | tr -d ' ' | grep -cx -- '-vmgate\(\.vmgate-system\(\.svc\(\.cluster\.local\)\?\)\?\)\?' | grep -qx 4"
check "certManager: both configurations carry cert-manager.io/inject-ca-from" \
  test "$(grep -c 'cert-manager.io/inject-ca-from: vmgate-system/vmgate-tls' "$work/cert-manager.rendered.yaml")" = 2
check "certManager with issuerRef: dry run accepted" dry_run cert-manager-issuer "$work/cert-manager-issuer.yaml"
check "certManager with issuerRef: only the serving Certificate, issued by it" \
  bash -c "grep -q 'name: corporate-ca' '$work/cert-manager-issuer.rendered.yaml' && ! grep -q '^kind: Issuer' '$work/cert-manager-issuer.rendered.yaml'"
check "external: dry run accepted" dry_run external "$work/external.yaml"
check "external: the caBundle in every webhook, the Secret mounted" \
  bash -c "test \$(grep -c 'caBundle: $(base64 -w0 <"$work/pki/ca.crt")' '$work/external.rendered.yaml') = 4 && grep -q 'secretName: vmgate-tls' '$work/external.rendered.yaml'"
check "the optional objects (NetworkPolicy, ServiceMonitor, ResourceQuota, extraObjects): dry run accepted" \
  dry_run optional "$work/optional.yaml"
check "the optional objects are rendered" bash -c "for k in NetworkPolicy ServiceMonitor ResourceQuota ConfigMap; do grep -q \"^kind: \$k\$\" '$work/optional.rendered.yaml' || exit 1; done"
check "the release namespace is excluded even when excludedNamespaces omits it" \
  bash -c "test \$(grep -c 'values: \[\"kube-system\",\"kube-public\",\"vmgate-system\"\]' '$work/optional.rendered.yaml') = 4"
# The whole stack (controller.enabled, node.enabled): only in serve.kubevirtNamespace, whose
# kubevirt-controller and kubevirt-handler accounts the webhook trusts.
stack_refused() {
  ! helm template vmgate "$chart" -n vmgate-system -f "$chart/ci/node-values.yaml" >/dev/null 2>"$work/err" &&
    err_has 'serve.kubevirtNamespace (kubevirt) only: install the release there'
}
check "ci/node-values.yaml outside serve.kubevirtNamespace: refused, naming it" stack_refused
stack_dry_run() {
  helm template vmgate "$chart" -n vmgate-system -f "$chart/ci/node-values.yaml" \
    --set serve.kubevirtNamespace=vmgate-system >"$work/stack.rendered.yaml" || return 1
  if ! kubectl apply --dry-run=server -f "$work/stack.rendered.yaml" >/dev/null 2>"$work/stack.err"; then
    cat "$work/stack.err" >&2
    return 1
  fi
}
check "ci/node-values.yaml: the webhook, the controller and vmgate-node, dry run accepted" stack_dry_run
check "ci/node-values.yaml: the controller's Deployment and Lease Role, vmgate-node's DaemonSet, the subresource API" \
  test "$(kinds "$work/stack.rendered.yaml" '(Deployment|DaemonSet|Role|ServiceAccount|APIService)$')" = "APIService=2 DaemonSet=1 Deployment=3 Role=3 ServiceAccount=4 "
check "ci/node-values.yaml: the controller runs as kubevirt-controller, vmgate-node as kubevirt-handler" \
  bash -c "grep -q 'serviceAccountName: kubevirt-controller' '$work/stack.rendered.yaml' && grep -q 'serviceAccountName: kubevirt-handler' '$work/stack.rendered.yaml'"
# The webhook Service's selector matches the webhook's pods only.
service_selects_webhook_only() {
  python3 - "$work/stack.rendered.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
selector = next(d["spec"]["selector"] for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == "vmgate")
matched = [d["metadata"]["name"] for d in docs if d["kind"] in ("Deployment", "DaemonSet")
           and all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]
sys.exit(0 if matched == ["vmgate"] else f"the webhook Service selects {matched}")
PY
}
check "ci/node-values.yaml: the webhook Service selects the webhook's pods only" service_selects_webhook_only
# The subresource API (subresources.enabled): its objects alone through the restricted dry run
# (vmgate-node's privileged DaemonSet is not among them), its PKI, its command line.
cat >"$work/subresources.yaml" <<'EOF'
serve: {kubevirtNamespace: vmgate-system}
controller: {enabled: true}
node: {enabled: true}
subresources: {enabled: true}
networkPolicy: {enabled: true}
EOF
subresources_dry_run() {
  helm template vmgate "$chart" -n vmgate-system -f "$work/subresources.yaml" >"$work/subresources-all.rendered.yaml" || return 1
  helm template vmgate "$chart" -n vmgate-system -f "$work/subresources.yaml" \
    --show-only templates/subresources.yaml >"$work/subresources.rendered.yaml" || return 1
  kubectl apply --dry-run=server -f "$work/subresources.rendered.yaml" >/dev/null 2>"$work/subresources.err" ||
    { cat "$work/subresources.err" >&2; return 1; }
  ! grep -i 'podsecurity\|warning' "$work/subresources.err" >&2
}
check "subresources.enabled: dry run accepted, restricted" subresources_dry_run
check "subresources.enabled: the APIServices, Deployment, Service, three Secrets and kubevirt-apiserver's RBAC" \
  test "$(kinds "$work/subresources.rendered.yaml")" = "APIService=2 ClusterRole=2 ClusterRoleBinding=1 Deployment=1 RoleBinding=1 Secret=3 Service=1 ServiceAccount=1 "
check "subresources.enabled: a NetworkPolicy of its own beside the webhook's" \
  test "$(grep -c '^kind: NetworkPolicy$' "$work/subresources-all.rendered.yaml")" = 2
# subresources_rendering FILE NAMESPACE RELEASE: the Deployment runs the contract's command line
# as kubevirt-apiserver, the APIServices are KubeVirt's, and one CA signs the three pairs.
subresources_rendering() {
  python3 - "$@" "$work/subresources-pki" <<'PY'
import base64, os, subprocess, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
ns, release, pki = sys.argv[2], sys.argv[3], sys.argv[4]
os.makedirs(pki, exist_ok=True)
problems = []
def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: {got!r}, expected {want!r}")
def by_kind(kind):
    return [d for d in docs if d["kind"] == kind]
secrets = {d["metadata"]["name"]: d["data"] for d in by_kind("Secret")}
expect("Secrets", sorted((n, sorted(d)) for n, d in secrets.items()),
       [(f"{release}-node-link", ["ca.crt", "tls.crt", "tls.key"]),
        (f"{release}-subresources-ca", ["ca.crt", "ca.key"]),
        (f"{release}-subresources-tls", ["ca.crt", "client.crt", "client.key", "tls.crt", "tls.key"])])
for name, data in secrets.items():
    for key, value in data.items():
        open(f"{pki}/{name.replace(release, 'r', 1)}.{key}", "wb").write(base64.b64decode(value))
ca = secrets[f"{release}-subresources-ca"]["ca.crt"]
for name in secrets:
    expect(f"{name} ca.crt is the CA", secrets[name].get("ca.crt"), ca)
svc_name = f"{release}-subresources"
for a in by_kind("APIService"):
    spec = a["spec"]
    expect("APIService", (a["metadata"]["name"], spec["group"], spec["service"], spec["caBundle"] == ca,
                          spec["groupPriorityMinimum"], spec["versionPriority"]),
           (spec["version"] + ".subresources.kubevirt.io", "subresources.kubevirt.io",
            {"name": svc_name, "namespace": ns, "port": 443}, True, 1000, 15))
expect("APIService versions", sorted(a["spec"]["version"] for a in by_kind("APIService")), ["v1", "v1alpha3"])
svc = by_kind("Service")[0]
expect("Service", (svc["metadata"]["name"], svc["spec"]["ports"]),
       (svc_name, [{"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}]))
deployment = by_kind("Deployment")[0]
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
expect("Service selector", svc["spec"]["selector"], deployment["spec"]["selector"]["matchLabels"])
expect("serviceAccountName", pod["serviceAccountName"], "kubevirt-apiserver")
expect("ServiceAccount", [d["metadata"]["name"] for d in by_kind("ServiceAccount")], ["kubevirt-apiserver"])
mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "tls")
expect("tls volume", next(v["secret"]["secretName"] for v in pod["volumes"] if v["name"] == "tls"),
       f"{release}-subresources-tls")
expect("args", container["args"], [
    "subresources", "--listen=0.0.0.0:8443", "--metrics-listen=0.0.0.0:8080",
    f"--tls-cert={mount}/tls.crt", f"--tls-key={mount}/tls.key",
    f"--node-link-cert={mount}/client.crt", f"--node-link-key={mount}/client.key", f"--node-link-ca={mount}/ca.crt",
    "--node-link-server-name=vmgate-node", f"--node-namespace={ns}",
    f"--node-selector=app.kubernetes.io/name=vmgate-node,app.kubernetes.io/instance={release}", "--node-port=8186"])
expect("POD_NAMESPACE", container["env"],
       [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}])
expect("probes", (container["readinessProbe"]["httpGet"], container["livenessProbe"]["httpGet"]),
       ({"path": "/readyz", "port": "metrics"}, {"path": "/healthz", "port": "metrics"}))
expect("ports", container["ports"], [{"name": "https", "containerPort": 8443, "protocol": "TCP"},
                                      {"name": "metrics", "containerPort": 8080, "protocol": "TCP"}])
def openssl(*args):
    return subprocess.run(["openssl", *args], capture_output=True, text=True)
def x509(name, *args):
    return openssl("x509", "-in", f"{pki}/{name}", "-noout", *args).stdout.strip()
def sans(name):
    return x509(name, "-ext", "subjectAltName").split("\n")[-1].strip()
expect("CA", x509("r-subresources-ca.ca.crt", "-subject"), "subject=CN = vmgate-subresources-ca")
expect("serving SANs", sans("r-subresources-tls.tls.crt"),
       f"DNS:{svc_name}, DNS:{svc_name}.{ns}, DNS:{svc_name}.{ns}.svc")
expect("client CN", x509("r-subresources-tls.client.crt", "-subject"), "subject=CN = vmgate-subresources")
expect("node CN", x509("r-node-link.tls.crt", "-subject"), "subject=CN = vmgate-node")
expect("node SANs", sans("r-node-link.tls.crt"), "DNS:vmgate-node")
for cert, key in (("r-subresources-tls.tls.crt", "r-subresources-tls.tls.key"),
                  ("r-subresources-tls.client.crt", "r-subresources-tls.client.key"),
                  ("r-node-link.tls.crt", "r-node-link.tls.key")):
    expect(f"{cert} signed by the CA",
           openssl("verify", "-CAfile", f"{pki}/r-subresources-ca.ca.crt", f"{pki}/{cert}").returncode, 0)
    expect(f"{cert} valid for 9 years more", openssl("x509", "-in", f"{pki}/{cert}", "-noout",
                                                    "-checkend", str(9 * 365 * 86400)).returncode, 0)
    expect(f"{key} is {cert}'s key", openssl("pkey", "-in", f"{pki}/{key}", "-pubout").stdout,
           openssl("x509", "-in", f"{pki}/{cert}", "-noout", "-pubkey").stdout)
if problems:
    sys.exit("\n".join(problems))
PY
}
check "subresources.enabled: the contract's command line as kubevirt-apiserver, KubeVirt's APIServices, one CA signing the three pairs" \
  subresources_rendering "$work/subresources.rendered.yaml" vmgate-system vmgate
subresources_refused() { # EXPECTED HELM-ARGS...: helm template with subresources.enabled fails naming EXPECTED
  local expected=$1
  shift
  fails helm template vmgate "$chart" -n vmgate-system --set subresources.enabled=true "$@" && err_has "$expected"
}
check "subresources.enabled without node.enabled: refused, naming it" \
  subresources_refused "subresources.enabled needs node.enabled" --set serve.kubevirtNamespace=vmgate-system
check "subresources.enabled outside serve.kubevirtNamespace: refused, naming it" \
  subresources_refused "kubevirt-apiserver, which the webhook trusts in serve.kubevirtNamespace (kubevirt) only" --set node.enabled=true
# The PodSecurity check above can fail: a privileged setting is named.
cat >"$work/privileged.yaml" <<'EOF'
securityContext: {allowPrivilegeEscalation: true, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: {drop: [ALL]}, seccompProfile: {type: RuntimeDefault}}
EOF
names_violation() { # VALUES: the dry run of that rendering warns about allowPrivilegeEscalation
  helm template vmgate "$chart" -n vmgate-system -f "$1" >"$work/privileged.rendered.yaml" || return 1
  kubectl apply --dry-run=server -f "$work/privileged.rendered.yaml" >/dev/null 2>"$work/err" || return 1
  err_has 'allowPrivilegeEscalation != false'
}
check "a container allowed to escalate privileges is named by PodSecurity (the check can fail)" \
  names_violation "$work/privileged.yaml"

# ---------------------------------------------------------------- the schema refuses bad values at install
install_refused() { # NAME VALUES-YAML EXPECTED...
  local name=$1 values=$2
  shift 2
  printf '%s\n' "$values" >"$work/bad-$name.yaml"
  fails helm install "bad-$name" "$chart" -n vmgate-system -f "$work/bad-$name.yaml" || return 1
  local expected
  for expected in "$@"; do err_has "$expected" || return 1; done
  ! helm status "bad-$name" -n vmgate-system >/dev/null 2>&1
}
check "a typo'd top-level key is refused at install, named" install_refused typo 'replicaCont: 3' "replicaCont"
check "a typo'd nested key is refused at install, named" install_refused nested 'webhook: {timeoutSecond: 5}' "timeoutSecond" "/webhook"
check "a wrong type is refused at install, the key named" install_refused type 'replicaCount: two' "/replicaCount" "integer"
check "a failurePolicy outside Fail/Ignore is refused, named" install_refused enum 'webhook: {validating: {failurePolicy: Sometimes}}' "/webhook/validating/failurePolicy"
check "a timeoutSeconds above 30 is refused, named" install_refused range 'webhook: {timeoutSeconds: 31}' "/webhook/timeoutSeconds"
check "external mode without a caBundle is refused, named" install_refused external 'certs: {mode: external, external: {existingSecret: s}}' "caBundle"
check "a malformed Go duration is refused, named" install_refused duration 'certs: {selfSigned: {renewBefore: 30 days}}' "/certs/selfSigned/renewBefore"
# The launcher's account is trusted no more (docs/security.md, "Migrating from the api link"): an
# upgrade that still sets it is told so instead of silently losing the trust.
check "the removed serve.launcherServiceAccount is refused, named" install_refused launcher 'serve: {launcherServiceAccount: vmgate-launcher}' "launcherServiceAccount" "/serve"
check "a typo'd subresources key is refused, named" install_refused subresources 'subresources: {replica: 2}' "replica" "/subresources"
template_refused() { # VALUES EXPECTED: helm template fails naming EXPECTED
  fails helm template x "$chart" -f "$1" && err_has "$2"
}
printf 'certs: {mode: external, external: {existingSecret: s, caBundle: bm90IGEgY2VydA==}}\n' >"$work/bad-bundle.yaml"
check "a caBundle that is no certificate is refused, named" \
  template_refused "$work/bad-bundle.yaml" "certs.external.caBundle: neither a PEM certificate nor the base64 of one"
check "no release was left by the refused installs" test -z "$(helm list -n vmgate-system -a -q)"

# ---------------------------------------------------------------- certs/generate
sans=$(openssl x509 -in "$work/pki/tls.crt" -noout -ext subjectAltName | tail -n +2 | tr -d ' ')
check "certs/generate: the four Service SANs and the extra IP" \
  test "$sans" = "DNS:vmgate,DNS:vmgate.vmgate-system,DNS:vmgate.vmgate-system.svc,DNS:vmgate.vmgate-system.svc.cluster.local,IPAddress:127.0.0.1"
check "certs/generate: serverAuth, not a CA, signed by its CA" bash -c "
  openssl x509 -in '$work/pki/tls.crt' -noout -ext extendedKeyUsage,basicConstraints | grep -q 'TLS Web Server Authentication' &&
  openssl x509 -in '$work/pki/tls.crt' -noout -ext basicConstraints | grep -q 'CA:FALSE' &&
  openssl verify -CAfile '$work/pki/ca.crt' -purpose sslserver '$work/pki/tls.crt' >/dev/null"
check "certs/generate: the keys are private (0600)" test "$(stat -c %a "$work/pki/tls.key") $(stat -c %a "$work/pki/ca.key")" = "600 600"
generate_refused() { # EXPECTED ARGS...: certs/generate exits 2 naming EXPECTED
  local expected=$1 rc=0
  shift
  certs/generate "$@" >"$work/out" 2>"$work/err" || rc=$?
  test "$rc" = 2 && err_has "$expected"
}
check "certs/generate: refuses to overwrite a CA" \
  generate_refused "$work/pki/ca.crt exists (--force replaces it)" --namespace vmgate-system --out "$work/pki"
check "certs/generate: a bad namespace is named" \
  generate_refused "--namespace 'Bad_NS' is not a DNS label" --namespace Bad_NS --out "$work/x"
check "certs/generate: a certificate outliving its CA is refused" \
  generate_refused "--days 4000 is longer than --ca-days 3650" --namespace ns --out "$work/x" --days 4000
# The Secret, created by the command certs/generate prints.
create_secret=$(sed -n 's/^  \(kubectl -n vmgate-system create secret .*\)$/\1/p' "$work/generate.out")
check "certs/generate's kubectl command creates the Secret" bash -c "$create_secret >/dev/null"
check "the Secret holds tls.crt, tls.key and ca.crt" \
  test "$(kubectl get secret vmgate-tls -n vmgate-system -o go-template='{{range $k, $v := .data}}{{$k}} {{end}}')" = "ca.crt tls.crt tls.key "

# ---------------------------------------------------------------- the Deployment's command line, run
# The serve container's arguments as the chart renders them (the paths and ports moved to this
# machine, --kubeconfig for the service account) start vmgate serve, and the probes' paths answer.
kubectl apply --dry-run=server -o json -f <(helm template vmgate "$chart" -n vmgate-system -f "$work/external.yaml" \
  --show-only templates/deployment.yaml) >"$work/deployment.json"
rendered_port=$(free_port)
rendered_metrics=$(free_port)
mapfile -t rendered_args < <(python3 - "$work/deployment.json" "$work/pki" "$rendered_port" "$rendered_metrics" <<'PY'
import json, sys
deployment = json.load(open(sys.argv[1]))
container = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "vmgate")
for arg in container["args"]:
    arg = arg.replace("/run/vmgate/tls/", sys.argv[2] + "/")
    arg = arg.replace("--listen=0.0.0.0:8443", "--listen=127.0.0.1:" + sys.argv[3])
    arg = arg.replace("--metrics-listen=0.0.0.0:8080", "--metrics-listen=127.0.0.1:" + sys.argv[4])
    print(arg)
for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
    print("PROBE " + container[probe]["httpGet"]["path"] + " " + str(container[probe]["httpGet"]["port"]))
PY
)
probes=("${rendered_args[@]: -3}")
rendered_args=("${rendered_args[@]:0:${#rendered_args[@]}-3}")
setsid "$vmgate" "${rendered_args[@]}" --kubeconfig "$KUBECONFIG" >"$work/rendered-serve.log" 2>&1 &
rendered_pid=$!
pids+=("$rendered_pid")
check "the chart's serve arguments start vmgate serve (${rendered_args[*]:0:3} ...)" \
  wait_until 30 curl -sf "http://127.0.0.1:$rendered_metrics/readyz" -o /dev/null
check "the probes are startup /livez, readiness /readyz, liveness /livez on the metrics port" \
  test "${probes[*]}" = "PROBE /livez metrics PROBE /readyz metrics PROBE /livez metrics"
check "the probes' paths answer 200 on the metrics port" \
  curl -sf "http://127.0.0.1:$rendered_metrics/livez" "http://127.0.0.1:$rendered_metrics/readyz" -o /dev/null -o /dev/null
kill -TERM -- "-$rendered_pid"
check "... and it drains and exits 0 on SIGTERM (shutdown delay 5s)" wait "$rendered_pid"
pids=()

# ---------------------------------------------------------------- a release pointing at a local vmgate serve
kubectl apply -f manifests/examples/cluster/instancetypes.yaml -f manifests/examples/cluster/preferences.yaml >/dev/null
kubectl get virtualmachineclusterinstancetypes,virtualmachineclusterpreferences -o json >"$work/cluster.json"
https_port=$(free_port)
metrics_port=$(free_port)
setsid "$vmgate" serve --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$https_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert "$work/pki/tls.crt" --tls-key "$work/pki/tls.key" --cache-sync-timeout 5s --shutdown-delay 0s \
  --access-log false >"$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
check "vmgate serve --kubeconfig gets ready" wait_until 20 curl -sf "http://127.0.0.1:$metrics_port/readyz" -o /dev/null

cat >"$work/local.yaml" <<EOF
webhook:
  url: https://127.0.0.1:$https_port
certs:
  mode: external
  external:
    existingSecret: vmgate-tls
EOF
quiet() { "$@" >"$work/out" 2>&1 || { cat "$work/out" >&2; return 1; }; }
check "helm install (webhook.url at the local serve, certs.mode=external)" \
  quiet helm install vmgate "$chart" -n vmgate-system -f "$work/local.yaml" --set-file certs.external.caBundle="$work/pki/ca.crt"
check "NOTES.txt names the dry-run command" grep -qF 'kubectl apply --dry-run=server' "$work/out"
check "the installed webhooks call the local serve" \
  test "$(kubectl get mutatingwebhookconfiguration vmgate -o jsonpath='{.webhooks[*].clientConfig.url}') $(kubectl get validatingwebhookconfiguration vmgate -o jsonpath='{.webhooks[*].clientConfig.url}')" \
  = "https://127.0.0.1:$https_port/virtualmachines-mutate https://127.0.0.1:$https_port/virtualmachineinstances-mutate https://127.0.0.1:$https_port/virtualmachines-validate https://127.0.0.1:$https_port/virtualmachineinstances-validate"

# admitted_as_check VM-FILE NAME: kubectl apply, then the stored spec is what vmgate check admits.
admitted_as_check() {
  local file=$1 name=$2
  "$vmgate" check -f "$file" --objects "$work/cluster.json" -n team-a -o json >"$work/$name.check.json" || true
  kubectl apply -f "$file" >/dev/null || return 1
  kubectl get vm "$name" -n team-a -o json >"$work/$name.stored.json"
  python3 - "$work/$name.stored.json" "$work/$name.check.json" <<'PY'
import json, sys
stored = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))["results"][0]
spec = stored["spec"]["template"]["spec"]
if not result["allowed"] or stored["spec"] != result["admitted"]["spec"] or not spec["domain"].get("firmware", {}).get("uuid"):
    print("stored:", json.dumps(stored["spec"], sort_keys=True), "\ncheck: ", json.dumps(result, sort_keys=True), file=sys.stderr)
    sys.exit(1)
PY
}
# denied_with_causes VM-FILE: kubectl apply refused, every cause vmgate check gives printed by kubectl.
denied_with_causes() {
  local file=$1
  "$vmgate" check -f "$file" --objects "$work/cluster.json" -n team-a -o json >"$work/denied.check.json" || true
  fails kubectl apply -f "$file" || return 1
  python3 - "$work/denied.check.json" "$work/err" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))["results"][0]
printed = open(sys.argv[2]).read()
missing = [c for c in result["causes"] if f"* {c['field']}: {c['message']}" not in printed]
if result["allowed"] or not result["causes"] or missing or "The request is invalid" not in printed \
        or "conflicts with selected instance type" not in printed:
    print("missing:", missing, "\n", printed, file=sys.stderr)
    sys.exit(1)
PY
}
check "a VM with an instancetype and a preference is mutated as vmgate check admits it" \
  admitted_as_check manifests/examples/vms/10-instancetype-preference.yaml web-01
check "a conflicting VM is denied with KubeVirt's causes" denied_with_causes manifests/examples/vms/40-denied-conflict.yaml
check "nothing stored for the denied VM" bash -c '! kubectl get vm legacy-01 -n team-a >/dev/null 2>&1'

# ---------------------------------------------------------------- helm upgrade changes the configurations
check "helm upgrade (timeoutSeconds 7, mutating failurePolicy Ignore)" \
  quiet helm upgrade vmgate "$chart" -n vmgate-system --reuse-values --set webhook.timeoutSeconds=7 --set webhook.mutating.failurePolicy=Ignore
check "the upgrade reached every webhook" test \
  "$(kubectl get mutatingwebhookconfiguration vmgate -o jsonpath='{.webhooks[*].timeoutSeconds} {.webhooks[*].failurePolicy}') $(kubectl get validatingwebhookconfiguration vmgate -o jsonpath='{.webhooks[*].timeoutSeconds} {.webhooks[*].failurePolicy}')" \
  = "7 7 Ignore Ignore 7 7 Fail Fail"
check "the release is at revision 2" test "$(helm list -n vmgate-system -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["revision"])')" = 2
sed 's/name: web-01/name: web-02/' manifests/examples/vms/10-instancetype-preference.yaml >"$work/web-02.yaml"
check "after the upgrade: a VM is still mutated as vmgate check admits it" admitted_as_check "$work/web-02.yaml" web-02
check "after the upgrade: a conflicting VM is still denied" denied_with_causes manifests/examples/vms/40-denied-conflict.yaml

# ---------------------------------------------------------------- vmgate stopped, then helm uninstall
kill -TERM -- "-$serve_pid"
check "vmgate serve exits 0 on SIGTERM" wait "$serve_pid"
pids=()
sed 's/name: web-01/name: web-03/' manifests/examples/vms/10-instancetype-preference.yaml >"$work/web-03.yaml"
blocked() { fails kubectl apply -f "$1" && err_has 'failed calling webhook'; }
check "with vmgate stopped, the validating webhook (Fail) blocks a VM create" blocked "$work/web-03.yaml"

helm get manifest vmgate -n vmgate-system >"$work/release.yaml"
objects=$(grep -c '^kind: ' "$work/release.yaml")
check "every object of the release exists before the uninstall ($objects)" \
  test "$(kubectl get -f "$work/release.yaml" -o name | wc -l)" = "$objects"
check "helm uninstall" quiet helm uninstall vmgate -n vmgate-system
check "every object of the release is gone, the webhook configurations included" bash -c "
  out=\$(kubectl get -f '$work/release.yaml' -o name 2>&1 || true)
  test \$(grep -c 'NotFound' <<<\"\$out\") = $objects && ! grep -q '^[a-z.]*/' <<<\"\$out\""
check "no webhook configuration named vmgate is left" \
  test -z "$(kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations -o name | grep /vmgate || true)"
check "after the uninstall, a VM create is no longer blocked (vmgate still stopped)" quiet kubectl apply -f "$work/web-03.yaml"

# ---------------------------------------------------------------- selfSigned: the RBAC of the contract, nothing more
# A release in selfSigned mode (its pods never run here): what its service account may do.
kubectl create namespace vmgate-ss >/dev/null
check "helm install, certs.mode=selfSigned" quiet helm install vmgate-ss "$chart" -n vmgate-ss
check "selfSigned: the chart's Secret is created empty" \
  test "$(kubectl get secret vmgate-ss-tls -n vmgate-ss -o jsonpath='{.type} {.data}')" = "Opaque "
can() { kubectl auth can-i --as=system:serviceaccount:vmgate-ss:vmgate-ss "$@" >/dev/null 2>&1; }
cannot() { ! can "$@"; }
rbac_secret() {
  can update secret/vmgate-ss-tls -n vmgate-ss && can patch secret/vmgate-ss-tls -n vmgate-ss &&
    cannot create secrets -n vmgate-ss && cannot list secrets -n vmgate-ss && cannot get secret/other -n vmgate-ss
}
rbac_configurations() {
  can patch mutatingwebhookconfiguration/vmgate-ss && can update validatingwebhookconfiguration/vmgate-ss &&
    cannot patch validatingwebhookconfiguration/virt-api-validator && cannot delete mutatingwebhookconfiguration/vmgate-ss
}
rbac_rest() {
  can get service/vmgate-ss -n vmgate-ss && cannot get service/other -n vmgate-ss &&
    can list endpointslices.discovery.k8s.io -n vmgate-ss &&
    can watch virtualmachineclusterinstancetypes.instancetype.kubevirt.io &&
    cannot create virtualmachines.kubevirt.io -n team-a && cannot update persistentvolumeclaims -n team-a
}
check "selfSigned RBAC: update and patch its Secret; no create, list or other Secret" rbac_secret
check "selfSigned RBAC: patch its own webhook configurations only" rbac_configurations
check "selfSigned RBAC: get its Service, list EndpointSlices, serve's get/list/watch, no other write" rbac_rest
check "helm uninstall of the selfSigned release" quiet helm uninstall vmgate-ss -n vmgate-ss
check "its Secret and RBAC are gone" bash -c "! kubectl get secret vmgate-ss-tls -n vmgate-ss >/dev/null 2>&1 && ! kubectl get clusterrole vmgate-ss-certs >/dev/null 2>&1"

# ---------------------------------------------------------------- subresources.enabled, installed
# The whole stack with the subresource API, in the namespace the webhook trusts (its pods never
# run here): the APIServices registered with the aggregator, the PKI kept by an upgrade and made
# again once its Secrets are deleted, kubevirt-apiserver's RBAC, the users' subresource role.
kubectl create namespace vmgate-sub >/dev/null
sub_values=(-f "$work/subresources.yaml" --set serve.kubevirtNamespace=vmgate-sub)
check "helm install, subresources.enabled (with controller.enabled and node.enabled)" \
  quiet helm install vmgate-sub "$chart" -n vmgate-sub "${sub_values[@]}"
check "NOTES.txt names the APIService to wait for" grep -qF 'kubectl get apiservice v1.subresources.kubevirt.io' "$work/out"
helm get manifest vmgate-sub -n vmgate-sub >"$work/sub-release.yaml"
python3 - "$work/sub-release.yaml" >"$work/sub-subresources.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
keep = [d for d in docs if d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == "subresources"
        or d["metadata"]["name"] == "vmgate-sub-node-link"]
print(yaml.safe_dump_all(keep))
PY
check "the release's subresource objects are what the contract asks for" \
  subresources_rendering "$work/sub-subresources.yaml" vmgate-sub vmgate-sub
# sub_state: the stored Secrets' data and the APIServices' caBundle and service, one line each.
sub_state() {
  local s
  for s in vmgate-sub-subresources-ca vmgate-sub-subresources-tls vmgate-sub-node-link; do
    kubectl get secret "$s" -n vmgate-sub -o go-template='{{range $k, $v := .data}}{{$k}}={{$v}} {{end}}{{"\n"}}' || return 1
  done
  kubectl get apiservice v1.subresources.kubevirt.io v1alpha3.subresources.kubevirt.io \
    -o go-template='{{range .items}}{{.metadata.name}} {{.spec.service.namespace}}/{{.spec.service.name}}:{{.spec.service.port}} {{.spec.caBundle}}{{"\n"}}{{end}}' 2>/dev/null
}
sub_state >"$work/sub-state-1"
sub_registered() {
  local ca
  ca=$(kubectl get secret vmgate-sub-subresources-ca -n vmgate-sub -o jsonpath='{.data.ca\.crt}') &&
    test "$(tail -2 "$work/sub-state-1")" = "v1.subresources.kubevirt.io vmgate-sub/vmgate-sub-subresources:443 $ca
v1alpha3.subresources.kubevirt.io vmgate-sub/vmgate-sub-subresources:443 $ca"
}
check "both APIServices name the Service, port 443, with the stored CA as caBundle" sub_registered
# The aggregator took them up: not Available, for want of a running pod behind the Service.
sub_unavailable() {
  kubectl get apiservice v1.subresources.kubevirt.io -o jsonpath='{.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}' >"$work/out" 2>/dev/null &&
    grep -qE '^False (MissingEndpoints|ServiceNotFound|EndpointsNotFound|FailedDiscoveryCheck)$' "$work/out"
}
check "the aggregator reports the APIService (Available=False: no pod runs here)" wait_until 20 sub_unavailable
sub_can() { kubectl auth can-i --as=system:serviceaccount:vmgate-sub:kubevirt-apiserver "$@" >/dev/null 2>&1; }
sub_cannot() { ! sub_can "$@"; }
sub_rbac() {
  sub_can get virtualmachines.kubevirt.io -n team-a && sub_can get virtualmachineinstances.kubevirt.io -n team-a &&
    sub_can patch virtualmachines.kubevirt.io -n team-a && sub_can patch virtualmachines.kubevirt.io --subresource=status -n team-a &&
    sub_can patch virtualmachineinstances.kubevirt.io -n team-a &&
    sub_can list pods -n team-a && sub_can delete pods -n team-a && sub_can list pods -n vmgate-sub &&
    sub_can create subjectaccessreviews.authorization.k8s.io &&
    sub_can get configmap/extension-apiserver-authentication -n kube-system
}
sub_rbac_nothing_more() {
  sub_cannot create virtualmachines.kubevirt.io -n team-a && sub_cannot update virtualmachines.kubevirt.io -n team-a &&
    sub_cannot delete virtualmachineinstances.kubevirt.io -n team-a && sub_cannot list virtualmachines.kubevirt.io -n team-a &&
    sub_cannot create pods -n team-a && sub_cannot get secrets -n vmgate-sub && sub_cannot list configmaps -n kube-system &&
    sub_cannot get configmap/other -n kube-system && sub_cannot create tokenreviews.authentication.k8s.io
}
check "kubevirt-apiserver: VMs and VMIs get and patch, VM status patch, pods list and delete, SAR create, the aggregator's ConfigMap" sub_rbac
check "kubevirt-apiserver: no create, update, list of VMs, no Secret, no other kube-system ConfigMap, no TokenReview" sub_rbac_nothing_more
# The users' role (aggregated into admin and edit by kube-controller-manager, which tools/testenv
# does not run): its labels, and its rules bound directly to a user, asked of the API server by
# SubjectAccessReview (kubectl auth can-i does not resolve a group it cannot discover).
allowed() { # USER NAMESPACE VERB GROUP RESOURCE [SUBRESOURCE]: the API server authorizes it
  kubectl create -o jsonpath='{.status.allowed}' -f - <<EOF 2>/dev/null | grep -qx true
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: $1
  resourceAttributes: {namespace: $2, verb: $3, group: "$4", resource: $5, subresource: "${6:-}"}
EOF
}
sub_user_role() {
  test "$(kubectl get clusterrole vmgate-sub:subresources-edit -o go-template='{{index .metadata.labels "rbac.authorization.k8s.io/aggregate-to-admin"}} {{index .metadata.labels "rbac.authorization.k8s.io/aggregate-to-edit"}}')" = "true true" || return 1
  kubectl create rolebinding sub-alice -n team-a --clusterrole=vmgate-sub:subresources-edit --user=alice >/dev/null || return 1
  local r
  for r in virtualmachines/start virtualmachines/stop virtualmachines/restart virtualmachineinstances/pause virtualmachineinstances/unpause; do
    allowed alice team-a update subresources.kubevirt.io "${r%/*}" "${r#*/}" || { echo "alice may not update $r" >&2; return 1; }
  done
  for r in virtualmachineinstances/console virtualmachineinstances/vnc; do
    allowed alice team-a get subresources.kubevirt.io "${r%/*}" "${r#*/}" || { echo "alice may not get $r" >&2; return 1; }
  done
  ! allowed alice team-a update subresources.kubevirt.io virtualmachineinstances addvolume &&
    ! allowed alice team-a get subresources.kubevirt.io virtualmachineinstances pause &&
    ! allowed alice team-a update kubevirt.io virtualmachines &&
    ! allowed alice team-b update subresources.kubevirt.io virtualmachines start
}
check "the users' role: start, stop, restart, pause, unpause (update), console, vnc (get); aggregated to admin and edit" sub_user_role
check "helm upgrade (subresources.replicas 2)" \
  quiet helm upgrade vmgate-sub "$chart" -n vmgate-sub "${sub_values[@]}" --set subresources.replicas=2
sub_state >"$work/sub-state-2"
check "the upgrade kept the CA, the three pairs and the caBundle (lookup)" cmp -s "$work/sub-state-1" "$work/sub-state-2"
sub_checksum() { kubectl get deployment vmgate-sub-subresources -n vmgate-sub -o jsonpath='{.spec.template.metadata.annotations.checksum/tls}'; }
checksum_before=$(sub_checksum)
kubectl delete secret -n vmgate-sub vmgate-sub-subresources-ca vmgate-sub-subresources-tls vmgate-sub-node-link >/dev/null
check "helm upgrade after the Secrets were deleted (rotation)" \
  quiet helm upgrade vmgate-sub "$chart" -n vmgate-sub "${sub_values[@]}" --set subresources.replicas=2
sub_state >"$work/sub-state-3"
sub_rotated() {
  # Every line differs (a new CA, new pairs, the new caBundle), and the new state holds together.
  test "$(diff <(cat "$work/sub-state-2") <(cat "$work/sub-state-3") | grep -c '^>')" = 5 &&
    sub_registered_now && test "$(sub_checksum)" != "$checksum_before"
}
sub_registered_now() {
  local ca
  ca=$(kubectl get secret vmgate-sub-subresources-ca -n vmgate-sub -o jsonpath='{.data.ca\.crt}') &&
    test "$(grep -c " $ca\$" "$work/sub-state-3")" = 2 &&
    test "$(grep -c "ca.crt=$ca " "$work/sub-state-3")" = 3
}
check "rotation: a new CA, new pairs, the APIServices' caBundle and the Deployment's checksum follow" sub_rotated
helm get manifest vmgate-sub -n vmgate-sub >"$work/sub-release.yaml"
sub_objects=$(grep -c '^kind: ' "$work/sub-release.yaml")
check "helm uninstall of the subresources release" quiet helm uninstall vmgate-sub -n vmgate-sub
check "every object of it is gone ($sub_objects), the APIServices and the kube-system RoleBinding included" bash -c "
  out=\$(kubectl get -f '$work/sub-release.yaml' -o name 2>&1 || true)
  test \$(grep -c 'NotFound' <<<\"\$out\") = $sub_objects && ! grep -q '^[a-z.]*/' <<<\"\$out\" &&
  ! kubectl get apiservice v1.subresources.kubevirt.io >/dev/null 2>&1 &&
  ! kubectl get rolebinding vmgate-sub-subresources-auth-reader -n kube-system >/dev/null 2>&1"
kubectl delete rolebinding sub-alice -n team-a >/dev/null

check "Chart.yaml's appVersion is the project's version (CMakeLists.txt)" test \
  "$(sed -n 's/^appVersion: "\(.*\)"$/\1/p' "$chart/Chart.yaml")" = "$(sed -n 's/^project(vmgate VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)"

# ---------------------------------------------------------------- selfSigned with vmgate certs playing the pod
# The release's certs-init and certs containers run here as the Deployment renders them (paths
# moved), with the release's service account token: the contract's RBAC is all they get. The
# API server calls https://localhost:PORT (webhook.url), so the release is named localhost
# (fullnameOverride): the certificate vmgate certs issues for the Service "localhost" carries
# DNS:localhost, the name the API server verifies.
selfsigned_release() {
  local port=$1 metrics=$2
  kubectl create namespace vmgate-local >/dev/null
  check "helm install, certs.mode=selfSigned, webhook.url https://localhost:$port" \
    quiet helm install localhost "$chart" -n vmgate-local --set fullnameOverride=localhost --set webhook.url="https://localhost:$port"
  token_kubeconfig "$work/local-sa.kubeconfig" "$(kubectl create token localhost -n vmgate-local --duration=1h)"
  helm get manifest localhost -n vmgate-local >"$work/local-release.yaml"
  kubectl create --dry-run=client -o json -f <(python3 -c '
import sys
docs = open(sys.argv[1]).read().split("\n---\n")
print("\n---\n".join(d for d in docs if "\nkind: Deployment\n" in "\n" + d))' "$work/local-release.yaml") >"$work/local-deployment.json"
  local tls=$work/local-tls
  mkdir -p "$tls"
  mapfile -t init_args < <(container_args "$work/local-deployment.json" initContainers certs-init "$tls")
  mapfile -t sidecar_args < <(container_args "$work/local-deployment.json" containers certs "$tls")
  check "certs-init (vmgate ${init_args[*]:0:1} ... --once) issues the pair with the release's RBAC" \
    quiet "$vmgate" "${init_args[@]}" --kubeconfig "$work/local-sa.kubeconfig"
  check "the chart's Secret now holds the CA, the serving pair and the bundle" \
    test "$(kubectl get secret localhost-tls -n vmgate-local -o go-template='{{range $k, $v := .data}}{{$k}} {{end}}')" = "ca-bundle.crt ca.crt ca.key tls.crt tls.key "
  kubectl get validatingwebhookconfiguration localhost -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d >"$work/bundle-before.pem"
  check "both configurations carry the CA bundle vmgate certs wrote, and it verifies the pair" bash -c "
    test \"\$(kubectl get mutatingwebhookconfiguration,validatingwebhookconfiguration localhost -o jsonpath='{.items[*].webhooks[*].clientConfig.caBundle}' | wc -w)\" = 4 &&
    openssl verify -CAfile '$work/bundle-before.pem' '$tls/tls.crt' >/dev/null"
  setsid "$vmgate" serve --kubeconfig "$work/local-sa.kubeconfig" --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics" \
    --tls-cert "$tls/tls.crt" --tls-key "$tls/tls.key" --shutdown-delay 0s --access-log false --watch-interval 200ms >"$work/local-serve.log" 2>&1 &
  local serve=$!
  pids+=("$serve")
  check "vmgate serve on the pair in the write directory gets ready" wait_until 20 curl -sf "http://127.0.0.1:$metrics/readyz" -o /dev/null
  sed 's/name: web-01/name: local-01/' manifests/examples/vms/10-instancetype-preference.yaml >"$work/local-01.yaml"
  check "selfSigned: a VM is mutated as vmgate check admits it" admitted_as_check "$work/local-01.yaml" local-01
  check "selfSigned: a conflicting VM is denied with KubeVirt's causes" denied_with_causes manifests/examples/vms/40-denied-conflict.yaml

  # A forced renewal while admissions flow: none may fail.
  setsid "$vmgate" "${sidecar_args[@]/--check-interval=*/--check-interval=1s}" --force-renew \
    --kubeconfig "$work/local-sa.kubeconfig" >"$work/local-certs.log" 2>&1 &
  local sidecar=$!
  pids+=("$sidecar")
  local admitted=0 refused=0 rotated=0 deadline=$((SECONDS + 40)) n=0
  while ((SECONDS < deadline)); do
    n=$((n + 1))
    if sed "s/name: web-01/name: renew-$n/" manifests/examples/vms/10-instancetype-preference.yaml |
      kubectl create --dry-run=server -f - >/dev/null 2>>"$work/renewal-failures.log"; then
      admitted=$((admitted + 1))
    else
      refused=$((refused + 1))
    fi
    kubectl get validatingwebhookconfiguration localhost -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d >"$work/bundle-now.pem"
    if ((rotated == 0)) && ! cmp -s "$work/bundle-now.pem" "$work/bundle-before.pem" &&
      test "$(grep -c 'BEGIN CERTIFICATE' "$work/bundle-now.pem")" = 1; then
      rotated=$n # the old CA is dropped: a few more admissions on the new pair
      deadline=$((SECONDS + 2))
    fi
  done
  check "the forced renewal completed: one new CA in the bundle ($n admissions meanwhile)" test "$rotated" -gt 0
  check "zero failed admissions during the renewal ($admitted admitted, $refused failed)" \
    bash -c "test $refused = 0 || { cat '$work/renewal-failures.log' >&2; false; }"
  check "the new bundle verifies the pair in the write directory" quiet openssl verify -CAfile "$work/bundle-now.pem" "$tls/tls.crt"
  check "serve serves the new certificate (verified against the new bundle)" bash -c "
    openssl s_client -connect 127.0.0.1:$port -servername localhost -CAfile '$work/bundle-now.pem' -verify_return_error </dev/null >/dev/null 2>&1"
  kill -TERM -- "-$sidecar" "-$serve"
  check "the certs sidecar exits 0 on SIGTERM" wait "$sidecar"
  wait "$serve" || true
  pids=()
  check "helm uninstall of the selfSigned release" quiet helm uninstall localhost -n vmgate-local
  check "its Secret and configurations are gone" bash -c "
    ! kubectl get secret localhost-tls -n vmgate-local >/dev/null 2>&1 && ! kubectl get validatingwebhookconfiguration localhost >/dev/null 2>&1"
}
container_args() { # DEPLOYMENT-JSON LIST NAME TLS-DIR: the container's args, /run/vmgate/tls moved
  python3 - "$@" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))["spec"]["template"]["spec"]
container = next(c for c in spec.get(sys.argv[2], []) if c["name"] == sys.argv[3])
for arg in container["args"]:
    print(arg.replace("/run/vmgate/tls", sys.argv[4]))
PY
}
if "$vmgate" certs --help >/dev/null 2>&1; then
  selfsigned_release "$(free_port)" "$(free_port)"
else
  # Until `vmgate certs` is part of the build, selfSigned is checked by the rendering, the dry
  # run and the RBAC above only.
  echo "note: this vmgate has no certs subcommand: certs.mode=selfSigned not run with vmgate certs"
fi

echo "helm_test: $passed passed, $failed failed ($((SECONDS - start)) s)"
((failed == 0))
