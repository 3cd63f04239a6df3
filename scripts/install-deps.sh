#!/usr/bin/env sh
# Installs the Debian/Ubuntu packages listed in scripts/debian-packages.txt (as root, or
# through sudo).
set -eu
here=$(dirname "$0")
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update
# shellcheck disable=SC2046
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
  $(grep -v '^#' "$here/debian-packages.txt")
