#!/bin/sh
# A service replica of the compose stack: waits for the init service's token file, then runs the compiled service
# with that token (every other setting comes from the compose environment).
set -eu
waited=0
while [ ! -s "${TOKEN_FILE:?}" ]; do
  waited=$((waited + 1))
  if [ "$waited" -gt 240 ]; then echo "no token address in $TOKEN_FILE after 2 minutes" >&2; exit 1; fi
  sleep 0.5
done
TOKEN_ADDRESS="$(cat "$TOKEN_FILE")"
export TOKEN_ADDRESS
exec node --enable-source-maps --max-semi-space-size=32 --no-allocation-site-pretenuring .build/main.js
