#ifndef LANPUSH_OPENSSL_H
#define LANPUSH_OPENSSL_H

#include <stddef.h>
#include <stdint.h>

/// What lanpushd needs of the libcrypto that libwebsockets links, in plain C types: Swift sees no OpenSSL header.
/// Functions that fail return -1 and leave a NUL-terminated reason (OpenSSL's own, when it gave one) in `error`.

enum { LANPUSH_SHA256_LENGTH = 32 };

/// SHA-256 of `length` bytes at `bytes` (NULL when `length` is 0).
void lanpush_sha256(const void *bytes, size_t length, uint8_t *digest);

/// SHA-256 of the DER of the first certificate in PEM text (a chain file's leaf, which a TLS server sends first).
int lanpush_pem_certificate_sha256(const char *pem, size_t length, uint8_t *digest, char *error, size_t error_size);

/// A certificate and its private key as PEM, NUL-terminated, owned by the caller (`lanpush_self_signed_free`).
typedef struct lanpush_self_signed {
	char *certificate_pem;
	char *key_pem;
} lanpush_self_signed_t;

/// A new P-256 key and an X.509 v3 certificate for it signed with itself (ECDSA with SHA-256): a random serial of 20
/// bytes, `common_name` (UTF8String) as subject and issuer, validity in seconds since 1970 (UTC), and the
/// extensions of a TLS server's leaf: basic constraints (critical, not a CA), key usage digital signature, extended
/// key usage server authentication, and the DNS names as subject alternative names, in that order. `dns_names` holds
/// `dns_name_count` NUL-terminated names one after the other. The key is PKCS#8.
int lanpush_self_signed_make(const char *common_name, const char *dns_names, size_t dns_name_count,
	int64_t not_before, int64_t not_after, lanpush_self_signed_t *made, char *error, size_t error_size);

/// Frees both texts (the key's bytes overwritten first) and sets them to NULL.
void lanpush_self_signed_free(lanpush_self_signed_t *made);

#endif
