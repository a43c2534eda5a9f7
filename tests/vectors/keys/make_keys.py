#!/usr/bin/env python3
"""Regenerate the encrypted-PKCS#8 test keys in this folder (pyca/cryptography).

The keys are the RFC 9421 B.1 test keys (public, see keys/README.md), wrapped
in encrypted PKCS#8 (PBES2: PBKDF2-HMAC-SHA256 + AES-256-CBC, cryptography's
BestAvailableEncryption) with the passphrase in PASSPHRASE. The salt and IV
are random, so re-running changes the bytes but not the keys.
"""
import pathlib
from cryptography.hazmat.primitives import serialization

HERE = pathlib.Path(__file__).resolve().parent
KEYS = HERE.parent.parent.parent / "keys" / "rfc9421"
PASSPHRASE = b"agentsig test passphrase"
(HERE / "passphrase.txt").write_bytes(PASSPHRASE)

for name in ["test-key-ecc-p256", "test-key-ed25519", "test-key-rsa-pss"]:
    key = serialization.load_pem_private_key((KEYS / f"{name}.pem").read_bytes(), password=None)
    enc = serialization.BestAvailableEncryption(PASSPHRASE)
    (HERE / f"{name}.enc.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc))
    (HERE / f"{name}.enc.der").write_bytes(
        key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, enc))
    print("wrote", name)
