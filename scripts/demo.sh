#!/usr/bin/env bash
# make demo: metrics-scheduler placing pods by live metrics, on a local
# control plane, in a few minutes.
#
#   scripts/demo.sh [BUILD_DIR]      # after `make build testenv`
#
# Starts the testenv (a real kube-apiserver, controller manager and
# kube-scheduler; 8 kubelet-less nodes), a real Prometheus fed by a
# synthetic metrics feed (build/demo/metrics-feed: per node HTTP latency, IO
# latency and error rate), and the scheduler with the RBAC of
# manifests/rbac.yaml. Then:
#   1. applies manifests/example/workload.yaml: pods go to the best nodes;
#   2. degrades the best node and scales up: the new pods go elsewhere;
#   3. stops Prometheus and scales up again: fallback scoring takes over.
# Each step prints the table (node, metrics, score from `metrics-scheduler
# explain`, pods placed). Everything it started is stopped on exit, Ctrl-C
# included. Needs no TTY.
set -euo pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MS=$BUILD/metrics-scheduler
FEED=$BUILD/demo/metrics-feed
TESTENV=$BUILD/testenv/testenv
for bin in "$MS" "$FEED" "$TESTENV"; do
  [ -x "$bin" ] || { echo "demo: $bin is missing; run 'make build testenv'" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/metrics-scheduler-demo.XXXXXX)
TE=$WORK/testenv
PROFILE=$WORK/profile
CONFIG=$WORK/config.yaml
WORKLOAD=manifests/example/workload.yaml
NS=demo
FEED_PID=
MS_PID=
START=$(date +%s)

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  echo
  echo "== cleaning up"
  if [ -n "$MS_PID" ] && kill -0 "$MS_PID" 2>/dev/null; then
    kill -TERM "$MS_PID" 2>/dev/null || true
    wait "$MS_PID" 2>/dev/null || true
  fi
  if [ -n "$FEED_PID" ] && kill -0 "$FEED_PID" 2>/dev/null; then
    kill -TERM "$FEED_PID" 2>/dev/null || true   # stops Prometheus too
    wait "$FEED_PID" 2>/dev/null || true
  fi
  bash scripts/testenv.sh stop "$TESTENV" "$TE" || true
  if [ "$rc" -eq 130 ] || [ "$rc" -eq 143 ]; then
    rm -rf "$WORK"
    echo "interrupted"
  elif [ "$rc" -ne 0 ]; then
    echo "demo failed (exit $rc); scheduler log: $WORK/scheduler.log" >&2
    tail -n 20 "$WORK/scheduler.log" 2>/dev/null >&2 || true
  else
    rm -rf "$WORK"
  fi
  echo "stopped everything the demo started ($(( $(date +%s) - START ))s in all)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step() { echo; echo "== $*"; }

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.5 s.
wait_for() {
  local timeout=$1 what=$2
  shift 2
  local deadline=$(( $(date +%s) + timeout ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "demo: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.5
  done
}

kubectl() { "$TESTENV" kubectl --kubeconfig "$TE/admin.kubeconfig" "$@"; }

# GET a path of the scheduler's status server (no curl needed).
http_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$MS_PORT" || return 1
  printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$1" >&3
  cat <&3
  exec 3>&-
}
# One sample of the scheduler's /metrics; 0 when absent.
metric() {
  http_get /metrics 2>/dev/null | awk -v s="$1" '$1 == s {v = $2} END {print v + 0}'
}

# node http_seconds io_seconds error_ratio: eight distinct behaviours.
write_profile() {
  cat >"$PROFILE" <<PROFILE_EOF
node-0 0.120 0.0040 0.010
node-1 0.045 0.0020 0.002
node-2 0.300 0.0150 0.050
node-3 ${BEST:-0.018 0.0010 0.001}
node-4 0.080 0.0080 0.005
node-5 0.060 0.0030 0.030
node-6 0.200 0.0180 0.008
node-7 0.035 0.0060 0.004
${PROMETHEUS:-}
PROFILE_EOF
}

pods_on() {
  kubectl -n "$NS" get pods -o 'custom-columns=NODE:.spec.nodeName' --no-headers 2>/dev/null
}
all_bound() {
  local want=$1 got
  got=$(pods_on | grep -c '^node-' || true)
  [ "$got" -eq "$want" ]
}

# The table: per node the metrics being fed, the score `explain` gives a new
# pod of the example workload, and the pods placed there.
show_table() {
  local explain
  explain=$("$MS" explain --config "$CONFIG" --kubeconfig "$TE/scheduler.kubeconfig" \
              --seed 1 "$WORKLOAD" 2>"$WORK/explain.err") || explain=""
  local placed
  placed=$(pods_on)
  printf '%-8s %11s %10s %8s %7s %5s   (score: what explain gives the next pod)\n' \
    node "http (ms)" "io (ms)" errors score pods
  while read -r node http io err; do
    [[ "$node" == node-* ]] || continue
    local score pods
    score=$(awk -v n="$node" '$1 == n {print $2}' <<<"$explain")
    pods=$(grep -cx "$node" <<<"$placed" || true)
    if [ "${PROMETHEUS:-}" = "prometheus down" ]; then http=-; io=-; err=-; fi
    awk -v n="$node" -v h="$http" -v i="$io" -v e="$err" -v s="${score:--}" -v p="$pods" \
      'BEGIN {
         if (h == "-") printf "%-8s %11s %10s %8s %7s %5d\n", n, "-", "-", "-", s, p;
         else printf "%-8s %11.1f %10.1f %7.1f%% %7s %5d\n", n, h * 1000, i * 1000, e * 100, s, p;
       }'
  done <"$PROFILE"
  if [ -n "$explain" ]; then
    grep '^best node' <<<"$explain" | sed 's/^/explain: /'
  else
    local why
    why=$(sed -n 's/.*\(metrics backend .*: no metric could be fetched\).*/\1/p' "$WORK/explain.err")
    echo "explain: exit 1: ${why:-$(tail -n 1 "$WORK/explain.err")}"
  fi
}

