#!/usr/bin/env bash
# Make sure the local PostgreSQL and Redis answer, starting them when they are installed but
# stopped. Used by `make test` and `make run`; a no-op when DATABASE_URL/REDIS_URL point
# elsewhere and answer.
set -u

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }

if [ -z "${DATABASE_URL:-}" ] && ! pg_up; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "Starting the local PostgreSQL cluster..."
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_up && break; sleep 0.5; done
  fi
fi
if [ -z "${REDIS_URL:-}" ] && ! redis_up; then
  if command -v redis-server >/dev/null 2>&1; then
    echo "Starting the local Redis..."
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no || true
    for _ in $(seq 1 30); do redis_up && break; sleep 0.2; done
  fi
fi
exit 0
