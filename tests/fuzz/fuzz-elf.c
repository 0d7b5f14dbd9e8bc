/* Fuzz target for the classifier of executables (fs/exec-classify.c): the
 * first bytes of a file the sandbox asks to execute, parsed by libelf, and
 * the #! line the kernel would follow.
 *
 * The whole input is a file's start. Its classification must be a known
 * kind, the same twice (no state kept), the same for only the header the
 * kernel reads, SCRIPT exactly when it starts with "#!" and OTHER exactly
 * when it has neither that nor the ELF magic. NATIVE is checked against the
 * header's bytes decoded here, independently of libelf: the full 64-byte
 * header present, ELFCLASS64, ELFDATA2LSB, EM_X86_64, ET_EXEC or ET_DYN;
 * and no prefix too short to hold that header is ever NATIVE. A script's
 * interpreter must match a plain re-reading of the #! line.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <elf.h>
#include <limits.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

static unsigned le16_at(const uint8_t *p)
{
        return (unsigned)p[0] | ((unsigned)p[1] << 8);
}

/* What must hold of a buffer classified NATIVE, read byte by byte. */
static void check_native(const uint8_t *data, size_t size)
{
        CHECK(size >= sizeof(Elf64_Ehdr));
        CHECK(memcmp(data, ELFMAG, SELFMAG) == 0);
        CHECK(data[EI_CLASS] == ELFCLASS64);
        CHECK(data[EI_DATA] == ELFDATA2LSB);
        CHECK(le16_at(data + offsetof(Elf64_Ehdr, e_machine)) == EM_X86_64);
        unsigned type = le16_at(data + offsetof(Elf64_Ehdr, e_type));
        CHECK(type == ET_EXEC || type == ET_DYN);
}

/* The interpreter as a plain reading of the first line: blanks after "#!",
 * then up to a blank, a NUL or the end of the line. */
static void check_script(const uint8_t *data, size_t size)
{
        size_t len = size < EXEC_HEADER ? size : EXEC_HEADER;
        char out[PATH_MAX];
        int r = fs_exec_script_interpreter(data, len, out, sizeof(out));
        const uint8_t *nl = memchr(data, '\n', len);
        size_t eol = nl ? (size_t)(nl - data) : len;
        size_t i = 2;
        while (i < eol && (data[i] == ' ' || data[i] == '\t'))
                i++;
        size_t end = i;
        while (end < eol && data[end] != ' ' && data[end] != '\t' && data[end] != '\0')
                end++;
        if (i == eol) {
                CHECK(r == -ENOEXEC);
                return;
        }
        if (end == len && len == EXEC_HEADER) {
                CHECK(r == -ENOEXEC);
                return;
        }
        /* a NUL right after the blanks: an empty name, which the kernel
         * would then fail to open; the parser must not claim more */
        CHECK(r == 0);
        CHECK(strlen(out) == end - i);
        CHECK(memcmp(out, data + i, end - i) == 0);
        /* a short buffer gives the one error and writes nothing past it */
        char tiny[4];
        int rt = fs_exec_script_interpreter(data, len, tiny, sizeof(tiny));
        CHECK(end - i >= sizeof(tiny) ? rt == -ENAMETOOLONG : rt == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        enum fs_exec_kind k = fs_exec_classify(data, size);
        CHECK(k == FS_EXEC_NATIVE_ELF || k == FS_EXEC_FOREIGN_ELF || k == FS_EXEC_BAD_ELF || k == FS_EXEC_SCRIPT ||
              k == FS_EXEC_OTHER);
        CHECK(fs_exec_classify(data, size) == k);
        /* only the header the kernel reads counts */
        if (size > EXEC_HEADER)
                CHECK(fs_exec_classify(data, EXEC_HEADER) == k);

        bool script = size >= 2 && data[0] == '#' && data[1] == '!';
        bool elf = size >= SELFMAG && memcmp(data, ELFMAG, SELFMAG) == 0;
        CHECK((k == FS_EXEC_SCRIPT) == script);
        CHECK((k == FS_EXEC_OTHER) == (!script && !elf));
        if (k == FS_EXEC_NATIVE_ELF)
                check_native(data, size);
        if (script)
                check_script(data, size);

        /* every prefix too short for the header: never NATIVE */
        size_t upto = size < sizeof(Elf64_Ehdr) ? size : sizeof(Elf64_Ehdr) - 1;
        for (size_t n = 0; n <= upto && n < sizeof(Elf64_Ehdr); n++)
                CHECK(fs_exec_classify(data, n) != FS_EXEC_NATIVE_ELF);
        return 0;
}
