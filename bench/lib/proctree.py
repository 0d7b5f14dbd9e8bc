"""Process-tree helpers for bench/run's idle-sandbox measurements.

  proctree.py mem ROOT...            "PROCESSES RSS PSS" (KiB) summed over the
                                     ROOTs' trees, the "sleep" payload left out
  proctree.py pids ROOT...           every pid in the trees (for clean-up)
  proctree.py split ROOT...          "SENTRIES RSS PSS USS TREE-PROCESSES RSS PSS USS"
                                     (KiB): the ROOTs alone, then their whole trees
                                     (USS: private pages, what one more costs)"""
import os
import sys


def table():
    kids, comm = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        pid = int(d)
        name = s[s.index("(") + 1 : s.rindex(")")]
        ppid = int(s[s.rindex(")") + 2 :].split()[1])
        comm[pid] = name
        kids.setdefault(ppid, []).append(pid)
    return kids, comm


def tree(root, kids):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def field(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rollup(p):
    out = {}
    try:
        with open("/proc/%d/smaps_rollup" % p) as f:
            for line in f:
                k, _, rest = line.partition(":")
                if rest.strip().endswith("kB"):
                    out[k] = int(rest.split()[0])
    except OSError:
        pass
    return out


def split(roots, kids):
    def add(acc, p):
        r = rollup(p)
        acc[0] += 1
        acc[1] += r.get("Rss", 0)
        acc[2] += r.get("Pss", 0)
        acc[3] += r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)

    alone, whole = [0, 0, 0, 0], [0, 0, 0, 0]
    for r in roots:
        add(alone, r)
        for p in tree(r, kids):
            add(whole, p)
    print(" ".join(str(v) for v in alone + whole))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    kids, comm = table()
    if cmd == "split":
        split([int(a) for a in args], kids)
        return
    if cmd == "pids":
        print(" ".join(str(p) for r in args for p in tree(int(r), kids)))
        return
    n = rss = pss = 0
    for r in args:
        for p in tree(int(r), kids):
            if comm.get(p) == "sleep" or p not in comm:
                continue
            n += 1
            rss += field("/proc/%d/status" % p, "VmRSS")
            pss += field("/proc/%d/smaps_rollup" % p, "Pss")
    print(n, rss, pss)


if __name__ == "__main__":
    main()
