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
