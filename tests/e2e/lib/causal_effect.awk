# SPDX-License-Identifier: GPL-3.0-or-later
# The measured effect of one line's virtual speedup in a causal profile (Coz
# legacy format, doc/formats/profile.md), with its own standard error, for
# tests whose bounds must come from the data rather than from a guess of how
# loaded the machine is. Experiments on lines ending in KEY (awk -v key=...)
# at line speedups >= 50% are each paired with a 0% experiment next to it in
# time (the latest unused one before it, else the first after it; no
# experiment is in two pairs), so that a load that drifts over the run (a
# build starting beside it: 10 ms rounds became 20 ms ones in a recorded
# profile) moves both sides of a pair alike instead of adding to the spread.
# Prints
#   P K SE N
# P  program speedup, percent: 1 - sum(d_i) / sum(v_i b_i), with d_i, v_i
#    the duration and visits of a sped-up experiment and b_i its partner's
#    period (duration / visits): the time its visits took against the time
#    they would have taken at its partner's pace (sums, never averaged rates)
# K  the credited fraction: selected samples x period x speedup over
#    sum(v_i b_i), percent. It is what the pauses would save if none of them
#    lengthened a round. Samples count CPU time and rounds take wall time, so
#    K shrinks with the CPU share the program gets, and P with it.
# SE standard error of P, percent, from the spread of the pairs around the
#    ratio (ratio estimator: var = sum((d_i - R x_i)^2) / (n (n - 1) xbar^2),
#    x_i = v_i b_i); disjoint pairs make the terms independent. The speedups
#    are drawn at random, so what load does to a pair is noise, not bias.
# N  pairs. Fewer than 2 give SE 999.
BEGIN { FS = "\t" }
function val(f) { sub(/^[^=]*=/, "", f); return f }
function ends_with(s, t) { return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t }
$1 == "startup" { for (i = 2; i <= NF; i++) if ($i ~ /^period=/) period = val($i) + 0 }
$1 == "experiment" {
	close_experiment()
	s = int(val($3) * 100 + 0.5)
	cur = 0
	if (val($4) + 0 > 0 && ends_with(val($2), key) && (s == 0 || s >= 50)) {
		cur = 1; cur_s = s; cur_d = val($4) + 0; cur_v = 0
		cur_c = val($5) * period * s / 100
	}
	next
}
($1 == "throughput-point" || $1 == "progress-point") && cur {
	for (j = 2; j <= NF; j++) if ($j ~ /^delta=/) cur_v += val($j)
}
# pairs the finished experiment with a waiting partner, or makes it wait
function close_experiment() {
	if (!cur || cur_v == 0) { cur = 0; return }
	cur = 0
	if (cur_s == 0) {
		if (sped_waiting) { pair(sw_d, sw_v, sw_c, cur_d / cur_v); sped_waiting = 0 }
		else { base_waiting = 1; bw_b = cur_d / cur_v }
	} else if (base_waiting) {
		pair(cur_d, cur_v, cur_c, bw_b); base_waiting = 0
	} else {
		# an older sped-up experiment still waiting is left unpaired
		sped_waiting = 1; sw_d = cur_d; sw_v = cur_v; sw_c = cur_c
	}
}
function pair(d, v, c, b) { n++; y[n] = d; x[n] = v * b; credit += c }
END {
	close_experiment()
	for (i = 1; i <= n; i++) { sy += y[i]; sx += x[i] }
	if (n < 2 || !period) { printf "0 0 999 %d\n", n; exit }
	r = sy / sx
	for (i = 1; i <= n; i++) q += (y[i] - r * x[i]) ^ 2
	se = sqrt(q / (n * (n - 1))) / (sx / n)
	printf "%.2f %.2f %.2f %d\n", 100 * (1 - r), 100 * credit / sx, 100 * se, n
}
