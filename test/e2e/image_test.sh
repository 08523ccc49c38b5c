#!/usr/bin/env bash
# vmgate's image without a registry (none is reachable from the development machines): the root file
# system the Containerfile copies into its `FROM scratch` stage is assembled by the SAME command
# (the Containerfile's "RUN tools/image/assemble-rootfs ..." line, read from it) into a temporary
# directory, and vmgate runs inside it as the image runs it: uid/gid 65532, the root read-only,
# nothing of the host visible but the network (a private mount and PID namespace, chroot), /proc,
# a minimal /dev and the TLS pair mounted read-only at /run/vmgate/tls as the chart mounts it.
# Checked: `vmgate version`, the kubectl-vmgate name, `vmgate check` on the example manifests
# (the same verdicts as on the host), `vmgate serve` answering /readyz and an AdmissionReview over
# HTTPS on 127.0.0.1 and exiting 0 on SIGTERM; a write to the root refused (the sandbox is real);
# the root unchanged afterwards. Then podman (no registry needed: FROM scratch) builds the
# Containerfile's runtime stage from that root and runs it read-only, without capabilities or new
# privileges: version, check, the refused write, serve over HTTPS, uid 65532, exit 0 on stop.
# Needs root for the namespaces and podman (sudo otherwise).
# Usage: test/e2e/image_test.sh   (after the build of vmgate; VMGATE_BUILD_DIR defaults to build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
[[ -x $build/vmgate && -L $build/kubectl-vmgate ]] || {
  echo "image_test: build vmgate first ($build/vmgate, $build/kubectl-vmgate)" >&2
  exit 2
}

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  as_root=(sudo)
fi

host_paths_before=$(host_paths)
note_podman_cache

dir="$(mktemp -d)"
serve_pid=""
podman_container=""
cleanup() {
  if [[ -n $podman_container ]]; then
    "${podman_[@]}" rm -f "$podman_container" >/dev/null 2>&1 || true
  fi
  if [[ -n ${podman_[*]:-} && -d $dir/podman ]]; then
    "${podman_[@]}" rmi -af >/dev/null 2>&1 || true
  fi
  if [[ -n $serve_pid ]]; then
    "${as_root[@]}" kill -KILL "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  # The mounts lived in the namespaces, gone with their processes; the files are root's.
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir" >&2; else "${as_root[@]}" rm -rf "$dir"; fi
  remove_new_podman_cache "${as_root[@]}"  # after the podman calls above
}
trap cleanup EXIT

# --- The Containerfile and the script: one source ----------------------------------------------
mapfile -t assemble_lines < <(grep -E '^RUN tools/image/assemble-rootfs ' Containerfile)
check "Containerfile runs tools/image/assemble-rootfs once" test "${#assemble_lines[@]}" -eq 1
read -r -a words <<<"${assemble_lines[0]#RUN }"
outdir=${words[-1]}
binaries=("${words[@]:1:${#words[@]}-2}")
runtime_stage=$(sed -n '/^FROM scratch/,$p' Containerfile)
check "the runtime stage is FROM scratch" test -n "$runtime_stage"
check "the runtime stage copies exactly the assembled root" \
  test "$(grep -E '^(COPY|ADD|RUN)' <<<"$runtime_stage")" = "COPY --from=build $outdir/ /"
entrypoint=$(sed -nE 's/^ENTRYPOINT \["([^"]+)"\]$/\1/p' <<<"$runtime_stage")
check "the runtime stage runs as 65532:65532" grep -qx 'USER 65532:65532' <<<"$runtime_stage"

# The same binaries from this build directory (the Containerfile builds into /src/build).
local_binaries=()
for binary in "${binaries[@]}"; do
  local_binaries+=("$build/${binary#build/}")
done
# The build context of the runtime stage: the assembled root only.
mkdir -p "$dir/context"
rootfs=$dir/context/rootfs
"${as_root[@]}" tools/image/assemble-rootfs "${local_binaries[@]}" "$rootfs" >"$dir/assembled.txt"
echo "assembled $(wc -l <"$dir/assembled.txt") files and links into $rootfs"

check "ENTRYPOINT names the assembled vmgate" test -x "$rootfs$entrypoint" -a "$(basename "$entrypoint")" = vmgate
check "kubectl-vmgate is a symlink to vmgate in the image" test "$(readlink "$rootfs/usr/local/bin/kubectl-vmgate")" = vmgate
check "passwd and group hold 65532" grep -q '^nonroot:x:65532:65532:' "$rootfs/etc/passwd"
check "the CA bundle is where OpenSSL looks" test -s "$rootfs/usr/lib/ssl/cert.pem"
# Exactly the libraries ldd lists (their real files, by name) and nothing else that is a library.
expected_libraries=$(ldd "$build/vmgate" | awk '$2 == "=>" {print $3} $1 ~ /^\// {print $1}' | xargs -n1 readlink -f |
  xargs -n1 basename | sort -u)
