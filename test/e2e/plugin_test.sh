#!/usr/bin/env bash
# `kubectl vmgate` against a real kube-apiserver (tools/testenv): vmgate installed by its
# install rule (`cmake --install`) into a temporary prefix, whose bin/ — vmgate,
# vmgate-launcher, vmgate-container-disk, vmgate-node and the kubectl-vmgate symlink — is put on a PATH with kubectl and nothing
# else. Checked: `kubectl plugin list` finds the plugin; `kubectl vmgate check` with kubectl's
# kubeconfig (KUBECONFIG, a list with a missing file, ~/.kube/config) gives what
# `vmgate check --kubeconfig` gives; --context picks a context (its namespace the default, as
# kubectl's), an unknown context and a missing kubeconfig fail naming them; usage says
# `kubectl vmgate`.
# Usage: test/e2e/plugin_test.sh   (after the build of vmgate and vmgate-launcher)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
[[ -x $build/vmgate && -x $build/vmgate-launcher ]] || {
  echo "plugin_test: build vmgate and vmgate-launcher first ($build)" >&2
  exit 2
}

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

dir="$(mktemp -d)"
cleanup() {
  tools/testenv down "$dir/cluster" >/dev/null 2>&1 || true
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT

eval "$(tools/testenv up "$dir/cluster")"
kubectl create namespace kubevirt >/dev/null
kubectl create namespace vm-images >/dev/null
kubectl create namespace team-a >/dev/null
kubectl apply -f manifests/examples/cluster/ >/dev/null

# --- installed as the README's set-up installs it ----------------------------------------------
prefix=$dir/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
check "install: vmgate and vmgate-launcher" test -x "$prefix/bin/vmgate" -a -x "$prefix/bin/vmgate-launcher"
check "install: vmgate-container-disk and vmgate-node" \
  test -x "$prefix/bin/vmgate-container-disk" -a -x "$prefix/bin/vmgate-node"
check "install: kubectl-vmgate -> vmgate" test "$(readlink "$prefix/bin/kubectl-vmgate")" = vmgate
cmake --install "$build" --prefix "$prefix" >/dev/null
check "install again over an existing link" test "$(readlink "$prefix/bin/kubectl-vmgate")" = vmgate

# A PATH of kubectl and the installed bin/ only: what `kubectl plugin list` sees is ours.
mkdir -p "$dir/kubectl-bin"
ln -s "$(command -v kubectl)" "$dir/kubectl-bin/kubectl"
plugin_path=$prefix/bin:$dir/kubectl-bin
k() { env PATH="$plugin_path" kubectl "$@"; }

k plugin list >"$dir/plugins.txt" 2>&1 || true
check "kubectl plugin list shows kubectl-vmgate" grep -qx "$prefix/bin/kubectl-vmgate" "$dir/plugins.txt"
check "kubectl plugin list reports no problem" bash -c '! grep -qi "warning\|error" "$1"' _ "$dir/plugins.txt"
check "kubectl vmgate version" test "$(k vmgate version)" = "$("$build/vmgate" version)"
help=$(k vmgate --help)
check "kubectl vmgate --help says kubectl vmgate" grep -q '^kubectl vmgate: ' <<<"$help"
check_help=$(k vmgate check --help)
check "kubectl vmgate check --help says kubectl vmgate" grep -q '^Usage: kubectl vmgate check ' <<<"$check_help"
check "vmgate check --help is unchanged" grep -q '^Usage: vmgate check ' <<<"$("$build/vmgate" check --help)"

# run NAME COMMAND...: stdout to $dir/NAME.out, stderr to $dir/NAME.err, the status to $dir/NAME.status.
run() {
  local name=$1
  shift
  set +e
  "$@" >"$dir/$name.out" 2>"$dir/$name.err"
  echo $? >"$dir/$name.status"
  set -e
}
same() { # A B: the same stdout and status
  cmp -s "$dir/$1.out" "$dir/$2.out" && cmp -s "$dir/$1.status" "$dir/$2.status"
}

# --- kubectl vmgate check = vmgate check --kubeconfig ----------------------------------------------
# One clock for both runs: an expanded VMI records its Pending transition time.
export SOURCE_DATE_EPOCH=1767225600
run direct "$build/vmgate" check -f manifests/examples/vms/ --kubeconfig "$KUBECONFIG"
run plugin k vmgate check -f manifests/examples/vms/
check "kubectl vmgate check -f VMs = vmgate check --kubeconfig (exit $(cat "$dir/plugin.status"))" same direct plugin
check "the examples: 3 admitted, 1 denied" \
  test "$(grep -c ' admitted ' "$dir/plugin.out")" = 3 -a "$(grep -c ' denied:' "$dir/plugin.out")" = 1
run direct-json "$build/vmgate" check -f manifests/examples/vms/20-infer-from-volume.yaml --kubeconfig "$KUBECONFIG" -o json
run plugin-json k vmgate check -f manifests/examples/vms/20-infer-from-volume.yaml -o json
check "the same with -o json, inferFromVolume through the cluster's DataSource" same direct-json plugin-json
check "(admitted)" test "$(cat "$dir/plugin-json.status")" = 0
run offline "$build/vmgate" check -f manifests/examples/vms/ --objects manifests/examples/cluster/
run plugin-offline k vmgate check -f manifests/examples/vms/ --objects manifests/examples/cluster/
check "kubectl vmgate check --objects stays offline, as vmgate check" same offline plugin-offline

# kubectl's kubeconfig list: a missing file is skipped, by kubectl and by the plugin alike.
run list env KUBECONFIG="$dir/missing.kubeconfig:$KUBECONFIG" PATH="$plugin_path" kubectl vmgate check -f manifests/examples/vms/
check "KUBECONFIG list with a missing file" same direct list
check "kubectl skips it too" env KUBECONFIG="$dir/missing.kubeconfig:$KUBECONFIG" PATH="$plugin_path" kubectl get namespace team-a -o name >/dev/null

# ~/.kube/config when KUBECONFIG is unset.
mkdir -p "$dir/home/.kube"
cp "$KUBECONFIG" "$dir/home/.kube/config"
run home env -u KUBECONFIG HOME="$dir/home" PATH="$plugin_path" kubectl vmgate check -f manifests/examples/vms/
check "without KUBECONFIG: ~/.kube/config" same direct home

# --- contexts ---------------------------------------------------------------------------------
# A second file, first in the list: its current context is a dead cluster; "team" is the live
# cluster with namespace team-a. (Users and clusters of the other file are merged in.)
extra=$dir/extra.kubeconfig
kc() { kubectl config --kubeconfig "$extra" "$@" >/dev/null; }
kc set-cluster dead --server=https://127.0.0.1:1 --insecure-skip-tls-verify=true
kc set-context dead --cluster=dead --user=testenv-admin
kc set-context team --cluster=testenv --user=testenv-admin --namespace=team-a
kc use-context dead
both="$extra:$KUBECONFIG"
kx() { env KUBECONFIG="$both" PATH="$plugin_path" kubectl "$@"; }

run dead kx vmgate check -f manifests/examples/vms/
check "the current context of the merged list is used (dead: exit 2, naming it)" \
  bash -c '[[ $(cat "$1.status") == 2 ]] && grep -q "127.0.0.1:1" "$1.err" && [[ ! -s $1.out ]]' _ "$dir/dead"
check "kubectl agrees the current context is dead" bash -c '! env KUBECONFIG="$1" PATH="$2" kubectl get ns --request-timeout=5s >/dev/null 2>&1' _ "$both" "$plugin_path"
run context kx vmgate check --context testenv -f manifests/examples/vms/
check "--context testenv picks the live cluster" same direct context

sed '/^  namespace: team-a$/d' manifests/examples/vms/10-instancetype-preference.yaml >"$dir/vm-no-namespace.yaml"
check "(the fixture has no namespace)" bash -c '! grep -q namespace: "$1"' _ "$dir/vm-no-namespace.yaml"
run team kx vmgate check --context team -f "$dir/vm-no-namespace.yaml"
check "--context team: its namespace for an object without one, as kubectl" \
  grep -q "^virtualmachine.kubevirt.io/web-01 \[team-a, .*\] admitted" "$dir/team.out"
kubectl_namespace=$(kx --context team create --dry-run=server -f "$dir/vm-no-namespace.yaml" -o jsonpath='{.metadata.namespace}' || true)
check "(kubectl puts it into $kubectl_namespace too)" test "$kubectl_namespace" = team-a
run team-n kx vmgate check --context team -n default -f "$dir/vm-no-namespace.yaml"
check "-n overrides the context's namespace" grep -q "^virtualmachine.kubevirt.io/web-01 \[default, " "$dir/team-n.out"
run team-ns kx vmgate check --context team --namespace vm-images -f "$dir/vm-no-namespace.yaml"
check "--namespace too" grep -q "^virtualmachine.kubevirt.io/web-01 \[vm-images, " "$dir/team-ns.out"

run unknown kx vmgate check --context no-such-context -f manifests/examples/vms/
check "--context of an unknown context fails naming it" \
  bash -c '[[ $(cat "$1.status") == 2 && ! -s $1.out ]] && grep -q "no-such-context" "$1.err"' _ "$dir/unknown"
sed 's/^/  /' "$dir/unknown.err"

# --- no kubeconfig ----------------------------------------------------------------------------
mkdir -p "$dir/empty-home"
run missing env -u KUBECONFIG HOME="$dir/empty-home" PATH="$plugin_path" kubectl vmgate check -f manifests/examples/vms/
check "a missing ~/.kube/config fails naming the file" \
  bash -c '[[ $(cat "$1.status") == 2 && ! -s $1.out ]] && grep -q "$2/.kube/config" "$1.err"' _ "$dir/missing" "$dir/empty-home"
sed 's/^/  /' "$dir/missing.err"
run missing-env env KUBECONFIG="$dir/gone.kubeconfig" PATH="$plugin_path" kubectl vmgate check -f manifests/examples/vms/
check "a KUBECONFIG naming no file fails naming it" \
  bash -c '[[ $(cat "$1.status") == 2 ]] && grep -q "KUBECONFIG=$2 does not exist" "$1.err"' _ "$dir/missing-env" "$dir/gone.kubeconfig"
# `vmgate check` itself keeps its default: without --objects or --kubeconfig, no cluster objects.
run plain env -u KUBECONFIG HOME="$dir/empty-home" "$build/vmgate" check -f manifests/examples/vms/10-instancetype-preference.yaml
check "vmgate check without a source reads no kubeconfig" \
  bash -c '! grep -q kubeconfig "$1.err" && [[ -s $1.out ]]' _ "$dir/plain"

echo "plugin_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
