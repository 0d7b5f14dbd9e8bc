"""Process-tree helpers for bench/run's idle-sandbox measurements.

  proctree.py mem ROOT...            "PROCESSES RSS PSS" (KiB) summed over the
                                     ROOTs' trees, the "sleep" payload left out
  proctree.py pids ROOT...           every pid in the trees (for clean-up)"""
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


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    kids, comm = table()
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
