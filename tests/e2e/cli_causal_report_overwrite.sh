#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `lever causal report --html` never writes over its input (issue 14,
# point 9): not the default ./profile.coz, not another name for it, not even
# with --force; an existing profile or samples file that is not an input is
# replaced only with --force; an old HTML report is replaced.
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
lever=$build/bin/lever
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$tmp" || exit 1
cp "$src/tests/e2e/data/critical_path.coz" profile.coz
cp profile.coz keep.coz

refused() { # expected message, then the command
	local msg=$1
	shift
	"$@" >out 2>err && fail "'$*' succeeded"
	grep -q -- "$msg" err || fail "'$*': expected '$msg', got: $(cat err)"
}

refused 'profile.coz is also an input (profile.coz): refusing' "$lever" causal report --html profile.coz
cmp -s profile.coz keep.coz || fail "the default input was overwritten"
ln -s profile.coz alias.coz
refused 'alias.coz is also an input' "$lever" causal report --force --html alias.coz profile.coz
cmp -s profile.coz keep.coz || fail "the input was overwritten through another name"

cp keep.coz other.coz
refused 'other.coz exists and holds a causal profile: refusing .*--force' \
	"$lever" causal report --html other.coz
cmp -s other.coz keep.coz || fail "another profile was overwritten without --force"
"$lever" causal report --force --html other.coz >/dev/null 2>err || fail "--force: $(cat err)"
grep -q '<html' other.coz || fail "--force did not write the HTML"

printf '# seconds\n1.25\n1.5\n' >times.txt
refused 'times.txt exists and holds samples' "$lever" causal report --html times.txt

"$lever" causal report --html report.html >/dev/null 2>err || fail "new HTML: $(cat err)"
"$lever" causal report --html report.html >/dev/null 2>err || fail "old HTML not replaced: $(cat err)"
cmp -s profile.coz keep.coz || fail "the profile changed"
echo "cli_causal_report_overwrite: ok"