image_libraries=$(find "$rootfs" -type f -name '*.so*' -printf '%f\n' | sort -u)
check "the image holds exactly the libraries vmgate links" test "$expected_libraries" = "$image_libraries"
check "assemble-rootfs refuses a non-empty OUTDIR" \
  bash -c '! tools/image/assemble-rootfs "$1" "$2" 2>/dev/null' _ "$build/vmgate" "$rootfs"
check "assemble-rootfs refuses a file that is not an executable" \
  bash -c '! tools/image/assemble-rootfs README.md "$1" 2>/dev/null' _ "$dir/refused"

# --- The runtime stage built by podman from that root -------------------------------------------
# The Containerfile's own runtime stage, its COPY --from=build taken from the build context
# instead: what `podman build -f Containerfile .` makes of it after the build stage. Its storage
# lives in the temporary directory (vfs: no overlay mounts left behind), and so does its network
# configuration (CNI's lock file, /etc/cni/net.d/cni.lock by default). runc with cgroupfs and
# explicit ulimits: on hosts with hybrid cgroups crun refuses to start, and podman's default
# RLIMIT_NOFILE can exceed the host's hard limit (docs/image.md).
podman_=("${as_root[@]}" podman --root "$dir/podman/storage" --runroot "$dir/podman/run" --storage-driver vfs
  --runtime runc --cgroup-manager cgroupfs --events-backend file --tmpdir "$dir/podman/tmp"
  --network-config-dir "$dir/podman/net")
image=localhost/vmgate:image-test
sed -n '/^FROM scratch/,$p' Containerfile | sed "s#^COPY --from=build $outdir/ /\$#COPY rootfs/ /#" >"$dir/Containerfile.runtime"
check "podman builds the runtime stage" bash -c '"${@:3}" build -q -t "$1" -f "$2" "$(dirname "$2")/context" >/dev/null' \
  _ "$image" "$dir/Containerfile.runtime" "${podman_[@]}"
check "the image runs as 65532:65532, ENTRYPOINT vmgate" \
  test "$("${podman_[@]}" image inspect --format '{{.Config.User}} {{.Config.Entrypoint}}' "$image" 2>&1)" = \
  "65532:65532 [/usr/local/bin/vmgate]"
# As the chart's securityContext runs it: read-only root without podman's tmpfs on /tmp and /run,
# no capability, no privilege escalation.
podman_run=("${podman_[@]}" run --network host --read-only --read-only-tmpfs=false --cap-drop ALL
  --security-opt no-new-privileges --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)

# What the runs need, added as a pod's volumes would bring them: the example cluster objects and
# manifests, and the mount point of the TLS volume.
"${as_root[@]}" mkdir -p "$rootfs/etc/vmgate" "$rootfs/run/vmgate/tls"
"${as_root[@]}" cp -r manifests/examples/cluster manifests/examples/vms "$rootfs/etc/vmgate/"

# A CA and a serving certificate for 127.0.0.1, readable by uid 65532 (a Secret volume's mode).
tls=$dir/tls
mkdir -p "$tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=image-ca \
  -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=vmgate \
  -keyout "$tls/tls.key" -out "$tls/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$tls/ext"
openssl x509 -req -in "$tls/tls.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 1 \
  -extfile "$tls/ext" -out "$tls/tls.crt" 2>/dev/null
