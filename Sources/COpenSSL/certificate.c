// The certificate lanpushd makes for itself at its first start with TLS on, and the fingerprint of any certificate
// it serves. Both run only where TLS is on, so OpenSSL's EVP layer (its configuration and provider) is loaded anyway.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "lanpush_openssl.h"

// `what` failed: OpenSSL's reason for it into `error`, and its error queue emptied, so nothing left there is taken
// later for the cause of another call's failure on this thread (lws reads the same queue after its TLS calls).
static int fail(const char *what, char *error, size_t error_size)
{
	unsigned long code = ERR_peek_last_error();
	char reason[256];

	if (error_size) {
		if (code) {
			ERR_error_string_n(code, reason, sizeof(reason));
			snprintf(error, error_size, "%s: %s", what, reason);
		} else {
			snprintf(error, error_size, "%s", what);
		}
	}
	ERR_clear_error();
	return -1;
}

int lanpush_pem_certificate_sha256(const char *pem, size_t length, uint8_t *digest, char *error, size_t error_size)
{
	BIO *bio = length <= INT_MAX ? BIO_new_mem_buf(pem, (int)length) : NULL;
	X509 *certificate = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	unsigned char *der = NULL;
	// The DER as OpenSSL encodes the parsed certificate: what lws hands the TLS handshake, and so what clients see.
	int der_length = certificate ? i2d_X509(certificate, &der) : -1;

	if (der_length > 0)
		lanpush_sha256(der, (size_t)der_length, digest);
	OPENSSL_free(der);
	X509_free(certificate);
	BIO_free(bio);
	if (der_length <= 0)
		return fail("no PEM certificate", error, error_size);
	ERR_clear_error();
	return 0;
}

// A memory BIO's bytes as a NUL-terminated string of the caller's.
static char *bio_text(BIO *bio)
{
	char *data;
	long length = BIO_get_mem_data(bio, &data);
	char *text = length > 0 ? malloc((size_t)length + 1) : NULL;

	if (text) {
		memcpy(text, data, (size_t)length);
		text[length] = '\0';
	}
	return text;
}

// The subject alternative names: each a DNS name (IA5String), in the order given.
static GENERAL_NAMES *dns_alt_names(const char *dns_names, size_t count)
{
	GENERAL_NAMES *names = GENERAL_NAMES_new();

	for (size_t i = 0; names && i < count; i++, dns_names += strlen(dns_names) + 1) {
		GENERAL_NAME *name = GENERAL_NAME_new();
		ASN1_IA5STRING *dns = ASN1_IA5STRING_new();

		if (!name || !dns || !ASN1_STRING_set(dns, dns_names, -1)) {
			GENERAL_NAME_free(name);
			ASN1_IA5STRING_free(dns);
			GENERAL_NAMES_free(names);
			return NULL;
		}
		GENERAL_NAME_set0_value(name, GEN_DNS, dns);
		if (!sk_GENERAL_NAME_push(names, name)) {
			GENERAL_NAME_free(name);
			GENERAL_NAMES_free(names);
			return NULL;
		}
	}
	return names;
}

// The four extensions, built as structures rather than parsed from OpenSSL's configuration syntax, where a host
// name holding a comma would read as two values.
static int add_leaf_extensions(X509 *certificate, const char *dns_names, size_t dns_name_count)
{
	BASIC_CONSTRAINTS *basic = BASIC_CONSTRAINTS_new();
	ASN1_BIT_STRING *usage = ASN1_BIT_STRING_new();
	EXTENDED_KEY_USAGE *extended = sk_ASN1_OBJECT_new_null();
	GENERAL_NAMES *alt_names = dns_alt_names(dns_names, dns_name_count);
	int ok = basic && usage && extended && alt_names;

	if (ok) {
		basic->ca = 0;  // cA FALSE, which DER leaves out; no path length
		ok = ASN1_BIT_STRING_set_bit(usage, 0, 1)  // bit 0: digitalSignature
			&& sk_ASN1_OBJECT_push(extended, OBJ_nid2obj(NID_server_auth))
			&& X509_add1_ext_i2d(certificate, NID_basic_constraints, basic, 1, X509V3_ADD_DEFAULT) == 1
			&& X509_add1_ext_i2d(certificate, NID_key_usage, usage, 0, X509V3_ADD_DEFAULT) == 1
			&& X509_add1_ext_i2d(certificate, NID_ext_key_usage, extended, 0, X509V3_ADD_DEFAULT) == 1
			&& X509_add1_ext_i2d(certificate, NID_subject_alt_name, alt_names, 0, X509V3_ADD_DEFAULT) == 1;
	}
	BASIC_CONSTRAINTS_free(basic);
	ASN1_BIT_STRING_free(usage);
	EXTENDED_KEY_USAGE_free(extended);
	GENERAL_NAMES_free(alt_names);
	return ok;
}

