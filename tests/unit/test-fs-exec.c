/* Unit tests for fs/exec.c: how a file is classified by its first bytes
 * (x86_64 ELF runs; i386, x32, aarch64, big-endian and malformed headers are
 * refused; #! is a script; anything else is left to ENOEXEC), and the table
 * of approvals shared with the exec tracer (per thread, taken once, bounded,
 * shared across fork). */
#include "config.h"

#include <check.h>
#include <elf.h>
#include <sys/wait.h>

#include "common/util.h"
#include "fs/fs.h"

/* A 64-byte ELF64 header (or a 52-byte ELF32 one) with the given fields. */
static size_t make_header(unsigned char *buf, size_t size, int class, int data, int type, int machine)
{
        memset(buf, 0, size);
        memcpy(buf, ELFMAG, SELFMAG);
        buf[EI_CLASS] = (unsigned char)class;
        buf[EI_DATA] = (unsigned char)data;
        buf[EI_VERSION] = EV_CURRENT;
        bool be = data == ELFDATA2MSB;
        uint16_t t = (uint16_t)type, m = (uint16_t)machine;
        buf[16] = be ? (unsigned char)(t >> 8) : (unsigned char)t;
        buf[17] = be ? (unsigned char)t : (unsigned char)(t >> 8);
        buf[18] = be ? (unsigned char)(m >> 8) : (unsigned char)m;
        buf[19] = be ? (unsigned char)m : (unsigned char)(m >> 8);
        buf[be ? 23 : 20] = EV_CURRENT;
        if (class == ELFCLASS64) {
                buf[be ? 53 : 52] = 64; /* e_ehsize */
                return 64;
        }
        buf[be ? 41 : 40] = 52;
        return 52;
}

struct elf_case {
        const char *what;
        int class, data, type, machine;
        enum fs_exec_kind want;
};

static const struct elf_case elf_cases[] = {
        {"x86_64 executable", ELFCLASS64, ELFDATA2LSB, ET_EXEC, EM_X86_64, FS_EXEC_NATIVE_ELF},
        {"x86_64 PIE", ELFCLASS64, ELFDATA2LSB, ET_DYN, EM_X86_64, FS_EXEC_NATIVE_ELF},
        {"x86_64 relocatable object", ELFCLASS64, ELFDATA2LSB, ET_REL, EM_X86_64, FS_EXEC_FOREIGN_ELF},
        {"x86_64 core", ELFCLASS64, ELFDATA2LSB, ET_CORE, EM_X86_64, FS_EXEC_FOREIGN_ELF},
        {"i386", ELFCLASS32, ELFDATA2LSB, ET_EXEC, EM_386, FS_EXEC_FOREIGN_ELF},
        {"x32", ELFCLASS32, ELFDATA2LSB, ET_EXEC, EM_X86_64, FS_EXEC_FOREIGN_ELF},
        {"aarch64", ELFCLASS64, ELFDATA2LSB, ET_EXEC, EM_AARCH64, FS_EXEC_FOREIGN_ELF},
        {"arm", ELFCLASS32, ELFDATA2LSB, ET_EXEC, EM_ARM, FS_EXEC_FOREIGN_ELF},
        {"riscv64", ELFCLASS64, ELFDATA2LSB, ET_DYN, EM_RISCV, FS_EXEC_FOREIGN_ELF},
        {"s390x (big-endian)", ELFCLASS64, ELFDATA2MSB, ET_EXEC, EM_S390, FS_EXEC_FOREIGN_ELF},
        {"x86_64 machine, big-endian", ELFCLASS64, ELFDATA2MSB, ET_EXEC, EM_X86_64, FS_EXEC_FOREIGN_ELF},
};

START_TEST(test_elf_table)
{
        const struct elf_case *c = &elf_cases[_i];
        unsigned char buf[256];
        size_t n = make_header(buf, sizeof(buf), c->class, c->data, c->type, c->machine);
        ck_assert_msg(fs_exec_classify(buf, n) == c->want, "%s: got %d, want %d", c->what,
                      (int)fs_exec_classify(buf, n), (int)c->want);
        /* the same with the rest of the kernel's 256-byte look */
        ck_assert_msg(fs_exec_classify(buf, sizeof(buf)) == c->want, "%s (256 bytes)", c->what);
}
END_TEST