latest_events() {
  kubectl -n "$NS" get events --field-selector reason=Scheduled \
    --sort-by=.metadata.creationTimestamp -o 'custom-columns=MSG:.message' --no-headers |
    tail -n "$1" | sed 's/^/  /'
}

step "starting the local control plane (etcd, kube-apiserver, controller manager, kube-scheduler)"
bash scripts/testenv.sh start "$TESTENV" "$TE" >/dev/null
"$TESTENV" nodes --kubeconfig "$TE/admin.kubeconfig" --count 8 --prefix node- --quiet
kubectl apply -f manifests/namespace.yaml -f manifests/rbac.yaml >/dev/null
kubectl create namespace "$NS" >/dev/null
echo "8 nodes of 4 cpu and 16Gi; RBAC: manifests/rbac.yaml"

step "starting Prometheus and the synthetic metrics feed"
write_profile
"$FEED" "$PROFILE" >"$WORK/feed.out" 2>"$WORK/feed.log" &
FEED_PID=$!
wait_for 60 "Prometheus" grep -q '^metrics-feed ready' "$WORK/feed.out"
PROM_URL=$(sed -n 's/^metrics-feed ready url=//p' "$WORK/feed.out")
echo "Prometheus at $PROM_URL, fed every second by remote write"

cat >"$CONFIG" <<CONFIG_EOF
apiVersion: metrics-scheduler/v1alpha1
kind: MetricsSchedulerConfiguration
backend: {type: prometheus, url: "$PROM_URL", timeout: 1s}
cache: {ttl: 2s, maxStaleness: 6s, refreshTimeout: 1s}
metrics:
  - name: http_latency
    query: demo_http_latency_seconds
    weight: 3
    normalization: {type: minmax}
  - name: io_latency
    query: demo_io_latency_seconds
    weight: 2
    normalization: {type: range, min: 0, max: 0.02}
  - name: error_rate
    query: demo_error_ratio
    weight: 2
    normalization: {type: range, min: 0, max: 0.05}
