/* net/ private: libssl and the parts of libcrypto the broker uses, through
 * dlopen (as common/crypto-dl.h does for hashing): only a sandbox with a
 * credential grant terminates TLS, and linking OpenSSL would cost every
 * cordon process its relocations at start. Included after the OpenSSL
 * headers by the files that call them; each call below goes through the
 * table. */
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define TLS_DL_SSL_FUNCS(X)                    \
        X(OPENSSL_init_ssl)                    \
        X(TLS_server_method)                   \
        X(TLS_client_method)                   \
        X(SSL_CTX_new)                         \
        X(SSL_CTX_free)                        \
        X(SSL_CTX_use_certificate)             \
        X(SSL_CTX_use_PrivateKey)              \
        X(SSL_CTX_set_options)                 \
        X(SSL_CTX_ctrl)                        \
        X(SSL_CTX_set_alpn_select_cb)          \
        X(SSL_CTX_set_verify)                  \
        X(SSL_CTX_set_cert_store)              \
        X(SSL_new)                             \
        X(SSL_free)                            \
        X(SSL_set_fd)                          \
        X(SSL_get_rbio)                        \
        X(SSL_get_wbio)                        \
        X(SSL_set0_wbio)                       \
        X(SSL_accept)                          \
        X(SSL_connect)                         \
        X(SSL_read)                            \
        X(SSL_write)                           \
        X(SSL_get_error)                       \
        X(SSL_shutdown)                        \
        X(SSL_ctrl)                            \
        X(SSL_set1_host)                       \
        X(SSL_get_verify_result)               \
        X(SSL_set_alpn_protos)                 \
        X(SSL_get_servername)                  \
        X(SSL_pending)                         \
        X(SSL_peek)                            \
        X(SSL_has_pending)                     \
        X(SSL_CTX_set_default_read_buffer_len) \
        X(SSL_CTX_sess_set_new_cb)             \
        X(SSL_SESSION_free)                    \
        X(SSL_set_session)                     \
        X(SSL_session_reused)                  \
        X(SSL_set_ex_data)                     \
        X(SSL_get_ex_data)                     \
        X(SSL_select_next_proto)

#define TLS_DL_CRYPTO_FUNCS(X)           \
        X(EVP_PKEY_Q_keygen)             \
        X(EVP_PKEY_free)                 \
        X(X509_new)                      \
        X(X509_free)                     \
        X(X509_set_version)              \
        X(X509_get_serialNumber)         \
        X(ASN1_INTEGER_set_uint64)       \
        X(X509_gmtime_adj)               \
        X(X509_getm_notBefore)           \
        X(X509_getm_notAfter)            \
        X(X509_set_pubkey)               \
        X(X509_get_subject_name)         \
        X(X509_NAME_add_entry_by_txt)    \
        X(X509_set_issuer_name)          \
        X(X509_sign)                     \
        X(EVP_sha256)                    \
        X(X509V3_set_ctx)                \
        X(X509V3_EXT_nconf_nid)          \
        X(X509_add_ext)                  \
        X(X509_EXTENSION_free)           \
        X(PEM_write_bio_X509)            \
        X(BIO_new)                       \
        X(BIO_s_mem)                     \
        X(BIO_ctrl)                      \
        X(BIO_free)                      \
        X(BIO_f_buffer)                  \
        X(BIO_push)                      \
        X(BIO_up_ref)                    \
        X(BIO_test_flags)                \
        X(X509_STORE_new)                \
        X(X509_STORE_free)               \
        X(X509_STORE_load_file)          \
        X(X509_get_default_cert_file)    \
        X(X509_verify_cert_error_string) \
        X(ERR_clear_error)               \
        X(ERR_get_error)                 \
        X(ERR_error_string_n)

#define TLS_DL_FIELD(f) __typeof__(f) *f;
struct tls_dl {
        TLS_DL_SSL_FUNCS(TLS_DL_FIELD)
        TLS_DL_CRYPTO_FUNCS(TLS_DL_FIELD)
};
#undef TLS_DL_FIELD
extern struct tls_dl tls_dl;

/* Loads libssl.so.3 and libcrypto.so.3 (once; the main thread only,
 * common/dl.h). 0, or -ELIBACC with *ret_error (static). */
int tls_dl_load(const char **ret_error);

