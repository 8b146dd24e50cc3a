#!/usr/bin/env bash
# `make run` (scripts/run.sh) and `make dev` (scripts/run.sh dev):
# DynamoDB Local (persistent, var/dynamodb) unless DYNAMODB_HOST points elsewhere,
# migrations, tables, demo data on the first start, then supervisord with
# deploy/supervisord.conf: gunicorn, every worker and the daily session clean-up, each
# started again when it dies. supervisord runs in a session of its own; when it dies
# (kill -9, the out-of-memory killer), the programs it left running are stopped and it is
# started again. `dev` serves with Django's development server instead (autoreload,
# DEBUG=True). Ctrl-C or SIGTERM stops everything, and the DynamoDB Local this script started.
set -euo pipefail
# supervisord writes each program's lines to this output through a file of its own (it opens
# /dev/stdout): when the output is a file (`make run > log 2>&1`), everyone appends to it.
if [ -f /dev/stdout ]; then exec >> /dev/stdout; fi
if [ -f /dev/stderr ]; then exec 2>> /dev/stderr; fi
cd "$(dirname "$0")/.."
MODE=${1:-run}
BIN=$(cd "${BIN:-.venv/bin}" && pwd)
export PATH="$BIN:$PATH"  # supervisord's and its programs' `python` and `gunicorn` are the project's
export HOST="${HOST:-127.0.0.1}" PORT="${PORT:-8000}"
DYNAMODB_PORT="${DYNAMODB_PORT:-8765}"
export RUN_DIR="${RUN_DIR:-$PWD/var}"  # supervisord's control socket and pid file
mkdir -p var "$RUN_DIR"

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
# The VAPID key that signs Web Push (notifications/push/keys.py), generated once like the secret key.
if [ -z "${VAPID_PRIVATE_KEY:-}" ] && [ -z "${VAPID_PRIVATE_KEY_FILE:-}" ]; then
  if [ ! -s var/vapid_private_key ]; then
    (umask 077 && python -c "import base64; from cryptography.hazmat.primitives.asymmetric import ec; \
      n = ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value; \
      print(base64.urlsafe_b64encode(n.to_bytes(32, 'big')).rstrip(b'=').decode())" > var/vapid_private_key)
    echo "Generated a VAPID key for Web Push into var/vapid_private_key"
  fi
  export VAPID_PRIVATE_KEY_FILE="$PWD/var/vapid_private_key"
fi

