#!/bin/bash
# vmgate-launcher's own overhead: process start → "domain … running" on stderr, against
# `virsh -c <same URI> create` of the same XML (whole command), median of N runs, on
# test:///default and on qemu:///embed (TCG; the guest is the boot tests' hang guest, so it
# stays up). Usage: bench/launcher/launcher_bench.sh BUILD_DIR [RUNS]
set -euo pipefail
build=$1
runs=${2:-10}
launcher=$build/vmgate-launcher
kernel=$(ls /boot/vmlinuz-* | sort -V | tail -1)
work=$(mktemp -d /tmp/vmgate-launcher-bench.XXXXXX)
trap 'for p in "$work"/embed/run/qemu/*.pid; do [ -f "$p" ] && kill -KILL "$(cat "$p")" 2>/dev/null || true; done; rm -rf "$work"' EXIT
mkdir -p "$work/initramfs/bin" "$work/initramfs/proc"
cp /bin/busybox "$work/initramfs/bin/"
printf '#!/bin/busybox sh\nwhile true; do /bin/busybox sleep 3600; done\n' > "$work/initramfs/init"
chmod +x "$work/initramfs/init"
(cd "$work/initramfs" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initramfs.cpio.gz"
cat > "$work/vmi.yaml" <<VMI
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: bench, namespace: default}
spec:
  terminationGracePeriodSeconds: 0
  domain:
    memory: {guest: 128Mi}
    firmware:
      kernelBoot:
        kernelArgs: "console=ttyS0 quiet"
        container: {image: local/kernel, kernelPath: $kernel, initrdPath: $work/initramfs.cpio.gz}
    devices: {autoattachGraphicsDevice: false}
VMI
now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

measure() {  # uri, extra launcher args...
  local uri=$1; shift
  "$launcher" --vmi "$work/vmi.yaml" --emulation software --console-log "$work/serial.log" --kernel-boot-dir / \
    --print-xml "$@" > "$work/domain.xml"
  : > "$work/launcher.ms"; : > "$work/virsh.ms"
  for _ in $(seq 1 "$runs"); do
    local t0 t1 pid
    t0=$(now)
    coproc LAUNCH { exec "$launcher" --vmi "$work/vmi.yaml" --emulation software --console-log "$work/serial.log" \
      --kernel-boot-dir / "$@" 2>&1; }
    pid=$LAUNCH_PID
    while read -r line <&"${LAUNCH[0]}"; do [[ $line == *running* ]] && break; done
    t1=$(now)
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
    echo $(( (t1 - t0) / 1000 )) >> "$work/launcher.ms"
    t0=$(now)
    virsh -q -c "$uri" create "$work/domain.xml" > /dev/null
    t1=$(now)
    echo $(( (t1 - t0) / 1000 )) >> "$work/virsh.ms"
    virsh -q -c "$uri" destroy default_bench > /dev/null 2>&1 || true
  done
  local l v
  l=$(median < "$work/launcher.ms"); v=$(median < "$work/virsh.ms")
  printf '%-32s launcher %8.1f ms   virsh create %8.1f ms   ratio %.3f\n' "$uri" "$(echo "$l/1000" | bc -l)" \
    "$(echo "$v/1000" | bc -l)" "$(echo "$l/$v" | bc -l)"
}

measure test:///default --connect test:///default
measure "qemu:///embed?root=$work/embed" --root "$work/embed"
