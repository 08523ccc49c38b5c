#!/usr/bin/env python3
"""Paced AdmissionReview load on `vmgate serve`, for test/e2e/hung_apiserver_test.sh.

Usage: admission_load.py HTTPS_PORT METRICS_PORT CA_FILE NAMESPACE CACHED_PVC SECONDS OUT_JSON [MARKS_FILE]

Sends /virtualmachines-mutate reviews straight to vmgate (not through the apiserver, which the
test freezes) from separate processes, so that no client waits on another's GIL:
- "cached": VMs inferring their instancetype from CACHED_PVC (in vmgate's watch cache), paced
  at 100 reviews/s per process over a kept-alive connection; each answer is checked (allowed,
  the inferred instancetype in the patch).
- "miss": VMs naming a PVC that does not exist, a new name each time (always a cache miss and
  a live lookup), paced at 20/s per process.
- "readyz": GET /readyz on the metrics port every 50 ms on a new connection, as a kubelet probe.
Each record is (start time, latency, ok). The test marks the freeze's start and end in
MARKS_FILE (two lines of time.time()); the summary splits the records into before/during/after.
"""
import base64
import http.client
import json
import multiprocessing
import ssl
import sys
import time
import uuid

CACHED_RATE = 100
CACHED_PROCESSES = 2
MISS_RATE = 20
MISS_PROCESSES = 3


def review(namespace, pvc):
    vm = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "vm-" + uuid.uuid4().hex[:8], "namespace": namespace},
        "spec": {
            "runStrategy": "Halted",
            "instancetype": {"inferFromVolume": "root"},
            "template": {"spec": {"domain": {"devices": {}},
                                  "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": pvc}}]}},
        },
    }
    return json.dumps({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
            "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
            "namespace": namespace,
            "operation": "CREATE",
            "userInfo": {"username": "load"},
            "object": vm,
            "dryRun": False,
        },
    }).encode()


def inferred(answer):
    response = answer.get("response", {})
    if not response.get("allowed") or "patch" not in response:
        return False
    patch = json.loads(base64.b64decode(response["patch"]))
    return any(op.get("path") == "/spec/instancetype/name" and op.get("value") == "u1.medium" for op in patch)


def admission_client(kind, port, ca, namespace, pvc, seconds, rate, out):
    context = ssl.create_default_context(cafile=ca)
    connection = None
    records = []
    interval = 1.0 / rate
    next_send = time.time()
    end = next_send + seconds
    while next_send < end:
        delay = next_send - time.time()
        if delay > 0:
            time.sleep(delay)
        name = pvc if kind == "cached" else "absent-" + uuid.uuid4().hex[:12]
        body = review(namespace, name)
        start = time.time()
        ok = False
        try:
            if connection is None:
                connection = http.client.HTTPSConnection("localhost", port, context=context, timeout=15)
            connection.request("POST", "/virtualmachines-mutate?timeout=10s", body,
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
            if response.status == 200:
                answer = json.loads(data)
                ok = inferred(answer) if kind == "cached" else "response" in answer
        except (OSError, http.client.HTTPException, ValueError):
            connection = None
        records.append((start, time.time() - start, ok))
        next_send += interval
        # A client that fell behind does not burst to catch up: the rate is what the server gives.
        next_send = max(next_send, time.time())
    out.put((kind, records))


def readyz_client(port, seconds, out):
    records = []
    end = time.time() + seconds
    while time.time() < end:
        start = time.time()
        ok = False
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/readyz")
            ok = connection.getresponse().status == 200
            connection.close()
        except (OSError, http.client.HTTPException):
            pass
        records.append((start, time.time() - start, ok))
        time.sleep(0.05)
    out.put(("readyz", records))


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def window(records, start, end):
    chosen = [r for r in records if start <= r[0] < end]
    latencies = [r[1] for r in chosen]
    seconds = max(end - start, 1e-9)
    return {
        "requests": len(chosen),
        "rate": len(chosen) / seconds,
        "failed": sum(1 for r in chosen if not r[2]),
        "p50": percentile(latencies, 0.50),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies) if latencies else None,
    }


def main():
    port, metrics_port, ca, namespace, pvc, seconds, out_file = sys.argv[1:8]
    marks_file = sys.argv[8] if len(sys.argv) > 8 else None
    seconds = float(seconds)
    started = time.time()
    results = multiprocessing.Queue()
    processes = []
    for _ in range(CACHED_PROCESSES):
        processes.append(multiprocessing.Process(
            target=admission_client,
            args=("cached", int(port), ca, namespace, pvc, seconds, CACHED_RATE, results)))
    for _ in range(MISS_PROCESSES):
        processes.append(multiprocessing.Process(
            target=admission_client,
            args=("miss", int(port), ca, namespace, pvc, seconds, MISS_RATE, results)))
    processes.append(multiprocessing.Process(target=readyz_client, args=(int(metrics_port), seconds, results)))
    for process in processes:
        process.start()
    records = {"cached": [], "miss": [], "readyz": []}
    for _ in processes:
        kind, part = results.get()
        records[kind].extend(part)
    for process in processes:
        process.join()
    finished = time.time()
    marks = []
    if marks_file:
        with open(marks_file) as f:
            marks = [float(line) for line in f if line.strip()]
    windows = {"all": (started, finished)}
    if len(marks) >= 2:
        # The first second after each mark is left out of before/after: a GET already in flight
        # when the apiserver froze belongs to neither.
        windows = {"before": (started + 1, marks[0]), "during": (marks[0], marks[1]), "after": (marks[1] + 1, finished)}
    summary = {kind: {name: window(part, *span) for name, span in windows.items()} for kind, part in records.items()}
    with open(out_file, "w") as f:
        json.dump(summary, f, indent=1)
    json.dump(summary, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
