#!/usr/bin/env bash
# Runs Debian's docker-registry on 127.0.0.1 for development and the integration tests.
#
#   registry/run-registry.sh start DIR [--no-tls] [--no-auth] [--token-realm URL]
#                                           # prints the address (127.0.0.1:PORT)
#   registry/run-registry.sh stop DIR
#
# start writes into DIR: config.yml, data/, registry.log, pid, address, and unless disabled
# cert.pem/key.pem (self-signed, subjectAltName IP:127.0.0.1) and htpasswd (bcrypt, cost 4) for
# user "hwimg" with a random password kept in DIR/password (mode 0600). --token-realm replaces
# htpasswd with bearer tokens from that token service (issuer hwimg-test-issuer, service
# hwimg-test-registry, signed by DIR/key.pem; see tests/integration/token_server.py).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "run-registry: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start() {
  local dir=$1; shift
  local tls=1 auth=1 realm=""
  while [ $# -gt 0 ]; do
    case $1 in
      --no-tls) tls=0 ;;
      --no-auth) auth=0 ;;
      --token-realm) [ $# -ge 2 ] || die "--token-realm needs a URL"; realm=$2; shift ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  command -v docker-registry >/dev/null || die "docker-registry is not installed (apt-get install docker-registry)"
  mkdir -p "$dir/data"
  dir=$(cd "$dir" && pwd)
  if [ "$tls" = 1 ] && [ ! -f "$dir/cert.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -keyout "$dir/key.pem" -out "$dir/cert.pem" \
      -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null ||
      die "openssl could not make a certificate"
  fi
  if [ "$auth" = 1 ] && [ ! -f "$dir/password" ]; then
    (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$dir/password")
    htpasswd -Bbn -C 4 hwimg "$(cat "$dir/password")" > "$dir/htpasswd" 2>/dev/null || die "htpasswd failed"
  fi
  if [ -n "$realm" ]; then
    [ "$tls" = 1 ] || die "--token-realm needs TLS (the tokens are signed with its key)"
  fi
  local attempt port scheme=http curl_args=()
  [ "$tls" = 1 ] && { scheme=https; curl_args=(--cacert "$dir/cert.pem"); }
  for attempt in 1 2 3 4 5; do
    port=$(free_port)
    local sed_args=(-e "s|@DIR@|$dir|g" -e "s|@PORT@|$port|g")
    [ "$tls" = 1 ] && sed_args+=(-e "s|#TLS ||")
    if [ -n "$realm" ]; then
      sed_args+=(-e "s|#TOKEN ||" -e "s|@REALM@|$realm|")
    elif [ "$auth" = 1 ]; then
      sed_args+=(-e "s|#AUTH ||")
    fi
    sed "${sed_args[@]}" "$here/config.yml.in" > "$dir/config.yml"
    docker-registry serve "$dir/config.yml" >> "$dir/registry.log" 2>&1 &
    echo $! > "$dir/pid"
    local i
    for i in $(seq 1 100); do
      # 200 or 401 both mean it is serving.
      code=$(curl -s -o /dev/null -w '%{http_code}' "${curl_args[@]}" "$scheme://127.0.0.1:$port/v2/" || true)
      if [ "$code" = 200 ] || [ "$code" = 401 ]; then
        echo "127.0.0.1:$port" > "$dir/address"
        echo "127.0.0.1:$port"
        return 0
      fi
      kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
      sleep 0.1
    done
    kill "$(cat "$dir/pid")" 2>/dev/null || true
    wait "$(cat "$dir/pid")" 2>/dev/null || true
  done
  die "the registry did not start; see $dir/registry.log"
}

stop() {
  local dir=$1
  [ -f "$dir/pid" ] || return 0
  local pid
  pid=$(cat "$dir/pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
}

case ${1:-} in
  start) [ $# -ge 2 ] || die "usage: $0 start DIR [--no-tls] [--no-auth] [--token-realm URL]"; shift; start "$@" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  *) die "usage: $0 start DIR [--no-tls] [--no-auth] [--token-realm URL] | stop DIR" ;;
esac
