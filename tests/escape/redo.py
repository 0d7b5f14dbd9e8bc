# Escape attempts on the privileged redo paths, run inside `cordon run` by
# tests/escape/run.sh (root inside, python3 from the view): the proc agent's
# redo of a refused directory change (fs/agent.c agent_dirop) or walk
# (fs/resolve.c fs_view_open_path) with the caller's capabilities, and the
# sentry's reopen of the caller's own fd (fs/open.c reopen_own_fd). Each
# attempt named on the command line prints "escape NAME: blocked (...)" or
# "GOT THROUGH (...)". Expects the runner's binds: /hid (its secret/ hidden
# by the policy, d555/ a 0555 directory), /ro (read-only: a, sub/), /rw
# (mine, d555/mine, and theirs, theirs600 and the FIFO fifo owned by a host
# user the sandbox does not map); and, for walk-ask, an ask rule on
# /tmp/ask/in that nobody can approve.
import ctypes, os, sys, threading, time, errno
libc = ctypes.CDLL(None, use_errno=True)
AT = -100
RENAME_EXCHANGE, RENAME_WHITEOUT = 2, 4

def out(name, ok, why):
    print("escape %s: %s (%s)" % (name, "blocked" if ok else "GOT THROUGH", why), flush=True)

def renameat2(a, b, flags):
    if libc.renameat2(AT, a.encode(), AT, b.encode(), flags) < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

def tries(calls):
    """each (label, fn): the labels of those that succeeded"""
    got = []
    for label, fn in calls:
        try:
            fn()
            got.append(label)
        except OSError:
            pass
    return got

def as_user(fn, uid=1000):
    """fn() in a child with uid/gid 1000 and no capability; its exit code"""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([]); os.setgid(uid); os.setuid(uid)
            os._exit(fn())
        except BaseException as e:
            print("as_user:", e, flush=True)
            os._exit(3)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

def d555(path):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o555)

# --- the agent's redo of a directory change (fs/agent.c agent_dirop)

def dirop_device():
    d555("/tmp/dv")
    got = tries([
        ("mknod c 1:3 in a 0555 dir", lambda: os.mknod("/tmp/dv/null", 0o20666, os.makedev(1, 3))),
        ("mknod b 7:0 in a 0555 dir", lambda: os.mknod("/tmp/dv/loop", 0o60666, os.makedev(7, 0))),
        ("mknod c 1:3 in /rw", lambda: os.mknod("/rw/null", 0o20666, os.makedev(1, 3))),
        ("mknod whiteout in /rw", lambda: os.mknod("/rw/wh", 0o20000, 0)),
        ("RENAME_WHITEOUT in /rw", lambda: renameat2("/rw/mine", "/rw/mine2", RENAME_WHITEOUT)),
        ("RENAME_WHITEOUT in /rw/d555", lambda: renameat2("/rw/d555/mine", "/rw/d555/mine2", RENAME_WHITEOUT)),
    ])
    devs = [p for p in ("/tmp/dv/null", "/tmp/dv/loop", "/rw/null", "/rw/wh", "/rw/mine", "/rw/d555/mine")
            if os.path.lexists(p) and not os.path.isfile(p)]
    out("dirop-device", not devs and not [g for g in got if "c 1:3" in g or "b 7:0" in g],
        "made: %s; device nodes: %s" % (got or "none", devs or "none") if devs or got
        else "devices refused in a 0555 directory and in a bind; no whiteout in a bind, by mknod or rename")

def dirop_hidden():
    open("/hid/f1", "w").close(); open("/hid/f2", "w").close()
    got = tries([
        ("mkdir", lambda: os.mkdir("/hid/secret/x")),
        ("mkfifo", lambda: os.mkfifo("/hid/secret/p")),
        ("symlink", lambda: os.symlink("/etc/passwd", "/hid/secret/s")),
        ("link", lambda: os.link("/hid/f1", "/hid/secret/l")),
        ("rename in", lambda: os.rename("/hid/f2", "/hid/secret/r")),
        ("rename out", lambda: os.rename("/hid/secret/file", "/hid/out")),
        ("exchange", lambda: renameat2("/hid/f1", "/hid/secret", RENAME_EXCHANGE)),
        ("exchange file", lambda: renameat2("/hid/f1", "/hid/secret/file", RENAME_EXCHANGE)),
        ("unlink", lambda: os.unlink("/hid/secret/file")),
        ("via ..", lambda: os.mkdir("/hid/d555/../secret/y")),
    ])
    for p in ("/hid/f1", "/hid/f2", "/hid/out"):
        try: os.unlink(p)
        except OSError: pass
    out("dirop-hidden", not got, "got: %s" % got if got else
        "mkdir, mkfifo, symlink, link, rename in and out, exchange and unlink in the hidden /hid/secret: all refused")

