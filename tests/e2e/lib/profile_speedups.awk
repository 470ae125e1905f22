# Independent check of a causal profile (Coz legacy format): for each selected
# line and speedup, sums effective durations and progress visits over the
# experiments, and prints "LINE SPEEDUP PROGRAM_SPEEDUP_PERCENT VISITS" with
# program speedup = 1 - period_s / period_0 against the line's own 0% baseline.
BEGIN { FS = "\t" }
function val(field) { sub(/^[^=]*=/, "", field); return field }
$1 == "experiment" {
	line = val($2); speedup = int(val($3) * 100 + 0.5); dur = val($4) + 0
	cur = (dur > 0) ? line SUBSEP speedup : ""
	if (cur != "") { duration[cur] += dur; lines[line] = 1; speeds[speedup] = 1 }
	next
}
($1 == "throughput-point" || $1 == "progress-point") && cur != "" {
	for (i = 2; i <= NF; i++) if ($i ~ /^delta=/) visits[cur] += val($i)
	next
}
END {
	for (l in lines) {
		base = l SUBSEP 0
		if (!(base in visits) || visits[base] == 0) continue
		p0 = duration[base] / visits[base]
		for (s in speeds) {
			k = l SUBSEP s
			if (!(k in visits) || visits[k] == 0) continue
			printf "%s %d %.2f %d\n", l, s, 100 * (1 - (duration[k] / visits[k]) / p0), visits[k]
		}
	}
}
