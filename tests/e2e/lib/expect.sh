# SPDX-License-Identifier: GPL-3.0-or-later
# Checks shared by the e2e scripts; the caller sets tmp (a scratch directory)
# and fails (the count of failed checks).

# expect STATUS PATTERN CMD... : exit status and a pattern in stdout+stderr
expect() {
	local want=$1 pattern=$2 got
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" != "$want" ] || ! grep -qE -- "$pattern" "$tmp/out"; then
		echo "FAIL: $* -> exit $got (want $want), output:"
		sed 's/^/    /' "$tmp/out" | head -30
		echo "    (expected /$pattern/)"
		fails=$((fails + 1))
	else
		echo "ok: $* -> $got"
	fi
}

# check DESCRIPTION COMMAND... : the command succeeds
check() {
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}
