//! Key discovery (RFC 8414, RFC 9728, JWK Sets, DID documents).