def dirop_swap():
    """/tmp/sw flips between a 0555 directory (the worker refused, the agent
    redoes) and a symlink to the hidden directory, while another thread
    makes names in /tmp/sw"""
    os.makedirs("/tmp/swd"); os.chmod("/tmp/swd", 0o555)
    os.symlink("/hid/secret", "/tmp/swl")
    os.symlink("/tmp/swd", "/tmp/sw")
    open("/tmp/src", "w").close()
    stop = time.time() + 0.6
    def flip():
        while time.time() < stop:
            try: renameat2("/tmp/sw", "/tmp/swl", RENAME_EXCHANGE)
            except OSError: pass
    t = threading.Thread(target=flip); t.start()
    i = made = 0
    while time.time() < stop:
        i += 1
        for fn in (lambda: os.mkdir("/tmp/sw/m%d" % i), lambda: os.mkfifo("/tmp/sw/f%d" % i),
                   lambda: os.symlink("x", "/tmp/sw/s%d" % i), lambda: os.link("/tmp/src", "/tmp/sw/l%d" % i)):
            try: fn(); made += 1
            except OSError: pass
    t.join()
    # the runner checks the hidden directory on the host
    out("dirop-swap", True, "%d rounds, %d names made while /tmp/sw flipped to the hidden directory (host checked after)" % (i, made))

def dirop_names():
    d555("/tmp/dn"); os.chmod("/tmp/dn", 0o755); open("/tmp/dn/x", "w").close(); os.chmod("/tmp/dn", 0o555)
    before = sorted(os.listdir("/"))
    got = tries([
        ("rename to ..", lambda: os.rename("/tmp/dn/x", "/tmp/dn/..")),
        ("rename .. away", lambda: os.rename("/tmp/dn/..", "/tmp/dn/y")),
        ("link to ..", lambda: os.link("/tmp/dn/x", "/tmp/dn/..")),
        ("rmdir ..", lambda: os.rmdir("/tmp/dn/..")),
        ("rmdir .", lambda: os.rmdir("/tmp/dn/.")),
        ("rmdir / via ..", lambda: os.rmdir("/tmp/dn/../../..")),
        ("unlink ..", lambda: os.unlink("/tmp/dn/..")),
        ("exchange with ..", lambda: renameat2("/tmp/dn/x", "/tmp/dn/..", RENAME_EXCHANGE)),
        ("exchange / with a dir", lambda: renameat2("/tmp/dn/../../..", "/tmp/dn", RENAME_EXCHANGE)),
    ])
    ok = not got and sorted(os.listdir("/")) == before and os.path.isdir("/tmp/dn")
    out("dirop-names", ok, "got: %s" % got if got else "'..' and '.' as a last name refused in a 0555 directory; the view's root unchanged")

def dirop_ro_bind():
    got = tries([
        ("mkdir", lambda: os.mkdir("/ro/x")),
        ("mkfifo", lambda: os.mkfifo("/ro/p")),
        ("symlink", lambda: os.symlink("a", "/ro/s")),
        ("link", lambda: os.link("/ro/a", "/ro/l")),
        ("rename", lambda: os.rename("/ro/a", "/ro/b")),
        ("exchange", lambda: renameat2("/ro/a", "/ro/sub", RENAME_EXCHANGE)),
        ("whiteout", lambda: renameat2("/ro/a", "/ro/w", RENAME_WHITEOUT)),
        ("unlink", lambda: os.unlink("/ro/a")),
        ("rmdir", lambda: os.rmdir("/ro/sub")),
        ("rename into", lambda: os.rename("/tmp/src", "/ro/in")),
    ])
    out("dirop-ro-bind", not got, "got: %s" % got if got else
        "mkdir, mkfifo, symlink, link, rename, exchange, whiteout, unlink and rmdir in a read-only 0555 bind: all refused")

