"""Turns bench/run's raw measurements into the Markdown report.

  report.py RUNDIR

RUNDIR holds: meta.tsv (key, value), sandboxes.tsv (name, state, note),
rows.tsv (workload, label, unit, table), raw.tsv (rep, workload, sandbox,
ok|fail, wall_us, metric), stats/WORKLOAD.json (cordon --stats of the last
repetition) and idle.tsv (see bench/run)."""
import json
import os
import statistics
import sys

D = sys.argv[1]


def tsv(name):
    p = os.path.join(D, name)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


meta = {r[0]: r[1] for r in tsv("meta.tsv")}
sandboxes = tsv("sandboxes.tsv")
active = [s[0] for s in sandboxes if s[1] == "ok"]
rows = tsv("rows.tsv")
na = {(r[0], r[1]) for r in tsv("na.tsv")}
skipped = {r[0]: r[1] for r in tsv("skipped.tsv")}

# the floor variant each child loop compares with (bench/micro/floor.c)
MICRO_FLOOR = {"sys-missing": "notify openat (missing)", "sys-open": "emulated openat (existing) + close"}

vals, fails = {}, {}
for rep, wl, sb, status, wall, metric in tsv("raw.tsv"):
    if rep == "0":
        if status != "ok":
            fails[(wl, sb)] = fails.get((wl, sb), 0) + 1
        continue
    if status == "ok":
        vals.setdefault((wl, sb), []).append(float(metric))
    else:
        fails[(wl, sb)] = fails.get((wl, sb), 0) + 1


def med(wl, sb):
    v = vals.get((wl, sb))
    return statistics.median(v) if v else None


def fmt(v, unit):
    if v is None:
        return "fail"
    if unit == "s":
        return "%.3f s" % v
    if unit in ("ms", "us"):
        return ("%.2f %s" if v < 10 else "%.1f %s" if v < 100 else "%.0f %s") % (v, "µs" if unit == "us" else unit)
    if unit == "ns":
        return "%.0f ns" % v
    if unit == "MB/s":
        return "%.0f MB/s" % v
    return "%g %s" % (v, unit)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return ""
    r = a / b
    return "×%.2f" % r if r < 10 else "×%.1f" % r if r < 100 else "×%.0f" % r


def cell(wl, sb, unit):
    if (wl, sb) in na:
        return "n/a"
    v = med(wl, sb)
    n = len(vals.get((wl, sb), []))
    if v is None:
        return "fail" if fails.get((wl, sb)) else "–"
    s = fmt(v, unit)
    if sb != "native":
        r = ratio(v, med(wl, "native"))
        if r:
            s += " (%s)" % r
    if fails.get((wl, sb)):
        s += " (%d of %d failed)" % (fails[(wl, sb)], fails[(wl, sb)] + n)
    return s


out = []
p = out.append
p("# cordon benchmark, %s" % meta.get("date", "?"))
p("")
p("Host: %s; %s CPUs; kernel %s; %s. cordon %s. Mode: %s, %s repetitions (after one warm-up "
  "pass that is not counted), sandboxes interleaved round-robin within each repetition; "
  "every cell is the median." % (meta.get("cpu", "?"), meta.get("ncpu", "?"), meta.get("kernel", "?"),
                                 meta.get("os", "?"), meta.get("cordon", "?"), meta.get("mode", "?"), meta.get("reps", "?")))
p("")
p("Sandboxes: " + "; ".join("**%s** %s%s" % (s[0], "" if s[1] == "ok" else s[1] + " ", "(" + s[2] + ")" if len(s) > 2 and s[2] else "") for s in sandboxes) + ".")
p("")
p("Ratios are sandbox ÷ native: above 1 is slower for times, below 1 is slower for MB/s. "
  "Scratch files go to a tmpfs in every column (native and proot: %s; cordon and bwrap: their private /tmp)." % meta.get("shm", "/dev/shm"))
p("")

