#!/usr/bin/env bash
# Soak: at least 1 000 000 AdmissionReviews over 64 keep-alive connections against `vmgate serve`
# (server on one core, wrk on the other), in rounds of ROUND seconds; prints the server's
# resident memory after each round and fails on any error. Needs wrk and the benchmark harness
# in the shared data directory beside the checkout (the default of VMGATE_SHARED_DIR; its bench/
# holds wrk's post.lua, the bodies and the certificate script).
#
#   bench/soak.sh [build/vmgate]      env: TOTAL=1000000 CONNS=64 BODY=small ROUND=10
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/vmgate}
shared=$(cd .. && pwd)/shared/bench
total=${TOTAL:-1000000}
conns=${CONNS:-64}
body=$shared/bodies/admissionreview-${BODY:-small}.json
round=${ROUND:-10}
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

"$shared/gen-certs.sh" "$work/certs" rsa >/dev/null
port=19543
taskset -c 1 "$binary" serve --listen 127.0.0.1:$port --metrics-listen 127.0.0.1:19580 \
  --tls-cert "$work/certs/server.crt" --tls-key "$work/certs/server.key" \
  --objects "$(cd .. && pwd)/shared/data/common-instancetypes" --access-log true 2>"$work/server.log" &
server=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:19580/readyz >/dev/null && break; sleep 0.1; done

rss() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }
done_requests=0
errors=0
printf '%10s %12s %10s %8s\n' round requests rss_kib errors
i=0
while ((done_requests < total)); do
  i=$((i + 1))
  out=$(WRK_BODY=$body WRK_PATH=/virtualmachines-mutate taskset -c 0 \
    wrk -t1 -c"$conns" -d"${round}s" -s "$shared/wrk/post.lua" "https://127.0.0.1:$port" 2>&1)
  line=$(grep '^RESULT' <<<"$out")
  requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<<"$line")
  round_errors=0
  for key in err_connect err_read err_write err_status err_timeout; do
    round_errors=$((round_errors + $(sed -E "s/.*$key=([0-9]+).*/\1/" <<<"$line")))
  done
  done_requests=$((done_requests + requests))
  errors=$((errors + round_errors))
  printf '%10d %12d %10d %8d\n' "$i" "$done_requests" "$(rss)" "$round_errors"
done
admissions=$(grep -c '"msg":"admission"' "$work/server.log" || true)
echo "total requests: $done_requests, errors: $errors, access-log lines: $admissions"
((errors == 0))
