#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium when it is missing: the report's browser test
# (sim/tests/cli.rs, `report_renders_and_steps_in_headless_chromium`) opens `gpusim report`
# pages in it. Idempotent; needs root and apt (Debian/Ubuntu).
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then
        exit 0
    fi
done
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium: Chromium is missing and cannot be installed here (needs root and apt-get)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q chromium >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    apt-get install -y -q chromium >/dev/null
}
command -v chromium >/dev/null