for table, title in (("main", "## Workloads"), ("micro", "## Micro-benchmarks (the child loop)")):
    tr = [r for r in rows if r[3] == table]
    if not tr:
        continue
    p(title)
    p("")
    hdr = ["workload"] + active

    p("| " + " | ".join(hdr) + " |")
    p("|" + "---|" * len(hdr))
    for wl, label, unit, _ in tr:
        if wl in skipped:
            p("| %s | %s |" % (label, " | ".join(["skipped: " + skipped[wl]] * len(active))))
            continue
        cells = [label] + [cell(wl, sb, unit) for sb in active]
        p("| " + " | ".join(cells) + " |")
    p("")

floor = [r for r in rows if r[3] == "floor"]
if floor:
    p("## The seccomp user-notification floor (bench/micro/floor.c)")
    p("")
    p("A minimal supervisor (one thread unless said) answering the trapped syscall with -ENOENT through "
      "SECCOMP_IOCTL_NOTIF_RECV/SEND; \"emulated\" rows copy the path with process_vm_readv, open it in the "
      "supervisor and inject the fd with SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND. "
      "%s calls per variant, ns per call, median over the repetitions (min–max in brackets: without "
      "SYNC_WAKE_UP the cost depends on whether the scheduler puts both ends on one CPU)." % meta.get("floor_n", "?"))
    p("")
    p("| variant | ns per call | × the same call natively |")
    p("|---|---|---|")
    for wl, label, unit, _ in floor:
        v = med(wl, "native")
        base = None
        for key in ("getppid", "openat (missing)", "openat (existing) + close",
                    "openat (O_CREAT|O_TRUNC in /dev/shm) + close"):
            if key in label:
                base = med("floor:native " + key, "native")
        spread = ""
        if vals.get((wl, "native")) and len(vals[(wl, "native")]) > 1:
            spread = " (%.0f–%.0f)" % (min(vals[(wl, "native")]), max(vals[(wl, "native")]))
        p("| %s | %s%s | %s |" % (label, fmt(v, "ns") if v is not None else "fail", spread,
                                  "" if label.startswith("native") else ratio(v, base)))
    p("")

stats = []
for wl, label, unit, table in rows:
    f = os.path.join(D, "stats", wl + ".json")
    if not os.path.exists(f):
        continue
    try:
        with open(f) as fh:
            st = json.load(fh)
    except (OSError, ValueError):
        continue
    ts = {k: v for k, v in (st.get("trappedSyscalls") or {}).items() if v}
    stats.append((wl, label, unit, ts, st))
if stats:
    p("## What cordon trapped (`--stats`, last repetition)")
    p("")
    su = None
    if med("coldstart", "cordon") is not None and med("coldstart", "native") is not None:
        su = (med("coldstart", "cordon") - med("coldstart", "native")) / 1000
    p("Overhead per trapped call = (cordon − native − cordon's extra start-up%s) ÷ trapped calls, for the "
      "wall-time workloads; an estimate, since the sandbox also costs in other ways." %
      (" of %.1f ms from the cold-start row" % (su * 1000) if su is not None else ""))
    p("")
    p("| workload | trapped syscalls | total | cordon − native | per trapped call | cordon peak memory |")
    p("|---|---|---|---|---|---|")
    for wl, label, unit, ts, st in stats:
        tot = sum(ts.values())
        desc = ", ".join("%s %d" % (k, v) for k, v in sorted(ts.items(), key=lambda kv: -kv[1])) or "none"
        c, n = med(wl, "cordon"), med(wl, "native")
        diff = per = ""
        if unit == "s" and c is not None and n is not None and wl not in ("compute", "fio-open"):
            diff = "%+.0f ms" % ((c - n) * 1000)
            if tot >= 100 and c - n - (su or 0) > 0:
                per = "%.1f µs" % ((c - n - (su or 0)) * 1e6 / tot)
        mem = st.get("memoryPeakBytes")
        p("| %s | %s | %d | %s | %s | %s |" % (label, desc, tot, diff, per, "%.1f MiB" % (mem / 1048576) if mem else ""))
    p("")

FLOOR_OPEN = ("emulated openat (existing) + close, ADDFD then SEND, SYNC_WAKE_UP",
              "emulated openat (existing) + close, SYNC_WAKE_UP")
FLOOR_MISSING = ("notify openat (missing), SYNC_WAKE_UP",)
FLOOR_CREAT = ("notify openat (O_CREAT|O_TRUNC in /dev/shm) + close, path copied, CONTINUE, SYNC_WAKE_UP",)


