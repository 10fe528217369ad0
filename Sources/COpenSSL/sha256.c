// SHA-256 through OpenSSL's low-level functions, not EVP: EVP's first use (and OpenSSL 3's SHA256() one-shot, which
// goes through EVP) loads OpenSSL's configuration and its default provider, ~2.1 MiB resident in a gateway that may
// never serve TLS, and a token's hash then takes 620 ns where these take 120 ns (a 43-byte token, this machine's
// x86-64). Deprecated since OpenSSL 3.0, they remain in every 3.x release and are the digest itself, the same
// assembly EVP's provider calls.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "lanpush_openssl.h"

void lanpush_sha256(const void *bytes, size_t length, uint8_t *digest)
{
	SHA256_CTX context;

	SHA256_Init(&context);
	SHA256_Update(&context, bytes, length);
	SHA256_Final(digest, &context);
}
