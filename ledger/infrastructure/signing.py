"""Ed25519 keys that sign the ledger's chain heads, and the MAC key for snapshot seals.

`rin keygen FILE` writes the private key to FILE (PKCS#8 PEM, mode 0600) and the public key to
FILE.pub. A key is named by its fingerprint, `ed25519:` + the first 16 hex digits of the SHA-256
of its raw public bytes: a signed store names the key it expects with it. Signing and checking
are `cryptography`'s; nothing here is hand-rolled but the message layout.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ledger.infrastructure.sqlite_files import write_new

HEAD_DOMAIN = "rin-ledger head v1"
SEAL_INFO = b"rin-ledger snapshot seal v1"


class StoreRefused(Exception):
    """The ledger refuses to use a store or key; `exit_code` is the command line's."""

    exit_code = 2


class KeyProblem(StoreRefused):
    """A key file that cannot be read, or a store that needs a key other than the one given
    (exit 2: a bad argument)."""


class KeyRequired(KeyProblem):
    """The store's heads are signed: writing needs the private key of `fingerprint`."""

    def __init__(self, fingerprint: str, given: str | None) -> None:
        self.fingerprint = fingerprint
        given_text = f"the key given is {given}" if given else "no key was given (--key or RIN_KEY)"
        super().__init__(
            f"this store's heads are signed by {fingerprint}: writing needs that private key; "
            f"{given_text}"
        )


def fingerprint(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


def keygen(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write a new key pair: `path` (private, 0600) and `path`.pub, neither overwritten nor
    written through a link planted at its name (a `.pub` symlink had keygen overwrite what it
    named, helper-71): either existing, nothing is written (`FileExistsError`)."""
    private_path, public_path = Path(path), Path(f"{path}.pub")
    if os.path.lexists(public_path):
        raise FileExistsError(errno.EEXIST, "File exists", str(public_path))
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    write_new(private_path, pem, 0o600)
    write_new(public_path, key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private_path, public_path


def load_private(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    key = read_pem(path, "private", lambda pem: serialization.load_pem_private_key(pem, None))
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyProblem(f"{path}: not an Ed25519 private key")
    return key


def load_public(path: str | os.PathLike[str]) -> Ed25519PublicKey:
    key = read_pem(path, "public", serialization.load_pem_public_key)
    if not isinstance(key, Ed25519PublicKey):
        raise KeyProblem(f"{path}: not an Ed25519 public key")
    return key


def read_pem(path: str | os.PathLike[str], kind: str, load: Callable[[bytes], Any]) -> Any:
    """The key in a PEM file, or a `KeyProblem` naming the file and what is wrong."""
    try:
        return load(Path(path).read_bytes())
    except OSError as exc:
        raise KeyProblem(f"{path}: {exc.strerror}") from None
    except (ValueError, TypeError):
        raise KeyProblem(f"{path}: not a readable Ed25519 {kind} key (PEM)") from None


def head_message(notification_id: int, head_hash: str) -> bytes:
    """The bytes a head's signature covers: domain, notification id, hash."""
    return orjson.dumps([HEAD_DOMAIN, notification_id, head_hash])


class Signer:
    """A private key in use: signs heads, names itself, and derives the snapshot MAC key."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.fingerprint = fingerprint(key.public_key())
        raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
        self.seal_key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                             info=SEAL_INFO).derive(raw)

    @classmethod
    def of(cls, key: str | os.PathLike[str] | Ed25519PrivateKey | Signer | None) -> Signer | None:
        """A signer from a key file, a key, or None."""
        if key is None or isinstance(key, Signer):
            return key
        return cls(key if isinstance(key, Ed25519PrivateKey) else load_private(key))

    def sign(self, notification_id: int, head_hash: str) -> str:
        return base64.b64encode(self._key.sign(head_message(notification_id, head_hash))).decode()

    def mac(self, message: bytes) -> str:
        return hmac.new(self.seal_key, message, hashlib.sha256).hexdigest()


def signature_holds(public: Ed25519PublicKey, head: dict[str, Any]) -> bool:
    """Whether `head["signature"]` is `public`'s signature of the head's id and hash."""
    try:
        signature = base64.b64decode(str(head.get("signature") or ""), validate=True)
        public.verify(signature, head_message(int(head["notification_id"]), str(head["hash"])))
    except (InvalidSignature, ValueError, TypeError, KeyError):
        return False
    return True
