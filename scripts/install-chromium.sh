#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing and we are root.
# The tests drive it with Python playwright (never `playwright install`, which downloads a browser).
set -u
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "note: /usr/bin/chromium is missing and we are not root; browser tests will be skipped." >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null \
  || echo "note: could not install chromium; browser tests will be skipped." >&2
exit 0