dynamo_pid=""
manager_pid=""
orphaned=""  # the sessions of earlier supervisords (killed), whose programs were told to stop
# The processes supervisord left behind when it died: its programs run on, orphaned, in its
# session (supervisord puts each program in a process group of its own, not out of the
# session). SIGTERM first, as supervisord would have sent (gunicorn finishes its requests,
# a worker its unit of work), SIGKILL to what is left 25 s later.
session_stop() {
  local sid=$1 pids since=$SECONDS
  pids=$(session_pids "$sid")
  [ -n "$pids" ] || return 0
  echo "Stopping what supervisord left running (pids $pids)"
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 1 125); do
    [ -n "$(session_pids "$sid")" ] || { echo "Stopped what supervisord left running in $((SECONDS - since)) s"; return 0; }
    sleep 0.2
  done
  pids=$(session_pids "$sid")
  echo "Killing what is still running 25 s after SIGTERM (pids $pids)"
  kill -KILL $pids 2>/dev/null || true
}
# The live processes of a session (an exited one waiting to be reaped is not).
session_pids() { { ps -o pid=,stat= -s "$1" || true; } | awk '$2 !~ /^Z/ { printf "%s ", $1 }'; }
cleanup() {
  if [ -n "$manager_pid" ]; then
    if kill -0 "$manager_pid" 2>/dev/null; then
      kill -TERM "$manager_pid" 2>/dev/null || true  # supervisord stops every program, then itself
      wait "$manager_pid" 2>/dev/null || true
    fi
    session_stop "$manager_pid"
  fi
  for sid in $orphaned; do session_stop "$sid"; done  # normally stopped long ago
  if [ -n "$dynamo_pid" ] && kill -0 "$dynamo_pid" 2>/dev/null; then
    echo "Stopping DynamoDB Local"
    kill "$dynamo_pid" 2>/dev/null || true
    wait "$dynamo_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

answers() { python -c "import sys; from project.dynamo.local import answers_dynamodb as a; sys.exit(0 if a($DYNAMODB_PORT) else 1)"; }
if [ -z "${DYNAMODB_HOST+set}" ]; then
  if answers; then
    echo "DynamoDB Local already answers on port $DYNAMODB_PORT; using it."
  else
    # Its own session: Ctrl-C reaches this script only, and this DynamoDB Local is stopped
    # (by cleanup) only after the programs have finished their last unit of work.
    setsid python -m project.dynamo.local --port "$DYNAMODB_PORT" --db-path var/dynamodb &
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
# Demo people and a staff account only on request: each gets a random password, printed here.
if [ "${SEED_DEMO:-false}" = true ]; then
  python manage.py seed_demo --if-empty
fi

config=deploy/supervisord.conf
if [ "$MODE" = dev ]; then
  # The same programs, with the development server as `web`.
  config=var/supervisord.dev.conf
  sed -e 's|^command=gunicorn -c config/gunicorn.py$|command=python manage.py runserver %(ENV_HOST)s:%(ENV_PORT)s|' \
    -e "s|%(here)s/..|$PWD|" deploy/supervisord.conf > "$config"
  grep -q '^command=python manage.py runserver' "$config" || { echo "No web program in deploy/supervisord.conf" >&2; exit 1; }
else
  python manage.py collectstatic --no-input --verbosity 0
fi
# Said once the site answers, not before: gunicorn takes a few seconds to listen.
announce() {
  if python - "http://$HOST:$PORT/healthz" <<'PY'
import sys, time, urllib.request
for _ in range(600):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=1).close()
        break
    except OSError:
        time.sleep(0.5)
else:
    sys.exit(1)
PY
  then
    echo "Serving on http://$HOST:$PORT (Ctrl-C to stop; RUN_DIR=$RUN_DIR supervisorctl -c $config status)"
  else
    echo "Nothing answers on http://$HOST:$PORT/healthz after 5 minutes: see the web program's lines above" >&2
  fi
}
announce &
delay=1
while :; do
  started=$SECONDS
  # A session of its own: Ctrl-C reaches this script only, which asks supervisord to stop
  # its programs; and what supervisord leaves behind if it dies is found by its session.
  setsid supervisord -c "$config" &
  manager_pid=$!
  status=0
  wait "$manager_pid" || status=$?
  # 0: it was asked to stop (supervisorctl shutdown, a signal it handled); 2: it refused its
  # configuration. Anything else (killed by a signal, a crash): start it again.
  if [ "$status" = 0 ] || [ "$status" = 2 ]; then
    session_stop "$manager_pid"
    manager_pid=""
    exit "$status"
  fi
  if [ $((SECONDS - started)) -ge 60 ]; then delay=1; fi  # a crash loop backs off, a rare crash does not
  echo "supervisord exited with status $status; starting it again in ${delay}s"
  # Its programs run on without it: they stop while the new supervisord starts. For those
  # seconds a worker may run twice, which every worker allows (each claims its work with a
  # conditional write); the new gunicorn binds the port once the old one has let go of it
  # (it retries for 5 s, and supervisord starts it again if that was not enough).
  session_stop "$manager_pid" &
  orphaned="$orphaned $manager_pid"
  sleep "$delay" &
  wait $!  # a signal stops the script during the pause (a foreground sleep would hold it)
  delay=$((delay * 2 > 30 ? 30 : delay * 2))
done
