#!/usr/bin/env bash
# Started by `make run`: DynamoDB Local (unless DYNAMODB_HOST points elsewhere),
# migrations, tables, demo data on first start, then the development server.
# Ctrl-C stops the server and the DynamoDB Local this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
# Development mode explicitly: the settings default to production (DEBUG=False).
export DEBUG="${DEBUG:-True}"
PORT=8765
mkdir -p var

dynamo_pid=""
aggregator_pid=""
feed_retries_pid=""
dispatcher_pid=""
activity_pid=""
folder_pid=""
cleanup() {
  for pid in "$aggregator_pid" "$feed_retries_pid" "$dispatcher_pid" "$folder_pid" "$activity_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [ -n "$dynamo_pid" ] && kill -0 "$dynamo_pid" 2>/dev/null; then
    echo "Stopping DynamoDB Local"
    kill "$dynamo_pid" 2>/dev/null || true
    wait "$dynamo_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "${DYNAMODB_HOST+set}" ]; then
  if "$BIN/python" -c "import sys; from project.dynamo_local import answers_dynamodb as a; sys.exit(0 if a($PORT) else 1)"; then
    echo "DynamoDB Local already answers on port $PORT; using it."
  else
    "$BIN/python" -m project.dynamo_local --port "$PORT" --db-path var/dynamodb &
    dynamo_pid=$!
    for _ in $(seq 1 600); do
      "$BIN/python" -c "import sys; from project.dynamo_local import answers_dynamodb as a; sys.exit(0 if a($PORT) else 1)" && break
      kill -0 "$dynamo_pid" 2>/dev/null || { echo "DynamoDB Local failed to start." >&2; exit 1; }
      sleep 0.2
    done
  fi
  export DYNAMODB_HOST="http://127.0.0.1:$PORT"
fi

"$BIN/python" manage.py migrate --no-input
"$BIN/python" manage.py create_tables
# This and next month's activity log tables exist before anyone writes.
"$BIN/python" manage.py activity_tables
"$BIN/python" manage.py seed_demo --if-empty
# Keeps the popular-comments ranking within seconds of likes and views.
"$BIN/python" manage.py aggregate_counters --loop &
aggregator_pid=$!
# Applies feed events that could not be written at once (and replies' outbox items).
"$BIN/python" manage.py process_feed_retries --loop &
feed_retries_pid=$!
# Sends the broadcast deliveries staff create in the admin.
"$BIN/python" manage.py dispatch_deliveries --loop --no-progress &
dispatcher_pid=$!
# Folds likes into the authors' notifications and badges (the likes' outbox, issue 9).
"$BIN/python" manage.py fold_like_events --loop &
folder_pid=$!
# Counts the activity log per day into the database (staff's Activity page); keeps next month's table ready.
"$BIN/python" manage.py rollup_activity --loop &
activity_pid=$!
echo "Serving on http://127.0.0.1:8000 (Ctrl-C to stop)"
"$BIN/python" manage.py runserver 127.0.0.1:8000
