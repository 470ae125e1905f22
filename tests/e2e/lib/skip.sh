# SPDX-License-Identifier: GPL-3.0-or-later
# How an e2e test reports a missing optional dependency: it does not pass, it
# exits 77, which ctest shows as "Skipped" (SKIP_RETURN_CODE, set on every
# e2e test by lever_e2e_test). Under CI=true a missing dependency is a failure
# instead: CI runs scripts/install-deps.sh, so a skip there means it is broken.

skip_test() { # REASON
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1 (CI=true: CI installs every dependency, scripts/install-deps.sh)"
		exit 1
	fi
	echo "SKIPPED: $1 (scripts/install-deps.sh installs it)"
	exit 77
}

# need COMMAND PACKAGE : skip the whole test unless COMMAND is on PATH.
# LEVER_TEST_MISSING="cmd ..." pretends those commands are absent, to check
# this path itself (ctest must show the test as skipped, or failed under CI).
need() {
	case " ${LEVER_TEST_MISSING:-} " in
	*" $1 "*) skip_test "$1 is missing (Debian package $2; LEVER_TEST_MISSING)" ;;
	esac
	command -v "$1" >/dev/null || skip_test "$1 is missing (Debian package $2)"
}