def dirop_setid():
    got = tries([
        ("setuid file by mknod", lambda: os.mknod("/rw/d555/su", 0o104755)),
        ("setgid file by mknod", lambda: os.mknod("/rw/d555/sg", 0o102755)),
        ("setuid fifo", lambda: os.mknod("/rw/d555/sp", 0o016777)),
        ("setuid file at the top", lambda: os.mknod("/rw/su", 0o104755)),
        # natively refused (protected_hardlinks: root's capabilities do not
        # count for a file whose owner the namespace does not map)
        ("link of another host user's 0600 file", lambda: os.link("/rw/theirs600", "/rw/d555/l")),
        ("link of it at the top", lambda: os.link("/rw/theirs600", "/rw/l")),
    ])
    try: os.mkdir("/rw/d555/sd", 0o7777)
    except OSError: pass
    out("dirop-setid", not got, "got: %s" % got if got else
        "setuid and setgid nodes, and links of another host user's 0600 file, in a bind's 0555 directory "
        "(the agent's redo) refused; the host is checked after")

def dirop_nonroot():
    os.makedirs("/tmp/s"); open("/tmp/s/secret", "w").write("root only\n"); os.chmod("/tmp/s/secret", 0o600)
    open("/tmp/rootfile", "w").close()
    os.makedirs("/tmp/w"); os.chmod("/tmp/w", 0o777)
    d555("/tmp/r555")
    def child():
        got = tries([
            ("link root's 0600 file", lambda: os.link("/tmp/s/secret", "/tmp/w/l")),
            ("unlink root's file in sticky /tmp", lambda: os.unlink("/tmp/rootfile")),
            ("rename root's file in sticky /tmp", lambda: os.rename("/tmp/rootfile", "/tmp/w/r")),
            ("mkdir in root's 0555 dir", lambda: os.mkdir("/tmp/r555/x")),
            ("mkfifo in root's 0555 dir", lambda: os.mkfifo("/tmp/r555/p")),
        ])
        if got: print("uid 1000 got:", got, flush=True)
        return 1 if got else 0
    rc = as_user(child)
    out("dirop-nonroot", rc == 0, "uid 1000 without capabilities: link of root's 0600 file, sticky unlink and rename, "
        "mkdir and mkfifo in root's 0555 directory all refused" if rc == 0 else "exit %d" % rc)

# --- a walk redone by the agent (fs/resolve.c fs_view_open_path)

def walk_setup():
    os.makedirs("/tmp/u")
    os.symlink("/hid/secret/file", "/tmp/u/l")
    os.symlink("/hid/secret", "/tmp/u/d")
    os.symlink("../../../../../..", "/tmp/u/up")
    os.symlink("/proc/self/root/hid/secret/file", "/tmp/u/m")
    os.chown("/tmp/u", 1000, 1000); os.chmod("/tmp/u", 0o700)

def walk_hidden():
    walk_setup()
    got = []
    for p in ("/tmp/u/l", "/tmp/u/d/file", "/tmp/u/m", "/tmp/u/d/../secret/file", "/tmp/u/up/hid/secret/file"):
        for label, fn in (("open", lambda: os.close(os.open(p, os.O_RDONLY))), ("stat", lambda: os.stat(p)),
                          ("lstat", lambda: os.lstat(p) if p.count("/d/") or p.count("/up/") else None),
                          ("access", lambda: os.access(p, os.F_OK) and os.stat("/")),
                          ("listxattr", lambda: os.listxattr(p)), ("truncate", lambda: os.truncate(p, 0)),
                          ("chdir", lambda: os.chdir(os.path.dirname(p)))):
            try:
                r = fn()
                if label == "access" and r is False:
                    continue
                if label not in ("chdir", "lstat") or p not in ("/tmp/u/l", "/tmp/u/m"):
                    got.append(label + " " + p)
            except OSError:
                pass
    os.chdir("/")
    for label, fn in (("listdir", lambda: os.listdir("/tmp/u/d")), ("chdir", lambda: os.chdir("/tmp/u/d"))):
        try: fn(); got.append(label + " /tmp/u/d")
        except OSError: pass
    os.chdir("/")
    same = os.stat("/tmp/u/up/..").st_ino == os.stat("/").st_ino
    out("walk-hidden", not got and same, "got: %s" % got if got else
        "through root's walk into uid 1000's 0700 directory: the hidden file and directory stay absent; '..' stops at the view's root")

