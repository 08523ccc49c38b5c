#!/usr/bin/env bash
# The test guest image localhost/vmgate-guest:dev (docs/image.md, "The test guest";
# tools/image/guest/build): built into a temporary directory, then
#  - the build: a second build into another directory gives the same bytes; a build into an
#    up-to-date directory does nothing;
#  - the containerDisk format: the OCI archive's index names the image for podman and containerd,
#    its blobs match their digests and sizes, its one layer holds exactly /disk/disk.img (the disk,
#    uid/gid 107, mode 0444); the disk has one active EFI system partition at 1 MiB;
#  - importers: `ctr -n k8s.io images import` into a private containerd (its own root, state and
#    socket) and `podman load` into private storage both name it localhost/vmgate-guest:dev;
#  - the guest under TCG with BIOS and with EFI (OVMF, no Secure Boot), twice each:
#    through QEMU with the console on a socket (test/e2e/guest_console.py): the marker
#    VMGATE-GUEST-READY, a line typed on the console executed by the root shell, QEMU's
#    system_powerdown (the ACPI power button) powering it off; and through the real
#    vmgate-launcher from a VMI with the image's layer as its containerDisk volume (the pod's image
#    volume): the marker in the console log, SIGTERM -> ACPI -> the guest powers off -> exit 0,
#    no QEMU left.
# Missing importers (containerd, podman) are skipped with a notice, failed when CI=true.
# Runs as root (through sudo otherwise).
# Usage: test/e2e/guest_image_test.sh   (after the build of vmgate-launcher; VMGATE_BUILD_DIR
# defaults to build)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
build=${VMGATE_BUILD_DIR:-$root/build}
launcher=$build/vmgate-launcher
[[ -x $launcher ]] || {
  echo "guest_image_test: build vmgate-launcher first ($launcher)" >&2
  exit 2
}
# Root: a private containerd (overlayfs snapshots), the embedded QEMU driver as the boot tests run it.
if [[ $(id -u) -ne 0 ]]; then
  exec sudo --preserve-env=CI,KEEP_E2E_DIR VMGATE_BUILD_DIR="$build" "$root/test/e2e/guest_image_test.sh" "$@"
fi
started=$SECONDS

# shellcheck source=test/e2e/e2e_support.sh
source test/e2e/e2e_support.sh