def floor_of(names):
    v = [med("floor:" + n, "native") for n in names]
    v = [x for x in v if x]
    return min(v) if v else None


HANDLERS = [("sys-open", "openat (existing, read-only) + close (default: native)", ["openat"]),
            ("h-open-trap", None, ["openat"]),
            ("h-missing-trap", None, ["openat"]),
            ("h-creat", None, ["openat"]),
            ("h-stat", None, ["newfstatat", "stat"]),
            ("h-mkdir", None, ["mkdir", "rmdir"]),
            ("h-connect", None, ["connect"])]
labels = {r[0]: r[1] for r in rows}
hrows = [h for h in HANDLERS if h[0] in labels and h[0] not in skipped]
if hrows:
    p("## Per-handler costs (the child loop, natively and under cordon)")
    p("")
    p("ns per loop iteration as the child sees it (the trapped call's whole round trip plus the native "
      "part of the loop), and the sentry's own time per trapped call from `--stats` (trappedSyscallTime: "
      "from the receive to the reply that wakes the caller), last repetition.")
    p("")
    p("| loop | native | cordon | cordon − native | sentry's time per trapped call | cordon ÷ the bare floor |")
    p("|---|---|---|---|---|---|")
    for wl, label, names in hrows:
        n, c = med(wl, "native"), med(wl, "cordon")
        st = {}
        f = os.path.join(D, "stats", wl + ".json")
        try:
            with open(f) as fh:
                st = json.load(fh).get("trappedSyscallTime") or {}
        except (OSError, ValueError):
            pass
        own = ", ".join("%s %.1f µs (%d calls)" % (k, st[k]["meanNs"] / 1000, st[k]["calls"])
                        for k in names if k in st and st[k]["calls"] >= 100) or "– (not trapped)"
        fl = floor_of({"h-open-trap": FLOOR_OPEN, "h-missing-trap": FLOOR_MISSING, "h-creat": FLOOR_CREAT}.get(wl, ()))
        p("| %s | %s | %s | %s | %s | %s |" % (label or labels[wl], fmt(n, "ns") if n is not None else "fail",
                                               cell(wl, "cordon", "ns"),
                                               "%.1f µs" % ((c - n) / 1000) if c is not None and n is not None else "",
                                               own, ratio(c, fl) if fl else ""))
    p("")

created = tsv("create.tsv")
if created:
    p("## `cordon sandbox create` × N: long-lived idle sandboxes")
    p("")
    p("N sandboxes created one after another (`cordon sandbox create --ttl 10m`, each a detached sentry "
      "with init, the proc agent and the exec tracer), then, 1 s later, memory from smaps_rollup. "
      "USS = private pages: what one more sandbox costs the host. Their state is under %s%s." % (
          meta.get("create_root", "?"),
          " (runtime state, not synced, as under the default root)" if meta.get("create_root", "").startswith("/run/")
          else " (a disk: each sentry syncs its event log and meta.json)"))
    p("")
    p("| sandboxes | created | time to create all | per sandbox | sentry RSS each | sentry PSS each | sentry USS each | all processes RSS each | all processes PSS each | all processes USS each |")
    p("|---|---|---|---|---|---|---|---|---|---|")
    for r in created:
        n, got, secs = int(r[0]), int(r[1]), float(r[2])
        v = [int(x) for x in r[3].split()] if len(r) > 3 and r[3].strip() else []
        if len(v) < 8 or got == 0:
            p("| %d | %d | %.2f s | | | | | | | |" % (n, got, secs))
            continue
        k = float(got)
        mib = lambda x: "%.2f MiB" % (x / 1024.0 / k)
        p("| %d | %d | %.2f s | %.1f ms | %s | %s | %s | %s | %s | %s |" % (
            n, got, secs, secs * 1000 / k, mib(v[1]), mib(v[2]), mib(v[3]), mib(v[5]), mib(v[6]), mib(v[7])))
    p("")