rm "$tls/ca.key"
chmod 755 "$dir" "$tls"
chmod 644 "$tls"/*

snapshot() { "${as_root[@]}" find "$rootfs" -printf '%p %y %m %u %s %T@\n' | sort; }
before=$(snapshot)

# in_image PROGRAM ARGS...: runs /usr/local/bin/PROGRAM in the assembled root, as a container
# runtime would: new mount and PID namespaces, the root bind-mounted read-only, /proc of the new
# PID namespace, a /dev with null, zero, random and urandom, the TLS pair read-only at
# /run/vmgate/tls, uid and gid 65532, an environment of PATH only, the working directory /.
# The host's network namespace is kept so that the test reaches 127.0.0.1. mount -n: libmount's
# utab (and its lock directory /run/mount) would otherwise be created on the host's /run.
in_image() {
  "${as_root[@]}" unshare --mount --pid --fork --kill-child --propagation private -- /bin/bash -c '
    set -e
    r=$1 tls=$2 program=$3
    shift 3
    mount -n --bind "$r" "$r"
    mount -n -t proc -o nosuid,nodev,noexec proc "$r/proc"
    mount -n -t tmpfs -o nosuid,noexec,mode=755,size=64k tmpfs "$r/dev"
    for device in null zero random urandom; do
      touch "$r/dev/$device"
      mount -n --bind "/dev/$device" "$r/dev/$device"
    done
    mount -n --bind "$tls" "$r/run/vmgate/tls"
    mount -n -o remount,bind,ro "$tls" "$r/run/vmgate/tls"
    mount -n -o remount,bind,ro "$r"
    chroot=$(command -v chroot)
    exec env -i PATH=/usr/local/bin "$chroot" --userspec=65532:65532 --groups=65532 "$r" "/usr/local/bin/$program" "$@"
  ' in_image "$rootfs" "$tls" "$@"
}

# --- version, the plugin name, check ------------------------------------------------------------
version=$(in_image vmgate version 2>&1) || true
check "vmgate version runs in the image ($version)" test "$version" = "$("$build/vmgate" version)"
plugin_help=$(in_image kubectl-vmgate --help 2>&1) || true
check "kubectl-vmgate in the image is the kubectl plugin" grep -q '^kubectl vmgate: ' <<<"$plugin_help"

set +e
(cd "$rootfs" && "$build/vmgate" check -f etc/vmgate/vms/ --objects etc/vmgate/cluster/ >"$dir/host-check.txt" 2>&1)
host_status=$?
in_image vmgate check -f etc/vmgate/vms/ --objects etc/vmgate/cluster/ >"$dir/image-check.txt" 2>&1
image_status=$?
set -e
check "vmgate check in the image: the host's verdicts (exit $image_status)" \
  test "$image_status" = 1 -a "$host_status" = 1 -a "$(cat "$dir/image-check.txt")" = "$(cat "$dir/host-check.txt")"
check "the example VMs admitted and denied in the image" \
  test "$(grep -c ' admitted ' "$dir/image-check.txt")" = 3 -a "$(grep -c ' denied:' "$dir/image-check.txt")" = 1
set +e
in_image vmgate check -f "$root/manifests/examples/vms/" --objects /etc/vmgate/cluster >"$dir/host-path.txt" 2>&1
host_path_status=$?
set -e
check "the host's files are not visible in the image" \
  bash -c '[[ $1 == 2 ]] && grep -qi "no such file" "$2"' _ "$host_path_status" "$dir/host-path.txt"

# Where the root would be written, the write fails: the sandbox is read-only for real. (Without
# --tls-cert, serve generates a development certificate into --dev-cert-dir.)
set +e
in_image vmgate serve --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --objects /etc/vmgate/cluster \
  --dev-cert-dir /var/vmgate-dev-cert >"$dir/readonly.log" 2>&1
readonly_status=$?
set -e
check "a write to the root is refused (exit $readonly_status)" \
  bash -c '[[ $1 == 2 ]] && grep -qi "read-only file system" "$2"' _ "$readonly_status" "$dir/readonly.log"

# --- serve --------------------------------------------------------------------------------------
https_port=$(free_port)
metrics_port=$(free_port)
in_image vmgate serve --listen "127.0.0.1:$https_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert /run/vmgate/tls/tls.crt --tls-key /run/vmgate/tls/tls.key --objects /etc/vmgate/cluster \
  --shutdown-delay 0s >"$dir/serve.log" 2>&1 &
serve_pid=$!
ready=false
if wait_until 10 curl -sf "http://127.0.0.1:$metrics_port/readyz" -o /dev/null; then ready=true; fi
check "vmgate serve in the image is ready" $ready
if ! $ready; then cat "$dir/serve.log" >&2; fi
response=$(curl -s --cacert "$tls/ca.crt" -H 'Content-Type: application/json' \
  --data-binary @manifests/examples/reviews/vm-create.json \
  "https://127.0.0.1:$https_port/virtualmachines-mutate?timeout=10s" || true)
check "an AdmissionReview answered over HTTPS from the image" python3 -c '
import json, sys
review = json.loads(sys.argv[1])
response = review["response"]
assert response["uid"] == "2b7d0c5e-8f1a-4c3b-9e6d-0a1b2c3d4e5f", response
assert response["allowed"] is True and response["patchType"] == "JSONPatch", response
' "$response"
check "metrics served from the image" \
  bash -c 'curl -sf "http://127.0.0.1:$1/metrics" | grep -q "^vmgate_webhook_requests_total{.*} 1$"' _ "$metrics_port"

# vmgate is the child of unshare (the PID namespace's init); SIGTERM goes to it, as a kubelet sends it.
image_pid=""
for ((i = 0; i < 50; i++)); do
  for candidate in $(cat "/proc/$serve_pid/task/"*/children 2>/dev/null); do
    image_pid=$candidate
  done
  # With sudo, unshare is one level further down.
  if [[ -n $image_pid && $(cat "/proc/$image_pid/comm" 2>/dev/null) != vmgate ]]; then
    image_pid=$(cat "/proc/$image_pid/task/"*/children 2>/dev/null | awk '{print $1}')
  fi
  [[ -n $image_pid ]] && break
  sleep 0.1
