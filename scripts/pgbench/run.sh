#!/usr/bin/env bash
# pgbench beside agentd: the database's own limits, for docs/benchmarks.md.
# Usage: scripts/pgbench/run.sh DSN [CLIENTS] [SECONDS]
# DSN names a database agentd has migrated (start the server on it once).
# Rows are written under tenant 'pgbench' (leases: owner 'pgbench') and
# deleted afterwards.
set -euo pipefail
dsn=${1:?usage: run.sh DSN [CLIENTS] [SECONDS]}
clients=${2:-32}
seconds=${3:-10}
dir=$(cd "$(dirname "$0")" && pwd)
cleanup() {
  psql -q "$dsn" -c "DELETE FROM tasks WHERE tenant = 'pgbench'" -c "DELETE FROM contexts WHERE tenant = 'pgbench'" \
    -c "DELETE FROM messages WHERE tenant = 'pgbench'" -c "DELETE FROM idempotency_keys WHERE tenant = 'pgbench'" \
    -c "DELETE FROM runs WHERE tenant = 'pgbench'" -c "DELETE FROM event_frames WHERE tenant = 'pgbench'" \
    -c "DELETE FROM leases WHERE tenant = 'pgbench'" >/dev/null
}
trap cleanup EXIT
for script in one-insert send; do
  printf '%s, %d clients, %ds: ' "$script" "$clients" "$seconds"
  pgbench -n -c "$clients" -j 2 -T "$seconds" -f "$dir/$script.sql" "$dsn" 2>/dev/null |
    awk '/^tps/ {tps=$3} /latency average/ {lat=$4} END {printf "%s tx/s, latency average %s ms\n", tps, lat}'
done