execs = {r[0]: (int(r[1]), float(r[2]), float(r[3])) for r in tsv("exec.tsv") if len(r) >= 4}
if execs.get("exec"):
    p("## `cordon sandbox exec` of `/bin/true` into a live sandbox")
    p("")
    p("End to end from the caller (python's `subprocess.run`, no shell), one sandbox, the three "
      "interleaved: the exec, the client's own start (`cordon --version`, nothing sent) and `/bin/true` "
      "natively. The sandbox's state is under %s%s." % (
          meta.get("exec_root", "?"),
          " (runtime state, not synced, as under the default root)" if meta.get("exec_root", "").startswith("/run/")
          else " (a disk: its event log and meta.json are synced at each run's start and end)"))
    p("")
    p("| | runs | median | minimum |")
    p("|---|---|---|---|")
    for k, label in (("exec", "`cordon sandbox exec ID -- /bin/true`"), ("version", "`cordon --version`"),
                     ("true", "`/bin/true` natively")):
        if k in execs:
            p("| %s | %d | %.2f ms | %.2f ms |" % ((label,) + execs[k]))
    p("")

# --- the targets, checked against this run ---
targets = []


def target(what, ok, detail):
    targets.append((what, "n/a" if ok is None else ("met" if ok else "**not met**"), detail))


def geomean(xs):
    import math
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


c, fl = med("h-missing-trap", "cordon"), floor_of(FLOOR_MISSING)
if c and fl:
    target("trapped round trip ≤ 1.3× the bare floor (openat, missing)", c / fl <= 1.3,
           "%.0f ns vs %.0f ns: ×%.2f" % (c, fl, c / fl))
c, fl = med("h-open-trap", "cordon"), floor_of(FLOOR_OPEN)
if c and fl:
    same = med("floor:" + FLOOR_OPEN[1], "native")
    target("trapped round trip ≤ 1.3× the bare floor (emulated openat + fd injection)", c / fl <= 1.3,
           "%.0f ns vs %.0f ns: ×%.2f" % (c, fl, c / fl) +
           ("; against the floor's one-step ADDFD_FLAG_SEND, the reply cordon makes: %.0f ns, ×%.2f" %
            (same, c / same) if same and same != fl else ""))
real = [w for w in ("python", "gcc", "git") if med(w, "cordon") and med(w, "native")]
if real:
    g = geomean([med(w, "cordon") / med(w, "native") for w in real])
    target("real programs (%s): geometric mean ≤ 1.3× native" % ", ".join(real), g <= 1.3, "×%.2f" % g)
    for peer, factor, word in (("proot", 1.0, "faster than proot"), ("runsc", 3.0, "≥ 3× faster than runsc (ptrace)")):
        if not any(med(w, peer) for w in real):
            target("real programs: every one %s" % word, None, "%s not measured" % peer)
            continue
        ok = all(med(w, peer) is not None and med(w, peer) >= factor * med(w, "cordon") for w in real)
        target("real programs: every one %s" % word, ok,
               ", ".join("%s ×%.1f" % (w, med(w, peer) / med(w, "cordon")) for w in real if med(w, peer)))
cs = med("coldstart", "cordon")
if cs:
    b = med("coldstart", "bwrap")
    target("cold start ≤ 1.5× bubblewrap", None if not b else cs <= 1.5 * b,
           "%.1f ms vs %.1f ms: ×%.2f" % (cs, b, cs / b) if b else "bwrap not measured")
    target("cold start ≤ bubblewrap (issue #22)", None if not b else cs <= b,
           "%.1f ms vs %.1f ms: ×%.2f" % (cs, b, cs / b) if b else "bwrap not measured")
    r = med("coldstart", "runsc")
    target("cold start ≥ 10× faster than runsc", None if not r else r >= 10 * cs,
           "%.1f ms vs %.1f ms: ×%.1f" % (cs, r, r / cs) if r else "runsc not measured")
for w, what in (("compute", "pure compute ≤ 1.05× native"), ("fio-open", "file I/O on an open file ≤ 1.05× native")):
    c, n = med(w, "cordon"), med(w, "native")
    if c and n:
        target(what, c / n <= 1.05, "×%.3f" % (c / n))
for w in ("tcp-download", "tcp-upload"):
    c, n = med(w, "cordon"), med(w, "native")
    if c and n:
        target("TCP %s through the gate ≥ 0.95× direct" % w[4:], c / n >= 0.95, "%.0f vs %.0f MB/s: ×%.2f" % (c, n, c / n))
