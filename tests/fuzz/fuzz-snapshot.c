/* Fuzz target for the reading of a snapshot archive (`cordon sandbox create
 * --from-snapshot`): the input is read as restore_thread (sentry/sandbox/snapshot.c)
 * reads it (libarchive, tar with an optional zstd filter), and each entry
 * goes through snapshot_entry_plan (sentry/sandbox/snapshot-entry.c), the decision
 * of what the restore writes where.
 *
 * Errors must be reported, never crash. An entry the plan accepts for a
 * layer directory must be written only inside the writable layer: a name
 * relative to the view's root, under one of the layer's directories, with
 * something after it and no ".." component; a hard link's target likewise,
 * and present exactly when the entry is a hard link. An entry of upper/ (a
 * template root's changes) gets a non-empty relative name without ".." and
 * without a marker (".wh.") among its components, a hard link only to
 * another upper/ entry; a whiteout or opaque marker is an empty regular
 * file, never a link, and never names the root. An entry outside layer/ and
 * upper/, or of a type a snapshot does not hold, is never accepted. The
 * data of every entry is read too, as the restore would.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>

#include "common/util.h"
#include "sentry/sandbox/sandbox-internal.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

/* Bounds on the work one input may cause (a restore has none but the
 * archive's size; here they keep each run short). */
#define MAX_ENTRIES 256
#define MAX_DATA    (1 << 20)

static volatile uint8_t sink;

static bool has_dotdot(const char *p)
{
        const char *c = p;
        while (*c) {
                const char *end = strchrnul(c, '/');
                if (end - c == 2 && c[0] == '.' && c[1] == '.')
                        return true;
                c = *end ? end + 1 : end;
        }
        return false;
}

/* name lies inside the layer: "<view dir>/<something>", relative, no ".." */
static void check_inside(const char *name)
{
        CHECK(name && name[0] != '/');
        CHECK(!has_dotdot(name));
        bool under = false;
        for (size_t i = 0; i < SNAPSHOT_LAYER_DIRS; i++) {
                size_t n = strlen(snapshot_layer_dirs[i].view);
                if (strncmp(name, snapshot_layer_dirs[i].view, n) == 0 && name[n] == '/' && name[n + 1])
                        under = true;
        }
        CHECK(under);
}

/* a name for upper/: relative, non-empty, no "..", no ".wh." component */
static void check_upper_name(const char *name)
{
        CHECK(name && name[0] && name[0] != '/');
        CHECK(!has_dotdot(name));
        for (const char *c = name; *c;) {
                const char *end = strchrnul(c, '/');
                CHECK(!(end - c >= 4 && strncmp(c, ".wh.", 4) == 0));
                c = *end ? end + 1 : end;
        }
}

static bool in_upper(const char *arc)
{
        return arc && strncmp(arc, "upper/", 6) == 0;
}

static bool in_layer(const char *arc)
{
        if (!arc)
                return false;
        for (size_t i = 0; i < SNAPSHOT_LAYER_DIRS; i++) {
                size_t n = strlen(snapshot_layer_dirs[i].name);
                if (strncmp(arc, snapshot_layer_dirs[i].name, n) == 0 && arc[n] == '/' && arc[n + 1])
                        return true;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct archive *in = archive_read_new();
        if (!in)
                abort();
        archive_read_support_filter_zstd(in);
        archive_read_support_format_tar(in);
        if (archive_read_open_memory(in, data, size) != ARCHIVE_OK) {
                /* reported, as the restore reports it */
                CHECK(archive_error_string(in) != NULL);
                archive_read_free(in);
                return 0;
        }
        struct archive_entry *e;
        int ar, entries = 0;
        int64_t data_read = 0;
        while (entries++ < MAX_ENTRIES && (ar = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
                const char *arc = archive_entry_pathname(e);
                mode_t type = archive_entry_filetype(e);
                const char *hl = archive_entry_hardlink(e);
                struct snapshot_plan p = {.action = 0, .name = (char *)"unset", .hardlink = (char *)"unset"};
                int act = snapshot_entry_plan(e, &p);
                CHECK(act == 0 || act == -EINVAL || act == SNAPSHOT_ACT_WRITE || act == SNAPSHOT_ACT_UPPER ||
                      act == SNAPSHOT_ACT_WHITEOUT || act == SNAPSHOT_ACT_OPAQUE);
                if (act <= 0) {
                        /* untouched outputs when nothing is restored */
                        CHECK(streq(p.name, "unset") && streq(p.hardlink, "unset"));
                } else {
                        CHECK((int)p.action == act);
                        switch (act) {
                        case SNAPSHOT_ACT_WRITE:
                                CHECK(in_layer(arc));
                                CHECK(type == AE_IFREG || type == AE_IFDIR || type == AE_IFLNK);
                                check_inside(p.name);
                                CHECK((p.hardlink != NULL) == (hl != NULL));
                                if (p.hardlink) {
                                        CHECK(in_layer(hl));
                                        check_inside(p.hardlink);
                                }
                                break;
                        case SNAPSHOT_ACT_UPPER:
                                CHECK(in_upper(arc));
                                CHECK(type == AE_IFREG || type == AE_IFDIR || type == AE_IFLNK);
                                check_upper_name(p.name);
                                CHECK((p.hardlink != NULL) == (hl != NULL));
                                if (p.hardlink) {
                                        CHECK(in_upper(hl));
                                        check_upper_name(p.hardlink);
                                }
                                break;
                        default: /* whiteout, opaque */
                                CHECK(in_upper(arc));
                                CHECK(type == AE_IFREG && hl == NULL && p.hardlink == NULL);
                                check_upper_name(p.name);
                                if (act == SNAPSHOT_ACT_OPAQUE)
                                        CHECK(strstr(arc, "/.wh..wh..opq") != NULL);
                                break;
                        }
                        snapshot_plan_done(&p);
                }
                if (!in_layer(arc) && !in_upper(arc))
                        CHECK(act == 0);
                /* the data, as the restore reads it */
                const void *buf;
                size_t len;
                la_int64_t offset;
                int rr;
                while (data_read < MAX_DATA && (rr = archive_read_data_block(in, &buf, &len, &offset)) == ARCHIVE_OK) {
                        CHECK(offset >= 0);
                        if (len) /* the block is readable to its end */
                                sink ^= ((const volatile uint8_t *)buf)[0] ^ ((const volatile uint8_t *)buf)[len - 1];
                        data_read += (int64_t)len;
                }
        }
        (void)ar;
        archive_read_free(in);
        return 0;
}
