#!/usr/bin/env python3
"""Rebuilds BENCHMARKS.md from benchmarks/_intro.md and the per-topic files in benchmarks/."""
import re, sys, os
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
order = [('fieldtrial.md','The caller\'s latency: the field trial'),('executor.md','The executor against its peers'),('closedloop.md','The closed loop, side by side'),('flowloop.md','The flow loop on the seed\'s plant'),
         ('gcra.md','PowerGCRA'),('histogram.md','PowerHistogram'),('queue.md','PowerQueue'),
         ('backpressure.md','PowerBackpressure'),('redis.md','RedisGCRA'),('observability.md','Observability cost')]
head = open(os.path.join(root,'benchmarks','_intro.md')).read()
out = [head]
for fn, title in order:
    p = os.path.join(root,'benchmarks',fn)
    if not os.path.exists(p):
        continue
    txt = open(p).read()
    lines = txt.splitlines()
    # drop the file's own H1, demote the rest by one level
    if lines and lines[0].startswith('# '):
        lines = lines[1:]
    res = []
    fence = False
    for l in lines:
        if l.startswith('```'):
            fence = not fence
        if not fence and re.match(r'^#{1,5} ', l):
            l = '#' + l
        if not fence:
            # links are written relative to benchmarks/; BENCHMARKS.md sits one level up
            l = re.sub(r'\]\((?!https?:|#|/)([^)]+)\)',
                       lambda m: '](' + os.path.normpath(os.path.join('benchmarks', m.group(1))) + ')', l)
        res.append(l)
    out.append('## ' + title + ' ([source](benchmarks/' + fn + '))\n' + '\n'.join(res).rstrip() + '\n')
open(os.path.join(root,'BENCHMARKS.md'),'w').write('\n'.join(out))
print('ok')
