#!/usr/bin/env python3
"""`cordon sandbox exec` of /bin/true into one live sandbox, end to end, N times.

  exectime.py CORDON ROOT N

Each round runs, one after the other, the exec, a bare `cordon --version` (the
client's own start: the same binary, nothing sent) and /bin/true natively, each
timed from here around subprocess.run (no shell in between), so that the three
share the machine's load. Prints one line per kind, tab-separated: kind, runs,
median ms, minimum ms. The sandbox is created under ROOT and terminated.
"""
import statistics
import subprocess
import sys
import time


def timed(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, r.returncode


def main():
    cordon, root, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    base = [cordon, "sandbox", "--root", root]
    made = subprocess.run(base + ["create", "--ttl", "10m"], capture_output=True, text=True, timeout=60)
    if made.returncode != 0:
        sys.exit("exectime: sandbox create failed: %s" % made.stderr.strip()[:200])
    sid = made.stdout.split()[-1]
    kinds = {"exec": base + ["exec", sid, "--", "/bin/true"], "version": [cordon, "--version"],
             "true": ["/bin/true"]}
    times = {k: [] for k in kinds}
    try:
        # one round to warm the page cache, not counted
        for argv in kinds.values():
            timed(argv)
        for _ in range(n):
            for k, argv in kinds.items():
                t, rc = timed(argv)
                if rc != 0:
                    sys.exit("exectime: %s exited %d" % (" ".join(argv), rc))
                times[k].append(t)
    finally:
        subprocess.run(base + ["terminate", sid], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60)
    for k, ts in times.items():
        print("%s\t%d\t%.3f\t%.3f" % (k, len(ts), statistics.median(ts) * 1e3, min(ts) * 1e3))


if __name__ == "__main__":
    main()
