/* What a file is, from its first bytes: the classifier of ELF headers and
 * the #! line parser used by the exec handler (exec.c). Pure functions of a
 * buffer (no notification, no file), so that a fuzz target can link them
 * alone (tests/fuzz/fuzz-elf.c). */
#include "config.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static void elf_init(void)
{
        (void)elf_version(EV_CURRENT);
}

enum fs_exec_kind fs_exec_classify(const void *buf, size_t len)
{
        if (len >= 2 && memcmp(buf, "#!", 2) == 0)
                return FS_EXEC_SCRIPT;
        if (len < SELFMAG || memcmp(buf, ELFMAG, SELFMAG) != 0)
                return FS_EXEC_OTHER;
        pthread_once(&elf_once, elf_init);
        /* libelf parses a private copy: elf_memory may keep pointers into it */
        char copy[EXEC_HEADER];
        size_t n = len < sizeof(copy) ? len : sizeof(copy);
        memcpy(copy, buf, n);
        Elf *e = elf_memory(copy, n);
        if (!e)
                return FS_EXEC_BAD_ELF;
        GElf_Ehdr eh;
        enum fs_exec_kind k = FS_EXEC_BAD_ELF;
        if (elf_kind(e) == ELF_K_ELF && gelf_getehdr(e, &eh)) {
                /* x86_64 only: i386 (ELFCLASS32, EM_386), x32 (ELFCLASS32 with
                 * EM_X86_64) and every other machine are foreign. The seccomp
                 * filter would kill an i386 or x32 image at its first syscall;
                 * refusing it here means the kernel never loads it, and an
                 * image for a machine the host handles through binfmt_misc
                 * (qemu-user) never reaches a host interpreter. */
                if (gelf_getclass(e) == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB && eh.e_machine == EM_X86_64 &&
                    (eh.e_type == ET_EXEC || eh.e_type == ET_DYN))
                        k = FS_EXEC_NATIVE_ELF;
                else
                        k = FS_EXEC_FOREIGN_ELF;
        }
        elf_end(e);
        return k;
}

/* The interpreter of a #! script, parsed as fs/binfmt_script.c does:
 * blanks after "#!", then the name up to a blank or the end of the line.
 * -ENOEXEC when there is none or it does not end within the header. */
int fs_exec_script_interpreter(const unsigned char *hdr, size_t len, char *out, size_t size)
{
        size_t i = 2, end;
        size_t line_end = len;
        for (size_t k = 0; k < len; k++)
                if (hdr[k] == '\n') {
                        line_end = k;
                        break;
                }
        while (i < line_end && (hdr[i] == ' ' || hdr[i] == '\t'))
                i++;
        if (i == line_end)
                return -ENOEXEC;
        for (end = i; end < line_end && hdr[end] != ' ' && hdr[end] != '\t' && hdr[end] != '\0'; end++)
                ;
        if (end == len && len == EXEC_HEADER)
                return -ENOEXEC; /* the name runs past what the kernel reads */
        if (end - i >= size)
                return -ENAMETOOLONG;
        memcpy(out, hdr + i, end - i);
        out[end - i] = '\0';
        return 0;
}
