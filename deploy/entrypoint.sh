#!/bin/sh
# How the container (deploy/Dockerfile) and the systemd units (deploy/systemd/) start the site:
#
#   entrypoint.sh [all]               every program of deploy/supervisord.conf, under supervisord
#   entrypoint.sh workers             every program but web, under supervisord
#   entrypoint.sh web [ARGS]          gunicorn alone
#   entrypoint.sh worker NAME [ARGS]  one background program alone: fold_like_events,
#                                     aggregate_counters, process_feed_retries,
#                                     dispatch_deliveries, rollup_activity,
#                                     mail_notifications, erase_accounts, clear_sessions
#   entrypoint.sh COMMAND [ARGS]      a management command: migrate, create_tables,
#                                     activity_tables, health, ...
#
# A program alone runs the very command deploy/supervisord.conf gives it (one list of
# programs for every way of running them), in place of this script: the platform's stop
# signal reaches it, its exit is the container's or the unit's, and the platform restarts it.
# Under supervisord (all, workers), supervisord restarts what dies; RUN_DIR (default var/)
# holds its control socket.
set -eu
cd "$(dirname "$0")/.."
config=deploy/supervisord.conf

# The command= line of [program:$1] in the configuration.
program_command() {
  sed -n "/^\[program:$1\]\$/,/^\[/s/^command=//p" "$config"
}

supervise() {
  export RUN_DIR="${RUN_DIR:-$PWD/var}"
  mkdir -p "$RUN_DIR"
  exec supervisord -c "$1"
}

role=${1:-all}
[ $# -gt 0 ] && shift
case "$role" in
  all)
    supervise "$config"
    ;;
  workers)
    # The configuration without [program:web] (nor web in the group), written where this
    # user may write; paths made absolute, as %(here)s would now be RUN_DIR.
    export RUN_DIR="${RUN_DIR:-$PWD/var}"
    mkdir -p "$RUN_DIR"
    awk -v app="$PWD" '
      /^\[/ { skipping = ($0 == "[program:web]") }
      skipping { next }
      /^programs=/ {
        count = split(substr($0, 10), names, ",")
        $0 = "programs="
        for (i = 1; i <= count; i++) if (names[i] != "web") $0 = $0 (substr($0, 10) == "" ? "" : ",") names[i]
      }
      { gsub(/%\(here\)s\/\.\./, app); print }
    ' "$config" > "$RUN_DIR/supervisord.workers.conf"
    supervise "$RUN_DIR/supervisord.workers.conf"
    ;;
  web)
    command=$(program_command web)
    ;;
  worker)
    name=${1:-}
    [ $# -gt 0 ] && shift
    case "$name" in
      "" | web | *[!a-z_]*) command="" ;;
      *) command=$(program_command "$name") ;;
    esac
    if [ -z "$command" ]; then
      echo "entrypoint.sh worker NAME: NAME is one of $(sed -n 's/^\[program:\([a-z_]*\)\]$/\1/p' "$config" | grep -vx web | tr '\n' ' ')" >&2
      exit 2
    fi
    ;;
  *)
    exec python manage.py "$role" "$@"
    ;;
esac
set -f  # the command's words as they are written: no file names from a pattern
# shellcheck disable=SC2086  # the words of the command line, split on purpose
exec $command "$@"