def walk_nonroot():
    os.makedirs("/tmp/r7"); open("/tmp/r7/f", "w").write("x\n"); os.chmod("/tmp/r7", 0o700)
    def child():
        got = []
        p = "/tmp/r7/f"
        for label, fn in (("open", lambda: os.close(os.open(p, os.O_RDONLY))), ("stat", lambda: os.stat(p)),
                          ("getxattr", lambda: os.getxattr(p, "user.x")), ("listxattr", lambda: os.listxattr(p)),
                          ("readlink", lambda: os.readlink(p)), ("chdir", lambda: os.chdir("/tmp/r7")),
                          ("listdir", lambda: os.listdir("/tmp/r7"))):
            try:
                fn(); got.append(label)
            except OSError as e:
                if e.errno not in (errno.EACCES,):
                    got.append("%s:%s" % (label, errno.errorcode.get(e.errno)))
        for m in (os.F_OK, os.R_OK, os.W_OK):
            if os.access(p, m):
                got.append("access %d" % m)
        if got: print("uid 1000 got:", got, flush=True)
        return 1 if got else 0
    rc = as_user(child)
    out("walk-nonroot", rc == 0, "uid 1000 without capabilities: open, stat, access, xattrs, chdir and listing "
        "in root's 0700 directory all EACCES" if rc == 0 else "exit %d" % rc)

def walk_ask():
    """the policy asks before writes beneath /tmp/ask/in (nobody can approve)"""
    os.makedirs("/tmp/x/in"); open("/tmp/x/in/f", "w").write("orig\n"); os.chmod("/tmp/x/in", 0o555)
    os.rename("/tmp/x", "/tmp/ask")
    os.makedirs("/tmp/ua"); os.symlink("/tmp/ask/in/f", "/tmp/ua/l"); os.symlink("/tmp/ask/in", "/tmp/ua/d")
    os.chown("/tmp/ua", 1000, 1000); os.chmod("/tmp/ua", 0o700)
    os.makedirs("/tmp/ad"); open("/tmp/ad/new", "w").write("changed\n"); os.chmod("/tmp/ad", 0o555)
    got = tries([
        ("write through a 0700 dir", lambda: open("/tmp/ua/l", "w").write("changed\n")),
        ("truncate through a 0700 dir", lambda: os.truncate("/tmp/ua/d/f", 0)),
        ("rename from a 0555 dir over it", lambda: os.rename("/tmp/ad/new", "/tmp/ask/in/f")),
        ("mkdir in the 0555 ask dir", lambda: os.mkdir("/tmp/ask/in/x")),
        ("link into the 0555 ask dir", lambda: os.link("/tmp/ad/new", "/tmp/ua/d/l")),
        ("exchange from a 0555 dir", lambda: renameat2("/tmp/ad/new", "/tmp/ask/in/f", RENAME_EXCHANGE)),
        ("unlink in the 0555 ask dir", lambda: os.unlink("/tmp/ua/d/f")),
    ])
    ok = not got and open("/tmp/ask/in/f").read() == "orig\n"
    out("walk-ask", ok, "got: %s" % got if got else
        "writes under the ask rule through uid 1000's 0700 directory and into a 0555 one were asked about (and denied)")

# --- the sentry's reopen of the caller's own fd (fs/open.c reopen_own_fd)

def reopen_write():
    fd = os.open("/rw/theirs", os.O_RDONLY)
    tid = threading.get_native_id()
    got = []
    for p in ("/proc/self/fd/%d" % fd, "/dev/fd/%d" % fd, "/proc/%d/fd/%d" % (os.getpid(), fd),
              "/proc/%d/task/%d/fd/%d" % (os.getpid(), tid, fd), "/proc/thread-self/fd/%d" % fd):
        for label, fl in (("O_WRONLY", os.O_WRONLY), ("O_RDWR", os.O_RDWR), ("O_TRUNC", os.O_RDONLY | os.O_TRUNC),
                          ("O_APPEND", os.O_WRONLY | os.O_APPEND), ("O_CREAT", os.O_WRONLY | os.O_CREAT)):
            try:
                w = os.open(p, fl); got.append("%s %s" % (p, label)); os.close(w)
            except OSError:
                pass
    # the same fd held by a uid 1000 child
    rc = as_user(lambda: 1 if tries([("w", lambda: os.open("/proc/self/fd/%d" % fd, os.O_RDWR))]) else 0)
    out("reopen-write", not got and rc == 0, "got: %s (uid 1000: %d)" % (got, rc) if got or rc else
        "a read-only fd of a file another host user owns: no reopen for writing or truncating, as root or uid 1000")