c, n = med("tcp-connect", "cordon"), med("tcp-connect", "native")
if c and n:
    target("connect latency added by the gate < 200 µs", c - n < 200, "%.0f − %.0f = %.0f µs per connection" % (c, n, c - n))
for r in created:
    v = [int(x) for x in r[3].split()] if len(r) > 3 and r[3].strip() else []
    if len(v) >= 8 and int(r[1]) > 0:
        k = float(r[1])
        target("sentry resident memory < 4 MiB per idle sandbox (%s sandboxes)" % r[1], v[1] / 1024 / k < 4,
               "RSS %.2f MiB (PSS %.2f, private %.2f) each" % (v[1] / 1024 / k, v[2] / 1024 / k, v[3] / 1024 / k))
if execs.get("exec"):
    target("`sandbox exec` of /bin/true ≤ 2 ms end to end (issue #22)", execs["exec"][1] <= 2.0,
           "median %.2f ms (minimum %.2f; the client's own start %.2f, /bin/true natively %.2f)" %
           (execs["exec"][1], execs["exec"][2], execs.get("version", (0, 0, 0))[1], execs.get("true", (0, 0, 0))[1]))
for r in created:
    if int(r[1]) > 0:
        target("`sandbox create` ≤ 10 ms (issue #22; %s in a row)" % r[1], float(r[2]) * 1000 / int(r[1]) <= 10,
               "%.1f ms each" % (float(r[2]) * 1000 / int(r[1])))
if targets:
    p("## The targets (issues #8 and #22), in this run")
    p("")
    p("| target | | measured |")
    p("|---|---|---|")
    for t in targets:
        p("| %s | %s | %s |" % t)
    p("")

idle = tsv("idle.tsv")
if idle:
    p("## Idle sandboxes: supervisor memory and start-up")
    p("")
    p("`SANDBOX sleep 60`; once the sleep runs and 1 s has passed, VmRSS and Pss summed over the "
      "sandbox's own processes (the supervisor, helpers, init; not the sleep).")
    p("")
    p("| sandbox | sandboxes at once | processes | RSS | PSS | RSS per sandbox | PSS per sandbox | time to start them all | note |")
    p("|---|---|---|---|---|---|---|---|---|")
    for r in idle:
        sb, n, nproc, rss, pss, secs, note = (r + [""] * 7)[:7]
        n = int(n) if n else 0
        if rss == "":
            p("| %s | %d | | | | | | | %s |" % (sb, n, note))
            continue
        rss, pss = int(rss), int(pss)
        p("| %s | %d | %s | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB | %s | %s |" % (
            sb, n, nproc, rss / 1024, pss / 1024, rss / 1024 / max(n, 1), pss / 1024 / max(n, 1),
            "%.2f s" % float(secs) if secs else "", note))
    p("")

notes = [r[1] for r in tsv("notes.tsv")]
fs = med("floor:emulated openat (existing) + close, SYNC_WAKE_UP", "native")
fa = med("floor:emulated openat (existing) + close, ADDFD then SEND, SYNC_WAKE_UP", "native")
if fs and fa and fs > 2 * fa:
    notes.append("With SYNC_WAKE_UP set, an emulated open answered by ADDFD with SECCOMP_ADDFD_FLAG_SEND took "
                 "%.0f ns, but ADDFD followed by a separate SEND took %.0f ns: on this kernel the ADDFD_FLAG_SEND "
                 "reply does not seem to get the synchronous (same-CPU) wakeup." % (fs, fa))
ns = med("floor:notify getppid, no SYNC_WAKE_UP", "native")
ss = med("floor:notify getppid, SYNC_WAKE_UP", "native")
if ns and ss and ns > 5 * ss:
    notes.append("Cross-CPU wakeups are expensive on this host (trapped getppid without SYNC_WAKE_UP: %.0f ns, "
                 "with it: %.0f ns); supervisor-based sandboxes (cordon, proot) swing with the scheduler's "
                 "placement from one run to the next." % (ns, ss))
if notes:
    p("## Notes")
    p("")
    for n in notes:
        p("- " + n)
    p("")
print("\n".join(out))
