# SPDX-License-Identifier: GPL-3.0-or-later
# Helpers of the tests of lever annotate record (tests/e2e/annotate_probe_*.sh):
# reading a record with awk, by symbol name.

# calls RECORD NAME: how many C lines the symbol NAME has.
calls() {
	awk -v n="$2" '$1 == "S" { s = $2; $1 = $2 = ""; sub(/^  /, ""); if ($0 == n) sym[s] = 1 }
		$1 == "C" && ($2 in sym) { c++ } END { print c + 0 }' "$1"
}

# probe_stat RECORD NAME FIELD: FIELD (calls, recorded, unwound, ...) of NAME's
# `# probe` summary lines, summed over processes.
probe_stat() {
	awk -v n="$2" -v f="$3" '$1 == "#" && $2 == "probe" && $NF == n {
		for (i = 4; i < NF; i++) { split($i, kv, "="); if (kv[1] == f) t += kv[2] } }
		END { print t + 0 }' "$1"
}

# probe_kind RECORD NAME: how NAME was probed (sled, live, uprobe, none).
probe_kind() {
	awk -v n="$2" '$1 == "#" && $2 == "probe" && $NF == n { sub(/kind=/, "", $5); print $5; exit }' "$1"
}

# parents_within RECORD CHILD PARENT...: every CHILD call's parent is a call of
# one of the PARENT symbols (0 allowed when "0" is among them); prints the
# number of violations.
parents_within() {
	local rec=$1 child=$2
	shift 2
	awk -v child="$child" -v parents=" $* " '
		$1 == "S" { s = $2; $1 = $2 = ""; sub(/^  /, ""); name[s] = $0 }
		$1 == "C" { sym_of[$3] = name[$2]; if (name[$2] == child) kids[$3] = $4 }
		END { bad = 0
			for (k in kids) { p = kids[k]
				if (p == 0) { if (index(parents, " 0 ") == 0) bad++; continue }
				if (!(p in sym_of) || index(parents, " " sym_of[p] " ") == 0) bad++ }
			print bad }' "$rec"
}

# well_formed RECORD: prints the number of lines that are not a header, S, F,
# C or comment line of the format (doc/formats/annotate-record.md); values in
# strtod syntax (features may be negative, or large enough for an exponent).
well_formed() {
	awk 'NR == 1 { if ($1 != "lever-annotate-record" || $2 != 1) bad++; next }
		/^S [0-9]+ ./ || /^F [0-9]+ [0-9]+ [a-z-]+ ./ || /^# / || /^$/ { next }
		/^C [0-9]+ [1-9][0-9]* [0-9]+( [A-Za-z0-9]+=(-?[0-9.]+([eE][-+]?[0-9]+)?|\?|[TN-]+|[TN]+\+[0-9]+))*$/ { next }
		{ bad++; print "bad line " NR ": " $0 > "/dev/stderr" }
		END { print bad + 0 }' "$1"
}

# unique_ids RECORD: prints the number of call ids used twice.
unique_ids() {
	awk '$1 == "C" { if (seen[$3]++) dup++ } END { print dup + 0 }' "$1"
}

check() { # DESCRIPTION EXPECTED ACTUAL
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: expected $2, got $3"
		exit 1
	fi
	echo "ok: $1 ($3)"
}