def reopen_kinds():
    got = []
    fd = os.open("/rw/theirs600", os.O_PATH)
    try:
        r = os.open("/proc/self/fd/%d" % fd, os.O_RDONLY); got.append("O_PATH reopened for reading"); os.close(r)
    except OSError: pass
    fd = os.open("/rw/fifo", os.O_RDONLY | os.O_NONBLOCK)
    try:
        w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY | os.O_NONBLOCK); got.append("their FIFO's read end as a writer"); os.close(w)
    except OSError: pass
    fd = os.open("/rw", os.O_RDONLY | os.O_DIRECTORY)
    for fl in (os.O_WRONLY, os.O_RDWR):
        try:
            w = os.open("/proc/self/fd/%d" % fd, fl); got.append("a directory for writing"); os.close(w)
        except OSError: pass
    for fl, label in ((os.O_RDONLY, "read"), (os.O_RDWR, "write")):
        try:
            w = os.open("/proc/self/fd/%d/theirs600" % fd, fl); got.append("beneath a directory fd: " + label); os.close(w)
        except OSError: pass
    out("reopen-kinds", not got, "got: %s" % got if got else
        "an O_PATH fd, a FIFO's read end (as a writer), a directory (for writing, or beneath it): no reopen grants more")

def reopen_other():
    """a root process holds a 0600 file of root's read-write; a uid 1000
    process names that process's fd, or its own pid with the holder's tid"""
    open("/tmp/rootonly", "w").write("root\n"); os.chmod("/tmp/rootonly", 0o600)
    r, w = os.pipe()
    holder = os.fork()
    if holder == 0:
        fd = os.open("/tmp/rootonly", os.O_RDWR)
        os.write(w, b"%d" % fd)
        time.sleep(5); os._exit(0)
    fd = int(os.read(r, 16))
    def child():
        got = tries([(p, lambda p=p: os.open(p, os.O_RDWR)) for p in (
            "/proc/%d/fd/%d" % (holder, fd), "/proc/%d/task/%d/fd/%d" % (os.getpid(), holder, fd),
            "/proc/%d/task/%d/fd/%d" % (holder, holder, fd))])
        if got: print("uid 1000 got:", got, flush=True)
        return 1 if got else 0
    rc = as_user(child)
    os.kill(holder, 9); os.waitpid(holder, 0)
    out("reopen-other", rc == 0, "uid 1000: another process's fd (by its pid, or by its tid under the caller's pid): refused"
        if rc == 0 else "exit %d" % rc)

def reopen_race():
    """fd 9 flips between the other user's file (read-only) and a file of
    our own (read-write) while the main thread reopens /proc/self/fd/9
    read-write and writes through it"""
    ro = os.open("/rw/theirs", os.O_RDONLY)
    own = os.open("/tmp/own", os.O_RDWR | os.O_CREAT, 0o644)
    stop = time.time() + 0.5
    def flip():
        while time.time() < stop:
            os.dup2(ro, 9); os.dup2(own, 9)
    t = threading.Thread(target=flip); t.start()
    n = 0
    while time.time() < stop:
        try:
            w = os.open("/proc/self/fd/9", os.O_RDWR)
            os.write(w, b"raced"); os.close(w); n += 1
        except OSError:
            pass
    t.join()
    out("reopen-race", True, "%d reopens of fd 9 while it flipped (the host file checked after)" % n)

ATTEMPTS = {k.replace("_", "-"): v for k, v in globals().items() if k.startswith(("dirop_", "walk_", "reopen_")) and k != "walk_setup"}
for name in sys.argv[1:]:
    try:
        ATTEMPTS[name]()
    except Exception as e:
        print("escape %s: ERROR (%s: %s)" % (name, type(e).__name__, e), flush=True)
