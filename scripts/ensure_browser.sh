#!/usr/bin/env bash
# The browser tests/arms_doc/test_browser.py opens: Debian's chromium, installed when missing.
#
# Run by `make test` before pytest. Playwright (the test extra) drives whatever chromium is on
# PATH; its own browser download is never used. This never fails the build: without apt-get, or
# when the install cannot be done (not root, no package lists, no network), it says so and the
# browser test skips with the reason.
set -u

for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done

say() { echo "ensure_browser: $*" >&2; }

if ! command -v apt-get >/dev/null 2>&1; then
  say "no chromium and no apt-get to install it; the browser test will skip"
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  say "no chromium, and installing it needs root (apt-get install chromium); the browser test will skip"
  exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o APT::Sandbox::User=root \
    chromium >"$log" 2>&1
}
echo "+ apt-get install chromium (for the docs' browser test)"
# The package lists may be missing on a fresh machine: fetch them only when the install needs them.
if install || { apt-get update -q >>"$log" 2>&1 && install; }; then
  exit 0
fi
say "could not install chromium; the browser test will skip. apt-get said:"
tail -n 5 "$log" >&2
exit 0