// A random positive serial of 20 bytes, the most RFC 5280 allows (leading zero bytes dropped, as DER's INTEGER
// wants; a 0x00 put in front of a high first bit by the encoding).
static int set_random_serial(X509 *certificate)
{
	unsigned char bytes[20];
	BIGNUM *serial = NULL;
	int ok = RAND_bytes(bytes, sizeof(bytes)) == 1
		&& (serial = BN_bin2bn(bytes, sizeof(bytes), NULL)) != NULL
		&& BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(certificate)) != NULL;

	BN_free(serial);
	return ok;
}

static int set_name(X509 *certificate, const char *common_name)
{
	X509_NAME *name = X509_NAME_new();
	int ok = name
		&& X509_NAME_add_entry_by_NID(name, NID_commonName, V_ASN1_UTF8STRING,
			(const unsigned char *)common_name, -1, -1, 0)
		&& X509_set_issuer_name(certificate, name)
		&& X509_set_subject_name(certificate, name);

	X509_NAME_free(name);
	return ok;
}

int lanpush_self_signed_make(const char *common_name, const char *dns_names, size_t dns_name_count,
	int64_t not_before, int64_t not_after, lanpush_self_signed_t *made, char *error, size_t error_size)
{
	const char *step = "P-256 key";
	EVP_PKEY *key = NULL;
	X509 *certificate = NULL;
	BIO *certificate_bio = NULL, *key_bio = NULL;
	int ok = 0;

	made->certificate_pem = made->key_pem = NULL;
	if (!(key = EVP_EC_gen("P-256")))
		goto done;
	step = "certificate";
	if (!(certificate = X509_new()) || !X509_set_version(certificate, X509_VERSION_3)
		|| !X509_set_pubkey(certificate, key))
		goto done;
	step = "serial number";
	if (!set_random_serial(certificate))
		goto done;
	step = "name";
	if (!set_name(certificate, common_name))
		goto done;
	// UTCTime until 2049, GeneralizedTime from 2050, as RFC 5280 has it.
	step = "validity";
	if (!ASN1_TIME_set(X509_getm_notBefore(certificate), (time_t)not_before)
		|| !ASN1_TIME_set(X509_getm_notAfter(certificate), (time_t)not_after))
		goto done;
	step = "extensions";
	if (!add_leaf_extensions(certificate, dns_names, dns_name_count))
		goto done;
	step = "signature";
	if (!X509_sign(certificate, key, EVP_sha256()))
		goto done;
	step = "PEM";
	if (!(certificate_bio = BIO_new(BIO_s_mem())) || !PEM_write_bio_X509(certificate_bio, certificate)
		|| !(key_bio = BIO_new(BIO_s_mem()))
		|| !PEM_write_bio_PrivateKey(key_bio, key, NULL, NULL, 0, NULL, NULL)
		|| !(made->certificate_pem = bio_text(certificate_bio)) || !(made->key_pem = bio_text(key_bio)))
		goto done;
	ok = 1;
done:
	if (!ok) {
		fail(step, error, error_size);
		lanpush_self_signed_free(made);
	}
	ERR_clear_error();
	BIO_free(certificate_bio);
	BIO_free(key_bio);  // a memory BIO's buffer is overwritten as it is freed
	X509_free(certificate);
	EVP_PKEY_free(key);
	return ok ? 0 : -1;
}

void lanpush_self_signed_free(lanpush_self_signed_t *made)
{
	free(made->certificate_pem);
	if (made->key_pem) {
		OPENSSL_cleanse(made->key_pem, strlen(made->key_pem));
		free(made->key_pem);
	}
	made->certificate_pem = made->key_pem = NULL;
}
