/* Builds cordon's seccomp filter from the syscall table, evaluates it without
 * loading it (for tests), and installs it with a listener. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/allowlist.h"
#include "common/util.h"
#include "notify/notify.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}
#define _cleanup_seccomp_ _cleanup_(seccomp_releasep)

static uint32_t action_of(const struct syscall_entry *e)
{
        switch (e->action) {
        case SC_ERRNO:
                return SCMP_ACT_ERRNO((uint16_t)e->err);
        case SC_EMULATE:
                return SCMP_ACT_NOTIFY;
        case SC_KILL:
                return SCMP_ACT_KILL_PROCESS;
        case SC_ALLOW:
                return SCMP_ACT_ALLOW;
        }
        return SCMP_ACT_KILL_PROCESS;
}

static struct scmp_arg_cmp cmp_of(const struct syscall_arg_cond *c, uint64_t bit)
{
        switch (c->op) {
        case ARG_EQ:
                if (c->mask)
                        return SCMP_CMP(c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->datum);
                return SCMP_CMP(c->arg, SCMP_CMP_EQ, c->datum);
        case ARG_MASKED_EQ:
                return SCMP_CMP(c->arg, SCMP_CMP_MASKED_EQ, c->mask, c->datum);
        case ARG_NE:
                return SCMP_CMP(c->arg, SCMP_CMP_NE, c->datum);
        case ARG_GE:
                return SCMP_CMP(c->arg, SCMP_CMP_GE, c->datum);
        case ARG_MASKED_ANY:
                /* "any bit of mask set, none of datum" is one rule per bit,
                 * each (arg & (bit | datum)) == bit: libseccomp takes one
                 * comparison per argument in a rule */
                return SCMP_CMP(c->arg, SCMP_CMP_MASKED_EQ, bit | c->datum, bit);
        }
        return SCMP_CMP(c->arg, SCMP_CMP_EQ, 0);
}

/* Adds one table row; ARG_MASKED_ANY conditions fan out into a rule per bit. */
static int add_row(scmp_filter_ctx ctx, const struct syscall_entry *e, int nr)
{
        uint32_t act = action_of(e);
        if (e->n_cond == 0)
                return seccomp_rule_add_exact(ctx, act, nr, 0);

        int any = -1;
        for (unsigned i = 0; i < e->n_cond; i++)
                if (e->cond[i].op == ARG_MASKED_ANY) {
                        if (any >= 0)
                                return -EINVAL; /* two fan-outs in one row: split the row */
                        if (e->cond[i].mask == 0 || (e->cond[i].mask & e->cond[i].datum))
                                return -EINVAL; /* no bit to test, or a bit both set and clear:
                                                   the row (or a rule of it) would vanish */
                        any = (int)i;
                }

        uint64_t bits = any >= 0 ? e->cond[any].mask : 1;
        for (unsigned b = 0; b < 64; b++) {
                uint64_t bit = UINT64_C(1) << b;
                if (!(bits & bit))
                        continue;
                struct scmp_arg_cmp cmps[ELEMENTSOF(e->cond)];
                for (unsigned i = 0; i < e->n_cond; i++)
                        cmps[i] = cmp_of(&e->cond[i], bit);
                int r = seccomp_rule_add_exact_array(ctx, act, nr, e->n_cond, cmps);
                if (r < 0)
                        return r;
                if (any < 0)
                        break;
        }
        return 0;
}

int notify_filter_build(const struct syscall_entry *table, size_t n, struct sock_fprog *ret, const char **ret_bad)
{
        _cleanup_seccomp_ scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return -ENOMEM;

        /* Any other architecture (i386 via int 0x80, x32) kills the process:
         * syscall numbers mean different things there and our rows would not
         * apply. The native arch is the only one in the filter, so libseccomp
         * emits the audit-arch check plus an x32 check (nr >= 0x40000000). */
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r < 0)
                return r;
        /* we set no_new_privs ourselves, before the filter, with everything else */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
        if (r < 0)
                return r;
        /* the rows as a binary tree, not a chain (its load took ~260 us) */
        r = seccomp_ctx_tree(ctx);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                const struct syscall_entry *e = &table[i];
                if (e->action == SC_ALLOW)
                        continue;
                int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, e->name);
                if (nr == __NR_SCMP_ERROR && e->nr > 0)
                        nr = e->nr;
                if (nr == __NR_SCMP_ERROR) {
                        if (ret_bad)
                                *ret_bad = e->name;
                        return -ENOSYS;
                }
                r = add_row(ctx, e, nr);
                if (r < 0) {
                        if (ret_bad)
                                *ret_bad = e->name;
                        return r;
                }
        }

        return notify_filter_export(ctx, ret);
}

