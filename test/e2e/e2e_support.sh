# Sourced by the end-to-end scripts: `check NAME COMMAND...` runs COMMAND and counts it in
# `passed` or `failed`, printing "ok: NAME" or "FAILED: NAME" (on stderr).
passed=0
failed=0
check() { # NAME COMMAND...
  local name=$1
  shift
  if "$@"; then
    echo "ok: $name"
    passed=$((passed + 1))
  else
    echo "FAILED: $name" >&2
    failed=$((failed + 1))
  fi
}

# wait_until SECONDS COMMAND...: retries COMMAND every 0.2 s until it succeeds or the time is up.
wait_until() { # SECONDS COMMAND...
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# A free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# e2e_start_testenv: a temporary directory `dir` (work files in `work=$dir/work`), a real control
# plane in it (tools/testenv up; KUBECONFIG exported), and an EXIT trap that SIGTERMs the process
# group of every pid in `pids` and waits for them, runs `e2e_extra_cleanup` when the script
# defines it, brings the control plane down and removes the directory (KEEP_E2E_DIR=1 keeps it).
e2e_cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if declare -F e2e_extra_cleanup >/dev/null; then e2e_extra_cleanup; fi
  tools/testenv down "$dir" >/dev/null 2>&1 || true
  if [[ -n ${KEEP_E2E_DIR:-} ]]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
}
e2e_start_testenv() {
  dir="$(mktemp -d)"
  pids=()
  trap e2e_cleanup EXIT
  eval "$(tools/testenv up "$dir")"
  work=$dir/work
  mkdir -p "$work"
}
