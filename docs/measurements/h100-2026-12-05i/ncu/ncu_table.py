import re, sys
for path in sys.argv[1:]:
    txt = open(path).read()
    recs = re.split(r'\n  (?=[A-Za-z_][\w]* \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\))', txt)[1:]
    print("==", path)
    for r in recs:
        head = r.splitlines()[0]
        m = re.match(r'(\S+) (\(\d+, \d+, \d+\))x(\(\d+, \d+, \d+\))', head)
        if not m: continue
        def g(pat):
            x = re.search(pat + r'\s+\S+\s+([\d.,]+)', r)
            return x.group(1) if x else '-'
        st = {k: g(r'Stall ' + k) for k in ['Long Scoreboard', 'Wait', 'Barrier', 'Membar', 'Branch Resolving', 'GMMA']}
        cl = re.search(r'Cluster Size\s+([\d]+)', r)
        print("%-40s %s x %s cl %s | %s us | L2 %s MB | DRAM %s MB | occ %s%% | stalls LS %s wait %s bar %s membar %s br %s" % (
            m.group(1)[:40], m.group(2), m.group(3), cl.group(1) if cl else '-', g('Duration'), g(r'lts__t_bytes.sum'),
            g(r'dram__bytes_read.sum'), g(r'Achieved Occupancy'), st['Long Scoreboard'], st['Wait'], st['Barrier'], st['Membar'], st['Branch Resolving']))
