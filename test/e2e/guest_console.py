#!/usr/bin/env python3
"""Boots the test guest's disk under QEMU (TCG) with its serial console on a socket and checks it
as a user at that console would (test/e2e/guest_image_test.sh; docs/image.md, "The test guest"):
the marker VMGATE-GUEST-READY, a typed line executed by the root shell (`echo VMGATE-TYPED-$((6*7))`
answered by VMGATE-TYPED-42: the answer is not in the typed text), and an ACPI power-button press
(QEMU's monitor `system_powerdown`) powering the guest off: QEMU exits 0 by itself.

Usage: guest_console.py DISK bios|efi WORKDIR [MEMORY_MIB]
Prints one line per step with the time since QEMU started and exits 1 on the first failure,
printing the console. The typed line is sent again every 5 s until answered (a line typed while
the shell starts may be lost, as on a real console); timeouts are generous for TCG.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"


class Console:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.settimeout(0.2)
        self.text = b""

    def wait_for(self, marker, timeout, send=None, every=5.0, alive=lambda: True):
        deadline, last_send = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            if send is not None and (last_send is None or time.monotonic() - last_send > every):
                self.sock.sendall(send)
                last_send = time.monotonic()
            try:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return marker in self.text
                self.text += chunk
            except socket.timeout:
                pass
            if marker in self.text:
                return True
            if not alive():
                return marker in self.text
        return False


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[2] not in ("bios", "efi"):
        print(__doc__, file=sys.stderr)
        return 2
    disk, firmware, work = sys.argv[1], sys.argv[2], sys.argv[3]
    memory = sys.argv[4] if len(sys.argv) == 5 else "256"
    os.makedirs(work, exist_ok=True)
    serial, monitor = os.path.join(work, "serial.sock"), os.path.join(work, "monitor.sock")
    # -S: the CPU starts only on the monitor's `cont`, once the console is connected (nothing is
    # missed, and QEMU never blocks waiting for a client). Its own session and output files: a
    # QEMU left behind would hold neither the caller's terminal nor its pipes.
    command = ["qemu-system-x86_64", "-S", "-machine", "q35,accel=tcg", "-m", memory, "-nodefaults",
               "-display", "none", "-chardev", f"socket,id=serial0,path={serial},server=on,wait=off",
               "-serial", "chardev:serial0", "-monitor", f"unix:{monitor},server=on,wait=off",
               "-drive", f"file={disk},if=virtio,format=raw,snapshot=on"]
    if firmware == "efi":
        shutil.copyfile(OVMF_VARS, os.path.join(work, "vars.fd"))
        command += ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={OVMF_CODE}",
                    "-drive", f"if=pflash,format=raw,unit=1,file={os.path.join(work, 'vars.fd')}"]
    started = time.monotonic()
    qemu_err = open(os.path.join(work, "qemu.err"), "wb")
    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=qemu_err, stderr=qemu_err,
                            start_new_session=True)
    # A test killed by a signal still stops its QEMU (the finally below).
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda *_: sys.exit(1))
    console = None
    alive = lambda: qemu.poll() is None

    def step(name, ok):
        print(f"{firmware}: {'ok' if ok else 'FAILED'}: {name} ({time.monotonic() - started:.1f} s)", flush=True)
        if not ok:
            if console is not None:
                print(console.text.decode(errors="replace"), flush=True)
            print(open(os.path.join(work, "qemu.err"), errors="replace").read(), flush=True)
        return ok

    def connect(path):
        deadline = time.monotonic() + 30
        while alive() and time.monotonic() < deadline:
            try:
                return Console(path)
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.05)
        return None

    try:
        console = connect(serial)
        control = connect(monitor)
        if not step("QEMU's console and monitor accept connections",
                    console is not None and control is not None and control.wait_for(b"(qemu)", 30, alive=alive)):
            return 1
        control.sock.sendall(b"cont\n")
        if not step("VMGATE-GUEST-READY on the serial console", console.wait_for(b"VMGATE-GUEST-READY", 240, alive=alive)):
            return 1
        if not step("a typed line is executed (VMGATE-TYPED-42)",
                    console.wait_for(b"VMGATE-TYPED-42", 60, send=b"echo VMGATE-TYPED-$((6*7))\n", alive=alive)):
            return 1
        control.sock.sendall(b"system_powerdown\n")
        if not step("the power button powers it off (VMGATE-GUEST-POWEROFF)",
                    console.wait_for(b"VMGATE-GUEST-POWEROFF", 60, alive=alive)):
            return 1
        try:
            status = qemu.wait(60)
        except subprocess.TimeoutExpired:
            status = None
        return 0 if step(f"QEMU exits 0 by itself (status {status})", status == 0) else 1
    finally:
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()


if __name__ == "__main__":
    sys.exit(main())