START_TEST(test_not_elf)
{
        ck_assert_int_eq(fs_exec_classify("#!/bin/sh\n", 10), FS_EXEC_SCRIPT);
        ck_assert_int_eq(fs_exec_classify("#!", 2), FS_EXEC_SCRIPT);
        ck_assert_int_eq(fs_exec_classify("#", 1), FS_EXEC_OTHER);
        ck_assert_int_eq(fs_exec_classify("", 0), FS_EXEC_OTHER);
        ck_assert_int_eq(fs_exec_classify("echo hi\n", 8), FS_EXEC_OTHER);
        ck_assert_int_eq(fs_exec_classify("MZ\x90\x00", 4), FS_EXEC_OTHER);
        ck_assert_int_eq(fs_exec_classify("\x7f"
                                          "EL",
                                          3),
                         FS_EXEC_OTHER);
}
END_TEST

START_TEST(test_bad_elf)
{
        unsigned char buf[256];
        size_t n = make_header(buf, sizeof(buf), ELFCLASS64, ELFDATA2LSB, ET_EXEC, EM_X86_64);
        /* truncated headers, an unknown class: never native */
        for (size_t len = SELFMAG; len < n; len++)
                ck_assert_msg(fs_exec_classify(buf, len) != FS_EXEC_NATIVE_ELF, "truncated to %zu bytes", len);
        buf[EI_CLASS] = 7;
        ck_assert_int_ne(fs_exec_classify(buf, n), FS_EXEC_NATIVE_ELF);
        buf[EI_CLASS] = ELFCLASSNONE;
        ck_assert_int_ne(fs_exec_classify(buf, n), FS_EXEC_NATIVE_ELF);
}
END_TEST

START_TEST(test_table_shared)
{
        struct fs_exec_table *t = NULL;
        ck_assert_int_eq(fs_exec_table_new(&t), 0);
        struct fs_exec_approval a;
        ck_assert_int_eq(fs_exec_take(t, 1234, &a), -ENOENT);
        ck_assert_int_eq(fs_exec_take(t, 0, &a), -ENOENT);
        /* the tracer is a forked process: what it takes must be gone here */
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0)
                _exit(fs_exec_take(t, 1234, &a) == -ENOENT ? 0 : 1);
        int status;
        ck_assert_int_eq(waitpid(p, &status, 0), p);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        struct fs_exec_approval in = {.file = {1, 2}, .run = {3, 4}, .depth = 1};
        fs_exec_record(t, 1234, &in);
        in.run.ino = 5; /* a second exec by the same thread replaces the first */
        fs_exec_record(t, 1234, &in);
        p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0)
                _exit(fs_exec_take(t, 1234, &a) == 0 && a.run.dev == 3 && a.run.ino == 5 && a.depth == 1 ? 0 : 1);
        ck_assert_int_eq(waitpid(p, &status, 0), p);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked taker saw the approval");
        ck_assert_int_eq(fs_exec_take(t, 1234, &a), -ENOENT); /* taken once, by the other process */
        fs_exec_table_free(t);
}
END_TEST

START_TEST(test_table_bounded)
{
        struct fs_exec_table *t = NULL;
        ck_assert_int_eq(fs_exec_table_new(&t), 0);
        struct fs_exec_approval a = {0};
        for (pid_t tid = 1; tid <= FS_EXEC_SLOTS + 1; tid++) {
                a.run.ino = (uint64_t)tid;
                fs_exec_record(t, tid, &a);
        }
        /* the oldest was reused for the last; every other is there */
        ck_assert_int_eq(fs_exec_take(t, 1, &a), -ENOENT);
        ck_assert_int_eq(fs_exec_take(t, FS_EXEC_SLOTS + 1, &a), 0);
        ck_assert_int_eq(a.run.ino, FS_EXEC_SLOTS + 1);
        ck_assert_int_eq(fs_exec_take(t, 2, &a), 0);
        ck_assert_int_eq(a.run.ino, 2);
        fs_exec_table_free(t);
}
END_TEST

static Suite *exec_suite(void)
{
        Suite *s = suite_create("fs-exec");
        TCase *tc = tcase_create("classify");
        tcase_add_loop_test(tc, test_elf_table, 0, (int)ELEMENTSOF(elf_cases));
        tcase_add_test(tc, test_not_elf);
        tcase_add_test(tc, test_bad_elf);
        suite_add_tcase(s, tc);
        tc = tcase_create("table");
        tcase_add_test(tc, test_table_shared);
        tcase_add_test(tc, test_table_bounded);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(exec_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