host_paths_before=$(host_paths)
note_podman_cache
dir="$(mktemp -d)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  # A launcher killed above leaves its QEMU: the embedded driver's pid files name it.
  for file in "$dir"/launcher-*/embed/run/qemu/*.pid; do
    [[ -f $file ]] && kill -KILL "$(cat "$file")" 2>/dev/null || true
  done
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
  remove_new_podman_cache  # after the podman calls above
}
trap cleanup EXIT

skip() { # WHAT
  if [[ ${CI:-} == true ]]; then
    echo "FAILED: $1 is missing (CI=true)" >&2
    failed=$((failed + 1))
  else
    echo "skipped: $1 is missing"
  fi
}

# --- the build ------------------------------------------------------------------------------
image=$dir/image
build_start=$SECONDS
check "tools/image/guest/build writes disk.img and vmgate-guest.tar" \
  bash -c "tools/image/guest/build '$image' 2>'$dir/build.err' && [[ -f '$image/disk.img' && -f '$image/vmgate-guest.tar' ]]"
echo "   (cold build: $((SECONDS - build_start)) s)"
check "an up-to-date OUTDIR is left as it is" \
  bash -c "tools/image/guest/build '$image' 2>&1 | grep -q 'is up to date'"
tools/image/guest/build "$dir/again" 2>/dev/null
check "the same inputs give the same disk and the same archive" \
  bash -c "cmp -s '$image/disk.img' '$dir/again/disk.img' && cmp -s '$image/vmgate-guest.tar' '$dir/again/vmgate-guest.tar'"
rm -rf "$dir/again"

# --- the containerDisk format ---------------------------------------------------------------
# Prints what it checked; extracts the layer's disk/ into the pod's image volume for the launcher.
pod=$dir/pod
volume=$pod/var/run/kubevirt-image-volume/disk_0
mkdir -p "$volume"
check "the archive: index names, digests and sizes, one layer holding exactly /disk/disk.img (107:107, 0444)" \
  python3 - "$image/vmgate-guest.tar" "$image/disk.img" "$volume" <<'PY'
import gzip, hashlib, io, json, sys, tarfile
archive, disk, volume = sys.argv[1:]
with tarfile.open(archive) as tar:
    names = set(tar.getnames())
    assert json.load(tar.extractfile("oci-layout")) == {"imageLayoutVersion": "1.0.0"}
    def blob(descriptor):
        data = tar.extractfile("blobs/sha256/" + descriptor["digest"].split(":")[1]).read()
        assert len(data) == descriptor["size"], descriptor
        assert "sha256:" + hashlib.sha256(data).hexdigest() == descriptor["digest"], descriptor
        return data
    index = json.load(tar.extractfile("index.json"))
    [descriptor] = index["manifests"]
    ref = "localhost/vmgate-guest:dev"
    assert descriptor["annotations"] == {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref}
    assert descriptor["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    manifest = json.loads(blob(descriptor))
    config = json.loads(blob(manifest["config"]))
    assert (config["os"], config["architecture"]) == ("linux", "amd64"), config
    [layer_descriptor] = manifest["layers"]
    assert layer_descriptor["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
    layer = gzip.decompress(blob(layer_descriptor))
    assert config["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}
with tarfile.open(fileobj=io.BytesIO(layer)) as tar:
    members = {member.name.rstrip("/"): member for member in tar.getmembers()}
    assert sorted(members) == ["disk", "disk/disk.img"], sorted(members)
    image = members["disk/disk.img"]
    assert (image.isfile(), image.uid, image.gid, image.mode) == (True, 107, 107, 0o444), image.get_info()
    assert tar.extractfile(image).read() == open(disk, "rb").read(), "the layer's disk is not disk.img"
    tar.extractall(volume)
mbr = open(disk, "rb").read(512)
assert mbr[510:] == b"\x55\xaa"
entries = [mbr[446 + 16 * i: 462 + 16 * i] for i in range(4)]
assert entries[0][0] == 0x80 and entries[0][4] == 0xEF and int.from_bytes(entries[0][8:12], "little") == 2048, entries[0]
assert all(entry == bytes(16) for entry in entries[1:])
PY

# --- importers ------------------------------------------------------------------------------
if command -v containerd >/dev/null && command -v ctr >/dev/null; then
  c=$dir/containerd
  mkdir -p "$c"
  cat >"$c/config.toml" <<TOML
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$c/containerd.sock"
[ttrpc]
  address = "$c/containerd-ttrpc.sock"
TOML
  containerd --config "$c/config.toml" >"$c/log" 2>&1 &
  containerd_pid=$!
  pids+=("$containerd_pid")
  ctr_=(ctr --address "$c/containerd.sock" -n k8s.io)
  check "a private containerd starts" wait_until 20 test -S "$c/containerd.sock"
  check "ctr -n k8s.io images import names it localhost/vmgate-guest:dev" \
    bash -c "$(printf '%q ' "${ctr_[@]}") images import '$image/vmgate-guest.tar' >/dev/null && $(printf '%q ' "${ctr_[@]}") images ls -q | grep -qx localhost/vmgate-guest:dev"
  check "... and unpacks /disk/disk.img (107:107, 0444)" \
    bash -c "stat -c '%u:%g %a %s' '$c'/root/io.containerd.snapshotter.v1.overlayfs/snapshots/*/fs/disk/disk.img | grep -qx '107:107 444 $(stat -c %s "$image/disk.img")'"
  kill -TERM "$containerd_pid"
  wait "$containerd_pid" || true
  pids=()
  # The snapshot mounts of a private containerd die with it; its files are removed with $dir.
