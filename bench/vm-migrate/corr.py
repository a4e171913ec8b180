#!/usr/bin/env python3
# corr.py OUT [DELTA] - (bench/vm-migrate) per run of guest.sh, the writer rate per 2 s and the host CPU share of the two vCPU threads then.
import re,sys
out,host=sys.argv[1],sys.argv[1]+'.host'
delta=float(sys.argv[2]) if len(sys.argv)>2 else 1.0
L=open(host).read().split('\n')
start=int(L[0].split()[3])/100.0
samples=[]
for l in L[1:]:
    f=l.split()
    if len(f)<2: continue
    t=float(f[0]); d={}
    for x in f[1:-1]:
        k,v=x.split(':'); d[k]=int(v or 0)
    samples.append((t,d,f[-1]))
# vcpu threads: the two with most ticks at end
last=samples[-1][1]
top=sorted(last,key=lambda k:-last[k])[:2]
def at(t):
    best=min(samples,key=lambda s:abs(s[0]-t)); return best
marks={}
for l in open(out):
    m=re.search(r'MARK (b|e) (\S+) up ([\d.]+)',l)
    if m: marks.setdefault('cur',[]).append((m.group(1),m.group(2),float(m.group(3))))
    m=re.search(r'RES (\S+) rate (\d+).*?per_s: (.*)',l)
    if m:
        b=[x for x in marks['cur'] if x[0]=='b'][-1][2]; e=[x for x in marks['cur'] if x[0]=='e'][-1][2]
        # per 2-second chunk host cpu of top threads
        rates=[int(x) for x in m.group(3).split()]
        chunks=[]
        for i in range(0,len(rates),2):
            s0=at(start+delta+b+i); s1=at(start+delta+b+i+2)
            dt=s1[0]-s0[0] or 1
            cpu=[ (s1[1].get(k,0)-s0[1].get(k,0))/100/dt for k in top]
            r=sum(rates[i:i+2])/len(rates[i:i+2])
            chunks.append("%.1fe6 [%.2f %.2f]"%(r/1e6,cpu[0],cpu[1]))
        print(m.group(1).ljust(7),"%.1fe6"%(int(m.group(2))/1e6)," | ".join(chunks), "load", s0[2])
