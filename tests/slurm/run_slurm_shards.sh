#!/usr/bin/env bash
# Runs one crucible run as a Slurm job array on a single-node Slurm cluster of its own and checks
# the merged result against the unsplit run.
#
#   tests/slurm/run_slurm_shards.sh <crucible binary> [time limit in seconds, default 240]
#
# It starts munged (with a key of its own), slurmctld and slurmd as the current user, with every
# file (slurm.conf, keys, sockets, state, spool, logs) in a temporary folder and free ports, and
# stops them on exit whatever happens. Slurm (Debian's slurmctld, slurmd, slurm-client), munge and
# jq come from scripts/install-deps.sh. The job array is docs/scale-out/crucible-shard.sh,
# submitted with `sbatch --array=1-4 --wait`; the merge runs as the job that depends on it, as
# docs/scale-out.md shows. The merged run's reports must equal the unsplit run's, apart from wall
# times (tests/slurm/compare_runs.sh).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 <crucible binary> [time limit in seconds]" >&2
  exit 2
fi
CRUCIBLE=$(realpath "$1")
LIMIT=${2:-240}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
JOB_SCRIPT=$REPO/docs/scale-out/crucible-shard.sh
# shellcheck source=compare_runs.sh
source "$HERE/compare_runs.sh"
# A small opinfo run on the cpu backend: a few seconds of cases, in four shards.
CRUCIBLE_ARGS="--suite opinfo --backend cpu --ops relu,add.Tensor,mul.Tensor,sum.dim_IntList,mm,_softmax.default --seed 7"
SHARDS=4
START=$SECONDS

fail() {
  echo "run_slurm_shards: FAILED: $*" >&2
  exit 1
}

for cmd in munged slurmctld slurmd sbatch sinfo squeue scancel jq; do
  command -v "$cmd" >/dev/null 2>&1 ||
    fail "$cmd is not installed (scripts/install-deps.sh installs munge, slurmctld, slurmd, slurm-client and jq)"
done
[ -x "$CRUCIBLE" ] || fail "$CRUCIBLE is not an executable"

# Everything in one temporary folder. munged wants the folders of its socket reachable by every
# user (x for all) and those of its key, seed and log private.
TMP=$(mktemp -d /tmp/crucible-slurm.XXXXXX)
chmod 755 "$TMP"
mkdir -p "$TMP/munge" "$TMP/munge-socket" "$TMP/state" "$TMP/spool" "$TMP/log" "$TMP/runs"
chmod 700 "$TMP/munge"
chmod 755 "$TMP/munge-socket"

PIDS=()
export SLURM_CONF=$TMP/slurm.conf

