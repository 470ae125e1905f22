import sys, statistics as st, collections
d=collections.defaultdict(list); r=collections.defaultdict(list)
for l in open(sys.argv[1]):
    v,t,m=l.strip().split(','); d[v].append(float(t)); r[v].append(float(m))
g=st.median(d['glibc']) if 'glibc' in d else None
for v in d:
    print(f"{v:12s} n={len(d[v])} task_ms median {st.median(d[v]):.1f}  q1-q3 {st.quantiles(d[v],n=4)[0]:.1f}-{st.quantiles(d[v],n=4)[2]:.1f}  rss {st.median(r[v])/1024:.2f} MiB" + (f"  cpu/glibc {st.median(d[v])/g:.3f} rss/glibc {st.median(r[v])/st.median(r['glibc']):.3f}" if g else ""))
