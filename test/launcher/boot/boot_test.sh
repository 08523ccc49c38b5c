#!/bin/bash
# Real boots under TCG through qemu:///embed (launcher-libvirt.md B.5): Debian's kernel from
# /boot/vmlinuz-* and a busybox initramfs built here, booted from a VMI's firmware.kernelBoot.
#   poweroff: marker on the serial log, guest reads SMBIOS uuid+serial, powers off → exit 0
#   efi:      the same through OVMF (EFI without Secure Boot)
#   hang:     guest ignores ACPI; SIGTERM → destroyed at grace end → exit non-zero, no QEMU left
# Usage: boot_test.sh LAUNCHER CASE. Prerequisites missing: skip (77), but fail when CI=true.
set -u
launcher=$1
case_name=$2
skip() {
  if [ "${CI:-}" = true ]; then echo "FAIL (CI): $*"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || skip "no /boot/vmlinuz-* (tools/install-deps extracts linux-image-amd64's)"
[ -x /bin/busybox ] || skip "busybox-static is not installed"
command -v cpio >/dev/null || skip "cpio is not installed"
[ -e /usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so ] || skip "libvirt-daemon-driver-qemu missing"
getent passwd libvirt-qemu >/dev/null || skip "user libvirt-qemu missing (the QEMU driver needs it)"

work=$(mktemp -d /tmp/vmgate-boot.XXXXXX)
launcher_pid=
cleanup() {
  [ -n "$launcher_pid" ] && kill -KILL "$launcher_pid" 2>/dev/null
  for pidfile in "$work"/embed/run/qemu/*.pid; do
    [ -f "$pidfile" ] && kill -KILL "$(cat "$pidfile")" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/initramfs/bin" "$work/initramfs/proc" "$work/initramfs/sys" "$work/initramfs/dev"
cp /bin/busybox "$work/initramfs/bin/busybox"
cat > "$work/initramfs/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
echo "VMGATE-DMI uuid=$(/bin/busybox cat /sys/class/dmi/id/product_uuid) serial=$(/bin/busybox cat /sys/class/dmi/id/product_serial)"
if /bin/busybox grep -q vmgate.mode=hang /proc/cmdline; then
  echo "VMGATE-HANG"
  while true; do /bin/busybox sleep 3600; done
fi
echo "VMGATE-BOOT-OK"
/bin/busybox poweroff -f
INIT
chmod +x "$work/initramfs/init"
(cd "$work/initramfs" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initramfs.cpio.gz"

mode=poweroff
[ "$case_name" = hang ] && mode=hang
bootloader=""
[ "$case_name" = efi ] && bootloader="bootloader: {efi: {secureBoot: false}}"
[ "$case_name" = efi ] && { [ -f /usr/share/OVMF/OVMF_CODE_4M.fd ] || skip "ovmf is not installed"; }
cat > "$work/vmi.yaml" <<VMI
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: boot-$case_name
  namespace: default
spec:
  terminationGracePeriodSeconds: 5
  domain:
    machine:
      type: q35
    cpu:
      model: host-model
    memory:
      guest: 256Mi
    firmware:
      uuid: 11111111-2222-4333-8444-555555555555
      serial: vmgate-serial-42
      $bootloader
      kernelBoot:
        kernelArgs: "console=ttyS0 quiet panic=-1 vmgate.mode=$mode"
        container:
          image: local/kernel:latest
          kernelPath: $kernel
          initrdPath: $work/initramfs.cpio.gz
    devices:
      autoattachGraphicsDevice: false
VMI

"$launcher" --vmi "$work/vmi.yaml" --root "$work/embed" --emulation software --kernel-boot-dir / \
  --console-log "$work/serial.log" --status-file "$work/status.json" 2> "$work/launcher.err" &
launcher_pid=$!

wait_for() {  # pattern, seconds
  for _ in $(seq 1 "$2"); do
    grep -q "$1" "$work/serial.log" 2>/dev/null && return 0
    kill -0 "$launcher_pid" 2>/dev/null || { grep -q "$1" "$work/serial.log" 2>/dev/null; return; }
    sleep 1
  done
  return 1
}

case "$case_name" in
  poweroff | efi)
    wait_for VMGATE-BOOT-OK 180 || { echo "no marker"; cat "$work/launcher.err" "$work/serial.log"; exit 1; }
    for _ in $(seq 1 120); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 1; done
    wait "$launcher_pid"; rc=$?; launcher_pid=
    cat "$work/launcher.err"
    [ "$rc" -eq 0 ] || { echo "launcher exited $rc"; exit 1; }
    grep -q "VMGATE-DMI uuid=11111111-2222-4333-8444-555555555555 serial=vmgate-serial-42" "$work/serial.log" ||
      { echo "SMBIOS not seen by the guest"; cat "$work/serial.log"; exit 1; }
    grep -q '"phase":"Succeeded"' "$work/status.json" || { cat "$work/status.json"; exit 1; }
    ;;
  hang)
    wait_for VMGATE-HANG 180 || { echo "no marker"; cat "$work/launcher.err" "$work/serial.log"; exit 1; }
    kill -TERM "$launcher_pid"
    for _ in $(seq 1 120); do kill -0 "$launcher_pid" 2>/dev/null || break; sleep 1; done
    wait "$launcher_pid"; rc=$?; launcher_pid=
    cat "$work/launcher.err"
    [ "$rc" -ne 0 ] || { echo "launcher exited 0 for a destroyed guest"; exit 1; }
    grep -q "grace period of 5 s expired" "$work/launcher.err" || exit 1
    for pidfile in "$work"/embed/run/qemu/*.pid; do
      if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then echo "QEMU left running"; exit 1; fi
    done
    ;;
esac
echo PASS
