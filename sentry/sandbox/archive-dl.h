/* sentry/sandbox/ private: libarchive, loaded with dlopen on first use instead of
 * linked. Snapshots (long-lived sandboxes) are its only users, and linking it
 * cost every `cordon run` about 1.7 ms of start-up: libarchive brings
 * libxml2, ICU, libstdc++ and five compression libraries, all mapped and
 * relocated before main(). Included after <archive.h> and <archive_entry.h>
 * by the files that call it; each call below goes through the table. */
#pragma once

#include <archive.h>
#include <archive_entry.h>

#define ARCHIVE_DL_FUNCS(X)                      \
        X(archive_entry_copy_stat)               \
        X(archive_entry_filetype)                \
        X(archive_entry_free)                    \
        X(archive_entry_hardlink)                \
        X(archive_entry_new)                     \
        X(archive_entry_pathname)                \
        X(archive_entry_set_filetype)            \
        X(archive_entry_set_gid)                 \
        X(archive_entry_set_hardlink)            \
        X(archive_entry_set_mtime)               \
        X(archive_entry_set_pathname)            \
        X(archive_entry_set_perm)                \
        X(archive_entry_set_size)                \
        X(archive_entry_set_symlink)             \
        X(archive_entry_set_uid)                 \
        X(archive_entry_size)                    \
        X(archive_error_string)                  \
        X(archive_filter_bytes)                  \
        X(archive_read_data)                     \
        X(archive_read_data_block)               \
        X(archive_read_free)                     \
        X(archive_read_new)                      \
        X(archive_read_next_header)              \
        X(archive_read_open_fd)                  \
        X(archive_read_support_filter_zstd)      \
        X(archive_read_support_format_tar)       \
        X(archive_set_error)                     \
        X(archive_write_add_filter_zstd)         \
        X(archive_write_close)                   \
        X(archive_write_data)                    \
        X(archive_write_data_block)              \
        X(archive_write_disk_new)                \
        X(archive_write_disk_set_options)        \
        X(archive_write_finish_entry)            \
        X(archive_write_free)                    \
        X(archive_write_header)                  \
        X(archive_write_new)                     \
        X(archive_write_open2)                   \
        X(archive_write_set_bytes_in_last_block) \
        X(archive_write_set_format_pax_restricted)

#define ARCHIVE_DL_FIELD(f) __typeof__(f) *f;
struct archive_dl {
        ARCHIVE_DL_FUNCS(ARCHIVE_DL_FIELD)
};
#undef ARCHIVE_DL_FIELD
extern struct archive_dl archive_dl;

/* Loads libarchive (once; thread-safe). 0, or -ELIBACC with *ret_error
 * (static) saying what was missing. A long-lived sandbox's sentry loads it
 * before it confines itself (sandbox_preload_archive); the first call may
 * come later in a program that is not confined (the fuzz target). */
int archive_dl_load(const char **ret_error);

#ifndef ARCHIVE_DL_IMPL
#define archive_entry_copy_stat                 archive_dl.archive_entry_copy_stat
#define archive_entry_filetype                  archive_dl.archive_entry_filetype
#define archive_entry_free                      archive_dl.archive_entry_free
#define archive_entry_hardlink                  archive_dl.archive_entry_hardlink
#define archive_entry_new                       archive_dl.archive_entry_new
#define archive_entry_pathname                  archive_dl.archive_entry_pathname
#define archive_entry_set_filetype              archive_dl.archive_entry_set_filetype
#define archive_entry_set_gid                   archive_dl.archive_entry_set_gid
#define archive_entry_set_hardlink              archive_dl.archive_entry_set_hardlink
#define archive_entry_set_mtime                 archive_dl.archive_entry_set_mtime
#define archive_entry_set_pathname              archive_dl.archive_entry_set_pathname
#define archive_entry_set_perm                  archive_dl.archive_entry_set_perm
#define archive_entry_set_size                  archive_dl.archive_entry_set_size
#define archive_entry_set_symlink               archive_dl.archive_entry_set_symlink
#define archive_entry_set_uid                   archive_dl.archive_entry_set_uid
#define archive_entry_size                      archive_dl.archive_entry_size
#define archive_filter_bytes                    archive_dl.archive_filter_bytes
#define archive_error_string                    archive_dl.archive_error_string
#define archive_read_data                       archive_dl.archive_read_data
#define archive_read_data_block                 archive_dl.archive_read_data_block
#define archive_read_free                       archive_dl.archive_read_free
#define archive_read_new                        archive_dl.archive_read_new
#define archive_read_next_header                archive_dl.archive_read_next_header
#define archive_read_open_fd                    archive_dl.archive_read_open_fd
#define archive_read_support_filter_zstd        archive_dl.archive_read_support_filter_zstd
#define archive_read_support_format_tar         archive_dl.archive_read_support_format_tar
#define archive_set_error                       archive_dl.archive_set_error
#define archive_write_add_filter_zstd           archive_dl.archive_write_add_filter_zstd
#define archive_write_close                     archive_dl.archive_write_close
#define archive_write_data                      archive_dl.archive_write_data
#define archive_write_data_block                archive_dl.archive_write_data_block
#define archive_write_disk_new                  archive_dl.archive_write_disk_new
#define archive_write_disk_set_options          archive_dl.archive_write_disk_set_options
#define archive_write_finish_entry              archive_dl.archive_write_finish_entry
#define archive_write_free                      archive_dl.archive_write_free
#define archive_write_header                    archive_dl.archive_write_header
#define archive_write_new                       archive_dl.archive_write_new
#define archive_write_open2                     archive_dl.archive_write_open2
#define archive_write_set_bytes_in_last_block   archive_dl.archive_write_set_bytes_in_last_block
#define archive_write_set_format_pax_restricted archive_dl.archive_write_set_format_pax_restricted
#endif
