/* sentry/api/ private: libmicrohttpd, loaded with dlopen when `cordon serve`
 * starts instead of linked. Debian's libmicrohttpd brings GnuTLS and eight
 * libraries more (p11-kit, nettle, hogweed, gmp, tasn1, idn2, unistring,
 * ffi), all mapped, relocated and initialised before main() in every cordon
 * process: 1.6 ms of each `cordon run` and of each cordon-oci call an engine
 * makes, for a server only `cordon serve` runs. Included after
 * <microhttpd.h> (by api-internal.h); each call below goes through the
 * table. */
#pragma once

#include <microhttpd.h>

#define MHD_DL_FUNCS(X)                      \
        X(MHD_add_response_header)           \
        X(MHD_create_response_from_buffer)   \
        X(MHD_create_response_from_callback) \
        X(MHD_create_response_from_fd)       \
        X(MHD_destroy_response)              \
        X(MHD_get_connection_info)           \
        X(MHD_get_connection_values)         \
        X(MHD_lookup_connection_value)       \
        X(MHD_queue_response)                \
        X(MHD_start_daemon)                  \
        X(MHD_stop_daemon)

#define MHD_DL_FIELD(f) __typeof__(f) *f;
struct mhd_dl {
        MHD_DL_FUNCS(MHD_DL_FIELD)
};
#undef MHD_DL_FIELD
extern struct mhd_dl mhd_dl;

/* Loads libmicrohttpd (once; thread-safe; the main thread only, as
 * common/dl.h says). 0, or -ELIBACC with *ret_error (static) saying what
 * was missing. api_serve calls it before anything else of the library. */
int mhd_dl_load(const char **ret_error);

#ifndef MHD_DL_IMPL
#define MHD_add_response_header           mhd_dl.MHD_add_response_header
#define MHD_create_response_from_buffer   mhd_dl.MHD_create_response_from_buffer
#define MHD_create_response_from_callback mhd_dl.MHD_create_response_from_callback
#define MHD_create_response_from_fd       mhd_dl.MHD_create_response_from_fd
#define MHD_destroy_response              mhd_dl.MHD_destroy_response
#define MHD_get_connection_info           mhd_dl.MHD_get_connection_info
#define MHD_get_connection_values         mhd_dl.MHD_get_connection_values
#define MHD_lookup_connection_value       mhd_dl.MHD_lookup_connection_value
#define MHD_queue_response                mhd_dl.MHD_queue_response
#define MHD_start_daemon                  mhd_dl.MHD_start_daemon
#define MHD_stop_daemon                   mhd_dl.MHD_stop_daemon
#endif
