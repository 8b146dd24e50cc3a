#!/usr/bin/env bash
# `make run` (scripts/run.sh) and `make dev` (scripts/run.sh dev):
# DynamoDB Local (persistent, var/dynamodb) unless DYNAMODB_HOST points elsewhere,
# migrations, tables, demo data on the first start, then the Procfile under honcho:
# gunicorn and the five supervised workers. `dev` serves with Django's development
# server instead (autoreload, DEBUG=True). Ctrl-C or SIGTERM stops everything, and
# the DynamoDB Local this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-run}
BIN=$(cd "${BIN:-.venv/bin}" && pwd)
export PATH="$BIN:$PATH"  # the Procfile's `python` and `gunicorn` are the project's
export HOST="${HOST:-127.0.0.1}" PORT="${PORT:-8000}"
DYNAMODB_PORT="${DYNAMODB_PORT:-8765}"
mkdir -p var

if [ "$MODE" = dev ]; then
  # Development mode explicitly: the settings default to production (DEBUG=False).
  export DEBUG="${DEBUG:-True}"
else
  # The production settings, over plain HTTP on the loopback address only.
  export DEBUG=False LOCAL_PLAIN_HTTP="${LOCAL_PLAIN_HTTP:-True}"
  if [ -z "${SECRET_KEY:-}" ] && [ -z "${SECRET_KEY_FILE:-}" ]; then
    if [ ! -s var/secret_key ]; then
      (umask 077 && python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key)
      echo "Generated a secret key into var/secret_key"
    fi
    export SECRET_KEY_FILE="$PWD/var/secret_key"
  fi
fi

dynamo_pid=""
manager_pid=""
cleanup() {
  if [ -n "$manager_pid" ] && kill -0 "$manager_pid" 2>/dev/null; then
    kill -TERM "$manager_pid" 2>/dev/null || true
    wait "$manager_pid" 2>/dev/null || true
  fi
  if [ -n "$dynamo_pid" ] && kill -0 "$dynamo_pid" 2>/dev/null; then
    echo "Stopping DynamoDB Local"
    kill "$dynamo_pid" 2>/dev/null || true
    wait "$dynamo_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

answers() { python -c "import sys; from project.dynamo_local import answers_dynamodb as a; sys.exit(0 if a($DYNAMODB_PORT) else 1)"; }
if [ -z "${DYNAMODB_HOST+set}" ]; then
  if answers; then
    echo "DynamoDB Local already answers on port $DYNAMODB_PORT; using it."
  else
    # Its own session: Ctrl-C reaches the processes first, and this DynamoDB Local is
    # stopped (by cleanup) only after they have finished their last unit of work.
    setsid python -m project.dynamo_local --port "$DYNAMODB_PORT" --db-path var/dynamodb &
    dynamo_pid=$!
    for _ in $(seq 1 600); do
      answers && break
      kill -0 "$dynamo_pid" 2>/dev/null || { echo "DynamoDB Local failed to start." >&2; exit 1; }
      sleep 0.2
    done
  fi
  export DYNAMODB_HOST="http://127.0.0.1:$DYNAMODB_PORT"
fi

python manage.py migrate --no-input
if [ -n "$dynamo_pid" ]; then
  # This script's own DynamoDB Local: every process that reads it starts below, on this
  # code, so an index a model no longer declares (replaced by one of a new shape) can go.
  python manage.py create_tables --drop-undeclared
else
  python manage.py create_tables
fi
# This and next month's activity log tables exist before anyone writes.
python manage.py activity_tables
python manage.py seed_demo --if-empty

procfile=Procfile
if [ "$MODE" = dev ]; then
  # The same workers, with the development server as `web`.
  procfile=var/Procfile.dev
  { echo "web: exec python manage.py runserver $HOST:$PORT"; grep -v '^web:' Procfile; } > "$procfile"
else
  python manage.py collectstatic --no-input --verbosity 0
fi
# honcho kills what has not stopped 5 s after Ctrl-C: gunicorn finishes its requests within 4.
export WEB_GRACEFUL_TIMEOUT="${WEB_GRACEFUL_TIMEOUT:-4}"
echo "Serving on http://$HOST:$PORT (Ctrl-C to stop)"
# -e /dev/null: the settings read .env themselves, and the environment set here wins.
honcho -e /dev/null -f "$procfile" -d . start -p "$PORT" &
manager_pid=$!
wait "$manager_pid"