builtins: {leastAllocated: 1, balancedAllocation: 1, recentPlacements: 2}
herd: {penaltyPerPlacement: 10, window: 30s}
fallback: {coldCacheDeadline: 500ms}
leaderElection: {leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 1s}
CONFIG_EOF

step "starting metrics-scheduler (as its service account, leader election on)"
"$MS" --config "$CONFIG" --kubeconfig "$TE/scheduler.kubeconfig" \
  --http-address 127.0.0.1:0 --identity demo -v=1 >"$WORK/scheduler.log" 2>&1 &
MS_PID=$!
wait_for 30 "the scheduler's status server" grep -q 'on port [0-9]' "$WORK/scheduler.log"
MS_PORT=$(sed -n 's/.*on port \([0-9]*\).*/\1/p' "$WORK/scheduler.log" | head -n 1)
refreshed() { [ "$(metric 'metrics_scheduler_metric_nodes_with_data{metric="error_rate"}')" -ge 8 ]; }
wait_for 60 "metrics for all 8 nodes" refreshed
echo "scheduling; /metrics on 127.0.0.1:$MS_PORT; log $WORK/scheduler.log"
echo
show_table

step "1. applying the example workload ($WORKLOAD, 3 replicas)"
kubectl -n "$NS" apply -f "$WORKLOAD" >/dev/null
wait_for 60 "3 pods bound" all_bound 3
show_table
echo "Scheduled events:"
latest_events 3

step "2. node-3 degrades (HTTP 250 ms, IO 18 ms, 4% errors); scaling to 7 replicas"
BEST="0.250 0.0180 0.040"
write_profile
sample='metrics_scheduler_metric_refreshes_total{metric="http_latency",result="success"}'
before=$(metric "$sample")
seen() { [ "$(metric "$sample")" -ge $(( before + 2 )) ]; }
wait_for 30 "the scheduler to see it" seen
placed_before=$(pods_on | grep -cx node-3 || true)
kubectl -n "$NS" scale deployment web --replicas=7 >/dev/null
wait_for 60 "7 pods bound" all_bound 7
show_table
placed_after=$(pods_on | grep -cx node-3 || true)
echo "node-3 got $(( placed_after - placed_before )) of the 4 new pods (it had $placed_before)"
echo "Scheduled events:"
latest_events 4

step "3. Prometheus goes down; scaling to 10 replicas"
PROMETHEUS="prometheus down"
write_profile
stale() { [ "$(metric 'metrics_scheduler_metric_nodes_with_data{metric="http_latency"}')" -eq 0 ]; }
wait_for 60 "the cached metrics to go stale (maxStaleness 6s)" stale
fallback_before=$(metric 'metrics_scheduler_decisions_total{mode="fallback",profile="metrics-scheduler"}')
kubectl -n "$NS" scale deployment web --replicas=10 >/dev/null
wait_for 60 "10 pods bound" all_bound 10
show_table
echo "Scheduled events:"
latest_events 3

step "summary"
metrics_mode=$(metric 'metrics_scheduler_decisions_total{mode="metrics",profile="metrics-scheduler"}')
fallback_mode=$(metric 'metrics_scheduler_decisions_total{mode="fallback",profile="metrics-scheduler"}')
echo "pods per node: $(pods_on | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')"
echo "decisions: $metrics_mode by metrics, $fallback_mode in fallback mode ($(( fallback_mode - fallback_before )) since Prometheus went down)"
echo "failures: $(metric 'metrics_scheduler_schedule_attempts_total{result="unschedulable",profile="metrics-scheduler"}') unschedulable, $(metric 'metrics_scheduler_schedule_attempts_total{result="error",profile="metrics-scheduler"}') errors"
echo "Pods followed the metrics, avoided the degraded node, and kept being placed"
echo "with the metrics backend down. Next: 'make test', README.md."
