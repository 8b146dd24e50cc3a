#!/bin/sh
# How the container (deploy/Dockerfile) and the systemd units (deploy/systemd/) start the site:
#
#   entrypoint.sh [all]               every program of deploy/supervisord.conf, under supervisord
#   entrypoint.sh workers             every program but web, under supervisord
#   entrypoint.sh web [ARGS]          gunicorn alone (BUFFERING_PROXY=nginx: with nginx, below)
#   entrypoint.sh worker NAME [ARGS]  one background program alone: fold_like_events,
#                                     aggregate_counters, process_feed_retries,
#                                     dispatch_deliveries, rollup_activity,
#                                     mail_notifications, send_push, erase_accounts, clear_sessions
#   entrypoint.sh COMMAND [ARGS]      a management command: migrate, create_tables,
#                                     activity_tables, health, ...
#
# A program alone runs the very command deploy/supervisord.conf gives it (one list of
# programs for every way of running them), in place of this script: the platform's stop
# signal reaches it, its exit is the container's or the unit's, and the platform restarts it.
# Under supervisord (all, workers), supervisord restarts what dies; RUN_DIR (default var/)
# holds its control socket.
#
# BUFFERING_PROXY=nginx (the image's default): `all` and `web` run nginx (deploy/nginx.conf, the
# `proxy` program of deploy/supervisord-proxy.conf) on HOST:PORT in front of gunicorn, which
# listens on 127.0.0.1:PROXY_UPSTREAM_PORT (8001); both under supervisord, so `web` is then
# supervisord with those two programs. Any other BUFFERING_PROXY: gunicorn alone on HOST:PORT.
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

# The configuration with only the programs `$1` keeps (an awk condition on `name`), plus those of
# the file `$2` when given, written to RUN_DIR/supervisord.$3.conf where this user may write;
# paths made absolute, as %(here)s would now be RUN_DIR.
config_write() {
  export RUN_DIR="${RUN_DIR:-$PWD/var}"
  mkdir -p "$RUN_DIR"
  written="$RUN_DIR/supervisord.$3.conf"
  extra=""
  [ -n "$2" ] && extra=$(sed -n 's/^\[program:\([a-z_]*\)\]$/\1/p' "$2" | tr '\n' ',')
  awk -v app="$PWD" -v extra="$extra" '
    function kept(name) { return '"$1"' }
    /^\[/ { skipping = ($0 ~ /^\[program:/ && !kept(substr($0, 10, length($0) - 10))) }
    skipping { next }
    /^programs=/ {
      count = split(extra substr($0, 10), names, ",")
      $0 = "programs="
      for (i = 1; i <= count; i++) if (names[i] != "" && (kept(names[i]) || index("," extra, "," names[i] ","))) $0 = $0 (substr($0, 10) == "" ? "" : ",") names[i]
    }
    { gsub(/%\(here\)s\/\.\./, app); print }
  ' "$config" > "$written"
  if [ -n "$2" ]; then cat "$2" >> "$written"; fi
}

# BUFFERING_PROXY=nginx: deploy/nginx.conf filled in (nginx listens where gunicorn would have),
# and gunicorn moved behind it.
proxy_prepare() {
  export RUN_DIR="${RUN_DIR:-$PWD/var}"
  upstream="127.0.0.1:${PROXY_UPSTREAM_PORT:-8001}"
  mkdir -p "$RUN_DIR/nginx"
  sed -e "s|@LISTEN@|${HOST:-127.0.0.1}:${PORT:-8000}|" -e "s|@UPSTREAM@|$upstream|" -e "s|@RUN_DIR@|$RUN_DIR|g" \
    deploy/nginx.conf > "$RUN_DIR/nginx.conf"
  export NGINX_CONF="$RUN_DIR/nginx.conf" HOST=127.0.0.1 PORT="${PROXY_UPSTREAM_PORT:-8001}"
}

role=${1:-all}
[ $# -gt 0 ] && shift
proxied=""
[ "${BUFFERING_PROXY:-}" = nginx ] && proxied=yes
case "$role" in
  all)
    if [ -n "$proxied" ]; then
      proxy_prepare
      config_write 1 deploy/supervisord-proxy.conf all
      supervise "$written"
    fi
    supervise "$config"
    ;;
  workers)
    config_write 'name != "web"' "" workers
    supervise "$written"
    ;;
  web)
    if [ -n "$proxied" ]; then
      proxy_prepare
      config_write 'name == "web"' deploy/supervisord-proxy.conf web
      supervise "$written"
    fi
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