show_logs() {
  for f in "$TMP"/log/*.log "$TMP"/munge/munged.log "$TMP"/runs/*.out; do
    [ -f "$f" ] || continue
    echo "---- $f (last 30 lines)" >&2
    tail -n 30 "$f" >&2
  done
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  # The jobs first (their steps are children of slurmd), then the daemons, newest first.
  if [ ${#PIDS[@]} -gt 0 ]; then
    timeout 10 scancel --full --quiet --user="$(id -un)" >/dev/null 2>&1 || true
    for ((k = ${#PIDS[@]} - 1; k >= 0; k--)); do
      kill -TERM "${PIDS[$k]}" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    done
  fi
  if [ $status -ne 0 ]; then
    show_logs
    echo "run_slurm_shards: the files are kept in $TMP" >&2
  else
    rm -rf "$TMP"
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The seconds left of the time limit (at least 1).
left() {
  local l=$((LIMIT - (SECONDS - START)))
  [ $l -gt 0 ] || fail "the time limit of $LIMIT s was reached"
  echo $l
}

# A TCP port nothing listens on (bash's /dev/tcp connects when something does).
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  fail "no free TCP port found"
}
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done

# munged with a key of its own.
dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$TMP/munge/munge.key"
MUNGE_SOCKET=$TMP/munge-socket/munge.socket
munged --foreground --force --key-file="$TMP/munge/munge.key" --socket="$MUNGE_SOCKET" \
  --pid-file="$TMP/munge/munged.pid" --log-file="$TMP/munge/munged.log" \
  --seed-file="$TMP/munge/munged.seed" >/dev/null 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  [ -S "$MUNGE_SOCKET" ] && break
  kill -0 "${PIDS[0]}" 2>/dev/null || fail "munged stopped while starting"
  sleep 0.1
done
[ -S "$MUNGE_SOCKET" ] || fail "munged did not create its socket"

# One node, localhost, 2 CPUs whatever the machine has (config_overrides), no accounting, no
# cgroups (proctrack/linuxproc, task/none: containers often cannot give slurmd its cgroups).
USER_NAME=$(id -un)
cat >"$SLURM_CONF" <<EOF
ClusterName=crucible-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=info
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -f "$SLURM_CONF" >"$TMP/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" >"$TMP/log/slurmd.out" 2>&1 &
PIDS+=($!)
state=""
for _ in $(seq 300); do
  state=$(timeout 5 sinfo --noheader --format=%T 2>/dev/null || true)
  [ "$state" = "idle" ] && break
  for pid in "${PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || { cat "$TMP"/log/*.out >&2; fail "a daemon stopped while starting"; }
  done
  [ $((SECONDS - START)) -lt 60 ] || break
  sleep 0.2
done
[ "$state" = "idle" ] || fail "the node did not become idle (sinfo says '$state')"
echo "run_slurm_shards: slurmctld on port $CTLD_PORT, slurmd on $SLURMD_PORT, node idle after $((SECONDS - START)) s"

# The shards: the job array of docs/scale-out, 4 tasks of 1 CPU (2 at a time on this node).
RUN=$TMP/runs/nightly
export CRUCIBLE RUN CRUCIBLE_ARGS
array_status=0
timeout "$(left)" sbatch --wait --array=1-$SHARDS --cpus-per-task=1 --chdir="$TMP/runs" \
  --output="$TMP/runs/shard-%a.out" "$JOB_SCRIPT" || array_status=$?
echo "run_slurm_shards: job array ended with status $array_status after $((SECONDS - START)) s"
[ $array_status -eq 0 ] || fail "a task of the job array failed (status $array_status)"
for i in $(seq $SHARDS); do
  [ -f "$RUN/shard-$i/summary.json" ] || fail "shard $i did not finish (no $RUN/shard-$i/summary.json)"
  [ "$(jq -r '.shard.index' "$RUN/shard-$i/manifest.json")/$(jq -r '.shard.count' "$RUN/shard-$i/manifest.json")" = "$i/$SHARDS" ] ||
    fail "$RUN/shard-$i/manifest.json does not say shard $i/$SHARDS"
done

# The merge, as a job that runs after every task of the array, whatever their status.
merge_status=0
timeout "$(left)" sbatch --wait --chdir="$TMP/runs" --output="$TMP/runs/merge.out" \
  --wrap="'$CRUCIBLE' merge $RUN/shard-* --out $RUN/merged" || merge_status=$?
cat "$TMP/runs/merge.out"
[ -f "$RUN/merged/summary.json" ] || fail "the merge wrote no summary.json (status $merge_status)"

# The unsplit run, here, one worker (its results.jsonl then lists the cases in the suite's order).
unsplit_status=0
# shellcheck disable=SC2086
timeout "$(left)" "$CRUCIBLE" run $CRUCIBLE_ARGS --workers 1 --out "$TMP/runs/unsplit" --quiet ||
  unsplit_status=$?
[ $merge_status -eq $unsplit_status ] ||
  fail "the merge exited with $merge_status, the unsplit run with $unsplit_status"

# The same reports, apart from wall times.
cases=$(compare_runs "$TMP/runs/unsplit" "$RUN/merged") || fail "the merged run differs from the unsplit run"
echo "run_slurm_shards: OK: $cases cases in $SHARDS Slurm shards merged equal the unsplit run ($((SECONDS - START)) s)"