done
check "vmgate found under unshare" test "$(cat "/proc/$image_pid/comm" 2>/dev/null)" = vmgate
check "it runs as uid 65532" bash -c 'grep -Eq "^Uid:\s+65532\s+65532\s+65532\s+65532$" "/proc/$1/status"' _ "$image_pid"
if [[ -n $image_pid ]]; then "${as_root[@]}" kill -TERM "$image_pid"; fi
set +e
wait "$serve_pid"
serve_status=$?
set -e
serve_pid=""
check "vmgate serve exits 0 on SIGTERM (exit $serve_status)" test "$serve_status" = 0
check "nothing in its log about the file system" bash -c '! grep -Eqi "read-only|permission denied|no such file" "$1"' _ "$dir/serve.log"

check "the root is unchanged by the runs" test "$(snapshot)" = "$before"

# --- The same under podman: a real OCI runtime ---------------------------------------------------
check "podman: vmgate version" test "$("${podman_run[@]}" --rm "$image" version 2>&1)" = "$version"
set +e
"${podman_run[@]}" --rm -v "$root/manifests/examples:/m:ro" -w /m "$image" check -f vms/ --objects cluster/ \
  >"$dir/podman-check.txt" 2>&1
podman_check_status=$?
(cd manifests/examples && "$build/vmgate" check -f vms/ --objects cluster/ >"$dir/host-check-m.txt" 2>&1)
set -e
check "podman: vmgate check gives the host's verdicts (exit $podman_check_status)" \
  test "$podman_check_status" = 1 -a "$(cat "$dir/podman-check.txt")" = "$(cat "$dir/host-check-m.txt")"
set +e
"${podman_run[@]}" --rm -v "$root/manifests/examples/cluster:/etc/vmgate/cluster:ro" "$image" serve \
  --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --objects /etc/vmgate/cluster --dev-cert-dir /var/dev-cert \
  >"$dir/podman-readonly.log" 2>&1
podman_readonly_status=$?
set -e
check "podman: a write to the root is refused (exit $podman_readonly_status)" \
  bash -c '[[ $1 == 2 ]] && grep -qi "read-only file system" "$2"' _ "$podman_readonly_status" "$dir/podman-readonly.log"

https_port=$(free_port)
metrics_port=$(free_port)
container=vmgate-image-test-$$
"${podman_run[@]}" -d --name "$container" -v "$tls:/run/vmgate/tls:ro" \
  -v "$root/manifests/examples/cluster:/etc/vmgate/cluster:ro" "$image" serve \
  --listen "127.0.0.1:$https_port" --metrics-listen "127.0.0.1:$metrics_port" \
  --tls-cert /run/vmgate/tls/tls.crt --tls-key /run/vmgate/tls/tls.key --objects /etc/vmgate/cluster \
  --shutdown-delay 0s >/dev/null
podman_container=$container
ready=false
if wait_until 10 curl -sf "http://127.0.0.1:$metrics_port/readyz" -o /dev/null; then ready=true; fi
check "podman: vmgate serve is ready" $ready
response=$(curl -s --cacert "$tls/ca.crt" -H 'Content-Type: application/json' \
  --data-binary @manifests/examples/reviews/vm-create.json \
  "https://127.0.0.1:$https_port/virtualmachines-mutate?timeout=10s" || true)
check "podman: an AdmissionReview answered over HTTPS" python3 -c '
import json, sys
response = json.loads(sys.argv[1])["response"]
assert response["uid"] == "2b7d0c5e-8f1a-4c3b-9e6d-0a1b2c3d4e5f" and response["allowed"] is True, response
' "$response"
container_pid=$("${podman_[@]}" inspect --format '{{.State.Pid}}' "$container")
check "podman: uid 65532, no capability, no new privileges" bash -c '
  grep -Eq "^Uid:\s+65532\s+65532\s+65532\s+65532$" "/proc/$1/status" &&
  grep -Eq "^CapEff:\s+0+$" "/proc/$1/status" && grep -Eq "^NoNewPrivs:\s+1$" "/proc/$1/status"' _ "$container_pid"
"${podman_[@]}" stop -t 30 "$container" >/dev/null
check "podman: exit 0 on SIGTERM (podman stop)" \
  test "$("${podman_[@]}" inspect --format '{{.State.ExitCode}}' "$container")" = 0
"${podman_[@]}" rm "$container" >/dev/null
podman_container=""

remove_new_podman_cache "${as_root[@]}"
check "no host path created (/run/mount, CNI's lock, podman's default storage)" \
  test "$(host_paths)" = "$host_paths_before"

echo "image_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
