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

# user_kubeconfig FILE USER [CA-FILE] [SERVER]: a kubeconfig for the test's control plane whose
# user has the fields USER (a YAML flow mapping, e.g. {tokenFile: "..."}); the CA file and the
# server default to the control plane's (its CA written to $work/apiserver-ca.crt).
user_kubeconfig() {
  local ca=${3:-$work/apiserver-ca.crt} server=${4:-}
  if [[ -z $server ]]; then server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}'); fi
  if [[ -z ${3:-} ]]; then
    kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$ca"
  fi
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
current-context: e2e
clusters: [{name: e2e, cluster: {server: "$server", certificate-authority: "$ca"}}]
users: [{name: e2e, user: $2}]
contexts: [{name: e2e, context: {cluster: e2e, user: e2e}}]
EOF
}
# token_kubeconfig FILE TOKEN [CA-FILE] [SERVER]: the same with a bearer token.
token_kubeconfig() { user_kubeconfig "$1" "{token: \"$2\"}" "${@:3}"; }

# The host paths that mount(8) and podman create by default (libmount's utab lock directory,
# CNI's lock file, podman's default storage), which a test keeps in its namespaces and temporary
# directory: compare host_paths before and after.
host_paths() { ls -d /run/mount /etc/cni/net.d/cni.lock /var/lib/containers /run/containers 2>/dev/null || true; }
# Except one: podman's image library keeps its blob-info cache in /var/lib/containers/cache when
# run as root, whatever --root says. note_podman_cache records whether the machine had it;
# remove_new_podman_cache [PREFIX...] removes it again when the test made it, through PREFIX
# (sudo when the test runs podman with sudo).
note_podman_cache() { if [[ -e /var/lib/containers ]]; then podman_cache_was_there=1; else podman_cache_was_there=0; fi; }
remove_new_podman_cache() {
  if [[ ${podman_cache_was_there:-1} == 0 ]]; then "$@" rm -rf /var/lib/containers; fi
}

# A free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# e2e_start_testenv [--node]: a temporary directory `dir` (work files in `work=$dir/work`), a real
# control plane in it (tools/testenv up, with a node when --node; KUBECONFIG exported), and an EXIT trap that SIGTERMs the process
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
e2e_start_testenv() { # [--node]
  dir="$(mktemp -d)"
  pids=()
  trap e2e_cleanup EXIT
  eval "$(tools/testenv up "$dir" "$@")"
  work=$dir/work
  mkdir -p "$work"
}

# check_down DIR PIDS: `tools/testenv down DIR` checked, then each of PIDS gone and no process
# left whose command line names DIR.
check_down() {
  local down_dir=$1 pid
  check "down" tools/testenv down "$down_dir"
  for pid in $2; do
    check "process $pid is gone" bash -c "! kill -0 $pid 2>/dev/null"
  done
  # (pgrep run here, not under bash -c, whose own command line would name the directory.)
  no_process_left() { ! pgrep -af -- "$down_dir/"; }
  check "no process names $down_dir" no_process_left
}