#ifndef TLS_DL_IMPL
#define OPENSSL_init_ssl                    tls_dl.OPENSSL_init_ssl
#define TLS_server_method                   tls_dl.TLS_server_method
#define TLS_client_method                   tls_dl.TLS_client_method
#define SSL_CTX_new                         tls_dl.SSL_CTX_new
#define SSL_CTX_free                        tls_dl.SSL_CTX_free
#define SSL_CTX_use_certificate             tls_dl.SSL_CTX_use_certificate
#define SSL_CTX_use_PrivateKey              tls_dl.SSL_CTX_use_PrivateKey
#define SSL_CTX_set_options                 tls_dl.SSL_CTX_set_options
#define SSL_CTX_ctrl                        tls_dl.SSL_CTX_ctrl
#define SSL_CTX_set_alpn_select_cb          tls_dl.SSL_CTX_set_alpn_select_cb
#define SSL_CTX_set_verify                  tls_dl.SSL_CTX_set_verify
#define SSL_CTX_set_cert_store              tls_dl.SSL_CTX_set_cert_store
#define SSL_new                             tls_dl.SSL_new
#define SSL_free                            tls_dl.SSL_free
#define SSL_set_fd                          tls_dl.SSL_set_fd
#define SSL_get_rbio                        tls_dl.SSL_get_rbio
#define SSL_get_wbio                        tls_dl.SSL_get_wbio
#define SSL_set0_wbio                       tls_dl.SSL_set0_wbio
#define BIO_f_buffer                        tls_dl.BIO_f_buffer
#define BIO_push                            tls_dl.BIO_push
#define BIO_up_ref                          tls_dl.BIO_up_ref
#define BIO_test_flags                      tls_dl.BIO_test_flags
#define SSL_accept                          tls_dl.SSL_accept
#define SSL_connect                         tls_dl.SSL_connect
#define SSL_read                            tls_dl.SSL_read
#define SSL_write                           tls_dl.SSL_write
#define SSL_get_error                       tls_dl.SSL_get_error
#define SSL_shutdown                        tls_dl.SSL_shutdown
#define SSL_ctrl                            tls_dl.SSL_ctrl
#define SSL_set1_host                       tls_dl.SSL_set1_host
#define SSL_get_verify_result               tls_dl.SSL_get_verify_result
#define SSL_set_alpn_protos                 tls_dl.SSL_set_alpn_protos
#define SSL_get_servername                  tls_dl.SSL_get_servername
#define SSL_pending                         tls_dl.SSL_pending
#define SSL_peek                            tls_dl.SSL_peek
#define SSL_has_pending                     tls_dl.SSL_has_pending
#define SSL_CTX_set_default_read_buffer_len tls_dl.SSL_CTX_set_default_read_buffer_len
#define SSL_CTX_sess_set_new_cb             tls_dl.SSL_CTX_sess_set_new_cb
#define SSL_SESSION_free                    tls_dl.SSL_SESSION_free
#define SSL_set_session                     tls_dl.SSL_set_session
#define SSL_session_reused                  tls_dl.SSL_session_reused
#define SSL_set_ex_data                     tls_dl.SSL_set_ex_data
#define SSL_get_ex_data                     tls_dl.SSL_get_ex_data
#define SSL_select_next_proto               tls_dl.SSL_select_next_proto
#define EVP_PKEY_Q_keygen                   tls_dl.EVP_PKEY_Q_keygen
#define EVP_PKEY_free                       tls_dl.EVP_PKEY_free
#define X509_new                            tls_dl.X509_new
#define X509_free                           tls_dl.X509_free
#define X509_set_version                    tls_dl.X509_set_version
#define X509_get_serialNumber               tls_dl.X509_get_serialNumber
#define ASN1_INTEGER_set_uint64             tls_dl.ASN1_INTEGER_set_uint64
#define X509_gmtime_adj                     tls_dl.X509_gmtime_adj
#define X509_getm_notBefore                 tls_dl.X509_getm_notBefore
#define X509_getm_notAfter                  tls_dl.X509_getm_notAfter
#define X509_set_pubkey                     tls_dl.X509_set_pubkey
#define X509_get_subject_name               tls_dl.X509_get_subject_name
#define X509_NAME_add_entry_by_txt          tls_dl.X509_NAME_add_entry_by_txt
#define X509_set_issuer_name                tls_dl.X509_set_issuer_name
#define X509_sign                           tls_dl.X509_sign
#define EVP_sha256                          tls_dl.EVP_sha256
#define X509V3_set_ctx                      tls_dl.X509V3_set_ctx
#define X509V3_EXT_nconf_nid                tls_dl.X509V3_EXT_nconf_nid
#define X509_add_ext                        tls_dl.X509_add_ext
#define X509_EXTENSION_free                 tls_dl.X509_EXTENSION_free
#define PEM_write_bio_X509                  tls_dl.PEM_write_bio_X509
#define BIO_new                             tls_dl.BIO_new
#define BIO_s_mem                           tls_dl.BIO_s_mem
#define BIO_ctrl                            tls_dl.BIO_ctrl
#define BIO_free                            tls_dl.BIO_free
#define X509_STORE_new                      tls_dl.X509_STORE_new
#define X509_STORE_free                     tls_dl.X509_STORE_free
#define X509_STORE_load_file                tls_dl.X509_STORE_load_file
#define X509_get_default_cert_file          tls_dl.X509_get_default_cert_file
#define X509_verify_cert_error_string       tls_dl.X509_verify_cert_error_string
#define ERR_clear_error                     tls_dl.ERR_clear_error
#define ERR_get_error                       tls_dl.ERR_get_error
#define ERR_error_string_n                  tls_dl.ERR_error_string_n
#endif