int notify_filter_export(void *scmp_ctx, struct sock_fprog *ret)
{
        /* Through a memfd: libseccomp 2.5 has no in-memory export. */
        _cleanup_close_ int fd = memfd_create("cordon-filter", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        int r = seccomp_export_bpf(scmp_ctx, fd);
        if (r < 0)
                return r;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
            st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;
        struct sock_filter *insns = xmalloc((size_t)st.st_size);
        if (pread(fd, insns, (size_t)st.st_size, 0) != st.st_size) {
                free(insns);
                return -EIO;
        }
        ret->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
        ret->filter = insns;
        return 0;
}

static uint32_t data_word(const struct seccomp_data *d, uint32_t off, bool *ok)
{
        uint32_t w;
        if (off % 4 != 0 || (uint64_t)off + 4 > sizeof(*d)) {
                *ok = false;
                return 0;
        }
        memcpy(&w, (const char *)d + off, 4);
        return w;
}

/* A classic-BPF interpreter for the instructions seccomp accepts. */
int64_t notify_filter_eval(const struct sock_fprog *prog, const struct seccomp_data *data)
{
        return notify_filter_eval_steps(prog, data, NULL);
}

int64_t notify_filter_eval_steps(const struct sock_fprog *prog, const struct seccomp_data *data, unsigned *ret_steps)
{
        uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = {0};
        bool ok = true;

        if (!prog->filter || prog->len == 0 || prog->len > BPF_MAXINSNS)
                return -EINVAL;
        if (ret_steps)
                *ret_steps = 0;
        for (unsigned pc = 0; pc < prog->len; pc++) {
                const struct sock_filter *f = &prog->filter[pc];
                if (ret_steps)
                        (*ret_steps)++;
                uint32_t k = f->k;
                unsigned left = prog->len - pc - 1; /* instructions after this one */
                /* jumps go forward only and must land inside the program, as
                 * the kernel's checker demands; this also rules out loops */
                if (f->code == (BPF_JMP | BPF_JA) && k >= left)
                        return -EINVAL;
                if (BPF_CLASS(f->code) == BPF_JMP && f->code != (BPF_JMP | BPF_JA) && (f->jt >= left || f->jf >= left))
                        return -EINVAL;
                switch (f->code) {
                case BPF_LD | BPF_W | BPF_ABS:
                        A = data_word(data, k, &ok);
                        break;
                case BPF_LD | BPF_W | BPF_LEN:
                        A = sizeof(*data);
                        break;
                case BPF_LDX | BPF_W | BPF_LEN:
                        X = sizeof(*data);
                        break;
                case BPF_LD | BPF_IMM:
                        A = k;
                        break;
                case BPF_LDX | BPF_IMM:
                        X = k;
                        break;
                case BPF_LD | BPF_MEM:
                        if (k >= BPF_MEMWORDS)
                                return -EINVAL;
                        A = M[k];
                        break;
                case BPF_LDX | BPF_MEM:
                        if (k >= BPF_MEMWORDS)
                                return -EINVAL;
                        X = M[k];
                        break;
                case BPF_ST:
                        if (k >= BPF_MEMWORDS)
                                return -EINVAL;
                        M[k] = A;
                        break;
                case BPF_STX:
                        if (k >= BPF_MEMWORDS)
                                return -EINVAL;
                        M[k] = X;
                        break;
                case BPF_ALU | BPF_ADD | BPF_K:
                        A += k;
                        break;
                case BPF_ALU | BPF_SUB | BPF_K:
                        A -= k;
                        break;
                case BPF_ALU | BPF_MUL | BPF_K:
                        A *= k;
                        break;
                case BPF_ALU | BPF_AND | BPF_K:
                        A &= k;
                        break;
                case BPF_ALU | BPF_OR | BPF_K:
                        A |= k;
                        break;
                case BPF_ALU | BPF_XOR | BPF_K:
                        A ^= k;
                        break;
                case BPF_ALU | BPF_LSH | BPF_K:
                        A = k < 32 ? A << k : 0;
                        break;
                case BPF_ALU | BPF_RSH | BPF_K:
                        A = k < 32 ? A >> k : 0;
                        break;
                case BPF_ALU | BPF_AND | BPF_X:
                        A &= X;
                        break;
                case BPF_ALU | BPF_OR | BPF_X:
                        A |= X;
                        break;
                case BPF_ALU | BPF_ADD | BPF_X:
                        A += X;
                        break;
                case BPF_ALU | BPF_SUB | BPF_X:
                        A -= X;
                        break;
                case BPF_ALU | BPF_NEG:
                        A = -A;
                        break;
                case BPF_MISC | BPF_TAX:
                        X = A;
                        break;
                case BPF_MISC | BPF_TXA:
                        A = X;
                        break;
                case BPF_JMP | BPF_JA:
                        pc += k;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        pc += (A == k) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGT | BPF_K:
                        pc += (A > k) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGE | BPF_K:
                        pc += (A >= k) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JSET | BPF_K:
                        pc += (A & k) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_X:
                        pc += (A == X) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGT | BPF_X:
                        pc += (A > X) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JGE | BPF_X:
                        pc += (A >= X) ? f->jt : f->jf;
                        break;
                case BPF_JMP | BPF_JSET | BPF_X:
                        pc += (A & X) ? f->jt : f->jf;
                        break;
                case BPF_RET | BPF_K:
                        return k;
                case BPF_RET | BPF_A:
                        return A;
                default:
                        return -EINVAL;
                }
                if (!ok)
                        return -EINVAL;
        }
        return -EINVAL; /* fell off the end: the kernel's checker rejects such programs */
}

int notify_filter_install(const struct sock_fprog *prog, bool *ret_wait_killable)
{
        unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
        /* a test forcing the feature absent gets the older kernel's filter
         * (and the engine, asking the same, its one-step injection) */
        int fd = -1;
        errno = EINVAL;
        if (!notify_feature_absent("wait_killable_recv"))
                fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
        bool killable = true;
        if (fd < 0 && errno == EINVAL) {
                /* Kernel before 5.19: no killable wait. A non-fatal signal can
                 * then interrupt a call the sentry is working on; the engine
                 * handles the resulting ENOENT on reply and undoes what it can. */
                killable = false;
                fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
        }
        if (fd < 0)
                return negative_errno();
        if (ret_wait_killable)
                *ret_wait_killable = killable;
        return fd;
}