else
  skip "containerd"
fi
if command -v podman >/dev/null; then
  # Its network configuration (CNI's lock file) and temporary files in the test's directory too.
  podman_=(podman --root "$dir/podman/root" --runroot "$dir/podman/run" --storage-driver vfs
    --network-config-dir "$dir/podman/net" --tmpdir "$dir/podman/tmp")
  check "podman load names it localhost/vmgate-guest:dev" \
    bash -c "$(printf '%q ' "${podman_[@]}") load -q -i '$image/vmgate-guest.tar' >/dev/null 2>&1 && $(printf '%q ' "${podman_[@]}") image exists localhost/vmgate-guest:dev"
  "${podman_[@]}" rmi -af >/dev/null 2>&1 || true
else
  skip "podman"
fi

# --- the guest, under QEMU and under vmgate-launcher, BIOS and EFI ------------------------------
for firmware in bios efi; do
  boot_start=$SECONDS
  check "$firmware, QEMU: the marker, a typed line executed, powered off by the power button" \
    python3 test/e2e/guest_console.py "$image/disk.img" "$firmware" "$dir/qemu-$firmware"
  echo "   ($firmware under QEMU: $((SECONDS - boot_start)) s)"

  boot_start=$SECONDS
  run=$dir/launcher-$firmware
  mkdir -p "$run"
  efi=""
  [[ $firmware == efi ]] && efi="    firmware: {bootloader: {efi: {secureBoot: false}}}"
  cat >"$run/vmi.yaml" <<YAML
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: guest-$firmware, namespace: default}
spec:
  terminationGracePeriodSeconds: 60
  domain:
    machine: {type: q35}
    memory: {guest: 256Mi}
$efi
    devices:
      autoattachGraphicsDevice: false
      autoattachPodInterface: false
      disks: [{name: root, disk: {bus: virtio}}]
  volumes: [{name: root, containerDisk: {image: localhost/vmgate-guest:dev}}]
YAML
  "$launcher" --vmi "$run/vmi.yaml" --root "$run/embed" --emulation software --pod-root "$pod" \
    --console-log "$run/serial.log" --status-file "$run/status.json" >"$run/launcher.out" 2>"$run/launcher.err" &
  launcher_pid=$!
  pids+=("$launcher_pid")
  if ! check "$firmware, vmgate-launcher: VMGATE-GUEST-READY in the console log" \
    wait_until 240 grep -qs VMGATE-GUEST-READY "$run/serial.log"; then
    tail -20 "$run/launcher.err" "$run/serial.log" >&2 || true
  fi
  kill -TERM "$launcher_pid" 2>/dev/null || true
  status=0
  wait "$launcher_pid" || status=$?
  pids=()
  check "$firmware, vmgate-launcher: SIGTERM -> the guest powers off by ACPI -> exit 0" \
    bash -c "[[ $status == 0 ]] && grep -q VMGATE-GUEST-POWEROFF '$run/serial.log' && grep -q 'guest shut down after the stop request' '$run/launcher.err'"
  qemu_left=0
  for file in "$run"/embed/run/qemu/*.pid; do
    [[ -f $file ]] && kill -0 "$(cat "$file")" 2>/dev/null && qemu_left=1
  done
  check "$firmware, vmgate-launcher: no QEMU is left" test "$qemu_left" = 0
  check "$firmware, vmgate-launcher: the containerDisk image is unchanged (the guest runs on an overlay)" \
    cmp -s "$volume/disk/disk.img" "$image/disk.img"
  echo "   ($firmware under vmgate-launcher: $((SECONDS - boot_start)) s)"
done

remove_new_podman_cache
check "no host path created (/run/mount, CNI's lock, podman's default storage)" \
  test "$(host_paths)" = "$host_paths_before"

echo "guest image e2e: $passed passed, $failed failed ($((SECONDS - started)) s)"
((failed == 0))
