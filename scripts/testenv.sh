#!/usr/bin/env bash
# Starts or stops the local control plane (tests/testenv) for the tests.
#
#   scripts/testenv.sh start TESTENV_BIN DIR   # returns once it is ready
#   scripts/testenv.sh stop  TESTENV_BIN DIR
#
# The control plane runs detached, its output in DIR/up.log; DIR/env holds
# the server address and credentials (see tests/testenv/README.md).
set -euo pipefail

cmd=${1:?start|stop}
bin=${2:?testenv binary}
dir=${3:?state directory}

stop() {
  local pid
  [ -f "$dir/up.pid" ] || return 0
  pid=$(cat "$dir/up.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/up.pid"
}

case "$cmd" in
  start)
    if [ ! -x "$bin" ]; then
      echo "testenv: $bin is not built; run 'make testenv'" >&2
      exit 1
    fi
    stop
    rm -rf "$dir"
    mkdir -p "$dir"
    # kube-scheduler runs beside us: tests prove we leave its pods alone,
    # and the benchmark compares against it.
    setsid "$bin" up --dir "$dir" --with-scheduler </dev/null >"$dir/up.log" 2>&1 &
    echo $! >"$dir/up.pid"
    for _ in $(seq 1 1200); do
      if grep -q '^testenv ready' "$dir/up.log"; then
        grep '^testenv ready' "$dir/up.log"
        exit 0
      fi
      if ! kill -0 "$(cat "$dir/up.pid")" 2>/dev/null; then
        echo "testenv: exited before it was ready:" >&2
        tail -n 50 "$dir/up.log" >&2
        exit 1
      fi
      sleep 0.1
    done
    echo "testenv: not ready after 120 s:" >&2
    tail -n 50 "$dir/up.log" >&2
    stop
    exit 1
    ;;
  stop)
    stop
    ;;
  *)
    echo "usage: $0 start|stop TESTENV_BIN DIR" >&2
    exit 2
    ;;
esac
