# SPDX-License-Identifier: GPL-3.0-or-later
# The start most e2e scripts share, sourced as their first step with the
# script's own arguments ($1: the build directory): build (absolute),
# lever, a scratch directory tmp removed on exit, the count of failed
# checks fails, and fail MESSAGE to count one. A script that needs another
# EXIT trap or its own fail() sets it after sourcing this.
# shellcheck shell=bash disable=SC2034
build=$(cd "$1" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
