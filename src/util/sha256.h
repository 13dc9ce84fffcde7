/* sha256.h: SHA-256 (FIPS 180-4) and hex encoding (internal).
 *
 * Used to key the LLM reply cache by the hash of a request's identity.  A
 * state is used by one thread at a time; the one-shot functions are
 * reentrant. */
#ifndef RAGSWEEP_SHA256_H
#define RAGSWEEP_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The brief's interface names both the state type and the one-shot
 * function rs__sha256, which C forbids (one namespace for typedefs and
 * functions).  The function keeps the name; the state is struct rs__sha256,
 * also spelled rs__sha256_ctx. */
typedef struct rs__sha256 {
  uint32_t h[8];     /* the chaining value */
  uint64_t n_bytes;  /* message length so far */
  uint8_t buf[64];   /* a partial block */
  size_t n_buf;      /* bytes in buf, < 64 */
} rs__sha256_ctx;

/* Starts a new message. */
void rs__sha256_init(rs__sha256_ctx *s);
/* Appends n bytes (data may be NULL when n is 0). */
void rs__sha256_update(rs__sha256_ctx *s, const void *data, size_t n);
/* Pads, writes the 32-byte digest and leaves s to be re-initialised. */
void rs__sha256_final(rs__sha256_ctx *s, uint8_t out[32]);
/* Digest of one buffer. */
void rs__sha256(const void *data, size_t n, uint8_t out[32]);
/* Writes 2n lowercase hex characters and a NUL to out (2n + 1 bytes). */
void rs__hex(const uint8_t *bytes, size_t n, char *out);

#endif
