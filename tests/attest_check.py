#!/usr/bin/env python3
"""Checks an evidence folder's attestation.dsse.json with reference tooling.

usage: attest_check.py DIR PUBLIC_KEY_PEM

securesystemslib loads the DSSE envelope and verifies its Ed25519
signature with the public key (keyid: the SHA-256 hex of the raw public
key, as kgate names it); the payload must be an in-toto Statement v1
whose subjects are exactly the folder's files (the envelope aside) with
their SHA-256.  Prints "ok ..." and exits 0, or says why and exits 1.
"""
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives import serialization
from securesystemslib.dsse import Envelope
from securesystemslib.signer import SSlibKey


def folder_digests(root):
    out = {}
    for base, _dirs, files in os.walk(root):
        for f in files:
            path = os.path.join(base, f)
            rel = os.path.relpath(path, root)
            if rel == "attestation.dsse.json":
                continue
            with open(path, "rb") as fp:
                out[rel] = hashlib.sha256(fp.read()).hexdigest()
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root, pub_path = sys.argv[1], sys.argv[2]
    with open(pub_path, "rb") as fp:
        pub = serialization.load_pem_public_key(fp.read())
    raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    keyid = hashlib.sha256(raw).hexdigest()
    key = SSlibKey.from_crypto(pub, keyid=keyid)
    with open(os.path.join(root, "attestation.dsse.json")) as fp:
        envelope = Envelope.from_dict(json.load(fp))
    if envelope.payload_type != "application/vnd.in-toto+json":
        print("FAIL: payloadType %r" % envelope.payload_type)
        return 1
    try:
        envelope.verify([key], 1)
    except Exception as e:  # VerificationError and the like
        print("FAIL: the signature does not verify: %s" % e)
        return 1
    stmt = json.loads(envelope.payload)
    if stmt.get("_type") != "https://in-toto.io/Statement/v1":
        print("FAIL: _type %r" % stmt.get("_type"))
        return 1
    if not stmt.get("predicateType", "").startswith("https://kgate.dev/"):
        print("FAIL: predicateType %r" % stmt.get("predicateType"))
        return 1
    signed = {s["name"]: s["digest"]["sha256"] for s in stmt["subject"]}
    have = folder_digests(root)
    if "SHA256SUMS" not in signed:
        print("FAIL: SHA256SUMS is not a subject")
        return 1
    if signed != have:
        diff = sorted(set(signed.items()) ^ set(have.items()))
        print("FAIL: the subjects differ from the folder: %s" % diff[:5])
        return 1
    print("ok: signature by %s verifies, %d subjects equal the folder" % (keyid[:16], len(signed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
