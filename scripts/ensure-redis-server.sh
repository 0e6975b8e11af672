#!/usr/bin/env bash
# Make sure Debian's redis-server, redis-tools and redis-sentinel are installed.
#
# redis-server 7.0.15 is the reference implementation the differential tests
# compare against; redis-tools brings redis-cli and redis-benchmark, which the
# CLI tests drive; redis-sentinel watches Tidelog in the failover test.  When they are missing and we are root on a Debian-like
# system, this installs them (apt-get update once, then apt-get install);
# otherwise it says why not, and the tests that need them are skipped.
#
# The server is only installed, never started: a redis-server listening on
# 6379 would take the port `make run` uses.  Where no policy says otherwise,
# a temporary policy-rc.d keeps the package's service from starting.
#
# Exit status: 0 whether or not the install was possible (the test suite
# skips what it cannot run); set REQUIRE_REDIS=1 to make a failure fatal.

set -euo pipefail

have() {
  command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ]
}

version() {
  local exe
  exe=$(command -v redis-server 2>/dev/null || echo /usr/bin/redis-server)
  "$exe" --version 2>/dev/null | head -n 1
}

cannot() {
  echo "WARNING: $1" >&2
  echo "WARNING: the differential tests and the redis-cli/redis-benchmark tests will be SKIPPED." >&2
  if [ "${REQUIRE_REDIS:-0}" = 1 ]; then
    exit 1
  fi
  exit 0
}

packages=()
have redis-server || packages+=(redis-server)
if ! have redis-cli || ! have redis-benchmark; then
  [ ${#packages[@]} -gt 0 ] || packages+=(redis-tools)
fi
have redis-sentinel || packages+=(redis-sentinel)

if [ ${#packages[@]} -eq 0 ]; then
  echo "redis-server present: $(version)"
  exit 0
fi

echo "missing: ${packages[*]} (the reference Redis for the differential and CLI tests)"
if [ "$(id -u)" -ne 0 ]; then
  cannot "not root, so cannot install ${packages[*]}; as root run: apt-get update && apt-get install -y ${packages[*]}"
fi
if ! command -v apt-get >/dev/null 2>&1; then
  cannot "apt-get not found (not a Debian-like system): install ${packages[*]} by hand"
fi

policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  # 101: "action forbidden by policy" -- the package's service is not started.
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  own_policy=1
fi
cleanup() {
  if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
echo "+ apt-get update"
if ! apt-get update; then
  cannot "apt-get update failed"
fi
echo "+ apt-get install -y ${packages[*]}"
if ! apt-get install -y "${packages[@]}"; then
  cannot "apt-get install -y ${packages[*]} failed"
fi

if have redis-server && have redis-cli && have redis-benchmark && have redis-sentinel; then
  echo "installed: $(version)"
else
  cannot "${packages[*]} installed, but redis-server/redis-cli/redis-benchmark/redis-sentinel are still not found"
fi
