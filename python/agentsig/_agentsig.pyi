"""Type stubs of the native module ``agentsig._agentsig`` (re-exported by ``agentsig``)."""

import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._report import Report

Headers = Union[
    Sequence[Tuple[Union[str, bytes], Union[str, bytes]]],
    Mapping[Union[str, bytes], Union[str, bytes]],
    Any,  # an object with multi_items() (httpx.Headers, starlette Headers)
]
Json = Union[None, bool, int, float, str, List[Any], Tuple[Any, ...], Dict[str, Any]]
KeyLike = Union["PublicKey", "SigningKey", str, bytes, Dict[str, Any]]

__version__: str
MAX_INPUT_BYTES: int
"""Largest HTTP body, card or JWK Set accepted by a call (16 MiB)."""

class SigningKey:
    """A private key bound to one algorithm."""

    @staticmethod
    def generate(alg: str = "ES256") -> "SigningKey":
        """A new key: ``ES256`` (default), ``ES384``, ``EdDSA``, ``PS512``, ``RS256``
        (or the RFC 9421 names). Raises ``BadInput`` for an unknown name."""
    @staticmethod
    def from_pem(
        pem: Union[str, bytes], *, kid: Optional[str] = None, jwk: Optional[Union[str, bytes]] = None
    ) -> "SigningKey":
        """Load a PEM private key (PKCS#8, SEC1, PKCS#1). Its kid: ``kid``, else the one ``jwk``
        (its published JWK, or a JWK Set holding it) gives it, else its RFC 7638 thumbprint.
        Raises ``BadKey``."""
    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"], *, kid: Optional[str] = None) -> "SigningKey":
        """Load a PEM private key from a file, named as ``agentsig sign --key`` names it:
        ``kid``, else the kid ``agentsig keygen --kid`` wrote beside ``PREFIX.pem``
        (``PREFIX.jwk.json``, ``PREFIX.jwks.json``), else its RFC 7638 thumbprint.
        Raises ``BadKey``, or ``BadInput`` for a file that cannot be read."""
    @staticmethod
    def from_pkcs11(uri: Union[str, bytes], *, alg: Optional[str] = None, kid: Optional[str] = None) -> "SigningKey":
        """The private key a PKCS#11 token holds, named by an RFC 7512 ``pkcs11:`` URI:
        the module from its ``module-path`` (else ``AGENTSIG_PKCS11_MODULE``), the PIN only
        from its ``pin-source=file:/path`` or ``AGENTSIG_PKCS11_PIN``. ``alg`` is needed for
        RSA keys (``PS512``, ``RS256``); ``kid`` replaces the thumbprint. Raises ``BadKey``
        naming the cause: a URI carrying ``pin-value``, a wrong PIN, no such token or key,
        a file that is not a PKCS#11 module."""
    @property
    def kid(self) -> str:
        """The ``kid`` given, else the RFC 7638 thumbprint."""
    @property
    def thumbprint(self) -> str:
        """The RFC 7638 thumbprint of the public key (the Web Bot Auth keyid)."""
    @property
    def algorithm(self) -> str:
        """The JOSE name of the key's algorithm."""
    def public_jwk(self) -> Dict[str, Any]:
        """The public JWK (no private member); ``BadKey`` for a shared secret (HS256)."""
    def public_key(self) -> "PublicKey":
        """The public key."""
    def private_pem(self) -> Optional[str]:
        """PKCS#8 PEM of a generated key; ``None`` when the key has no such form."""

class PublicKey:
    """A public key bound to one algorithm."""

    @staticmethod
    def from_pem(pem: Union[str, bytes]) -> "PublicKey":
        """Load an SPKI PEM public key (or a JWK as JSON text). Raises ``BadKey``."""
    @staticmethod
    def from_jwk(jwk: Dict[str, Any]) -> "PublicKey":
        """Load a JWK (RFC 7517). Raises ``BadKey``."""
    @property
    def algorithm(self) -> str: ...
    @property
    def kid(self) -> Optional[str]: ...
    @property
    def thumbprint(self) -> str: ...
    def jwk(self) -> Dict[str, Any]: ...

class Verifier:
    """One verification configuration, thread-safe and reusable; releases the
    GIL while it verifies. Every ``verify_*`` returns a :class:`Report` or
    raises (``NotVerified`` with the report, ``PolicyRefused``, ``BadInput``)."""

    def __init__(
        self,
        *,
        jwks: Union[Dict[str, Any], str, bytes, "os.PathLike[str]", None] = None,
        keys: Optional[Sequence[KeyLike]] = None,
        algorithms: Optional[Sequence[str]] = None,
        max_age: Optional[int] = None,
        skew: Optional[int] = None,
        replay_store: Optional[str] = None,
        strict_low_s: bool = False,
        now: Optional[int] = None,
        agents: Optional[Sequence[str]] = None,
        agent_keys: Optional[Dict[str, Union[Sequence[KeyLike], Dict[str, Any], str, bytes]]] = None,
        fetch_directories: bool = False,
        require_directory_proof: bool = False,
        allow_private_hosts: Optional[Sequence[str]] = None,
        extra_roots_pem: Optional[Sequence[str]] = None,
        key_cache: Optional[str] = None,
        fleet_secret_file: Union[str, "os.PathLike[str]", None] = None,
        allow_uncovered_content: bool = False,
    ) -> None:
        """``jwks``/``keys``: the trusted keys (at least one); ``jwks`` is the
        JWK Set itself (dict, JSON str or bytes), or a path-like
        (``pathlib.Path``) naming the file that holds it. ``algorithms``:
        the allow-list (default every asymmetric algorithm; HS256 only when
        named). ``max_age``: largest age of an RFC 9421 ``created`` (and
        largest Web Bot Auth validity), seconds. ``skew``: tolerated clock
        difference (default 60 s). ``replay_store``: ``"memory"``, a file
        path, ``"redis://..."``/``"rediss://..."``. ``strict_low_s``: ECDSA
        signatures must be low-S. ``allow_uncovered_content``: accept a
        request or response with content whose signature does not cover
        ``content-digest`` (refused by default, as by the CLI, whose
        ``--allow-uncovered-content`` this is: anyone on the way could have
        changed the content; RFC 9421 section 7.2.8). ``now``: a fixed clock (tests).
        ``agents``: Web Bot Auth agent URLs accepted (default any whose
        signature verifies with its own key set). ``agent_keys``: each Web
        Bot Auth agent (its ``Signature-Agent`` URL) with its keys (a list or
        a JWK Set); a key verifies only the agent it is given for.
        ``fetch_directories``: Web Bot Auth keys come
        from the agents' key directories, fetched over HTTPS (SSRF-guarded);
        ``require_directory_proof``, ``allow_private_hosts`` and
        ``extra_roots_pem`` tune that fetcher. ``key_cache``: the fleet
        key-set cache (``"redis://..."``, ``"redis+cluster://..."``,
        ``"redis+sentinel://..."``) shared by every verifier of a fleet, so
        the fleet fetches an agent's key set once per freshness lifetime
        (directories, catalogs by URL); its entries are authenticated with
        the fleet secret, read from ``fleet_secret_file`` (at least 32
        bytes, writable by its owner only) or else from the
        ``AGENTSIG_FLEET_SECRET`` environment variable, never passed as a
        value."""
    @property
    def web_bot_auth_keys(self) -> bool:
        """Whether Web Bot Auth requests can be verified (``agent_keys`` or
        ``fetch_directories=True`` was given)."""
    @property
    def has_replay_store(self) -> bool:
        """Whether nonces are checked against a replay store (RFC 9421
        section 7.2.2)."""
    def with_replay_store(self, replay_store: str) -> "Verifier":
        """This verifier with the replay store ``replay_store`` (``"memory"``,
        a file path, ``"redis://..."``), every other setting kept."""
    def verify_descriptor(self, doc: bytes, jws: Union[str, bytes]) -> Report:
        """A descriptor against its detached JWS over RFC 8785 JCS."""
    def verify_card(self, card: Union[bytes, Dict[str, Any]], *, require_all: bool = False) -> Report:
        """An A2A Agent Card's embedded signatures."""
    def verify_catalog(
        self,
        catalog: Union[bytes, str, Dict[str, Any]],
        *,
        require_signed: bool = False,
        allow_unsigned: bool = False,
        jws: Optional[Union[str, bytes]] = None,
    ) -> Report:
        """An AI Catalog (JSON bytes or str, or a dict), as ``agentsig verify
        CATALOG --json`` reports it: one ``catalog.entry`` check and one
        ``details["entries"]`` result per entry. Its Trust Manifests are
        checked with this verifier's ``keys``/``jwks`` when it has some (as
        ``--key K``), else with each identity's keys resolved (a DID
        document, an HTTPS JWK Set), which needs ``fetch_directories=True``
        (``BadInput`` otherwise). ``require_signed``:
        every entry must carry a verified Trust Manifest. ``jws``: the
        catalog's detached JWS (``ai-catalog.json.jws``, over the RFC 8785
        form of the whole document), checked with the keys of
        ``host.identifier``: verified, it binds every inline artifact, as
        ``agentsig verify FILE --jws``. Raises
        ``NotVerified`` (code ``catalog.not-verified``, with ``.report``)
        when anything present does not verify, ``BadInput`` above 4 MiB or
        for JSON that is not strict, or for a ``jws`` above 1 MiB;
        ``TypeError`` for a ``jws`` that is not str or bytes."""
    def verify_catalog_url(
        self,
        url: str,
        *,
        require_signed: bool = False,
        allow_unsigned: bool = False,
        allow_private_hosts: Optional[Sequence[str]] = None,
        extra_roots_pem: Optional[Sequence[str]] = None,
    ) -> Report:
        """The AI Catalog at ``url`` (https), fetched through the SSRF-guarded
        fetcher with its nested catalogs and cards (bounded in depth,
        fetches, bytes and time), verified as :meth:`verify_catalog` does
        (the same choice of keys; the fetches share ``key_cache``).
        A catalog that cannot be fetched raises ``FetchError`` (code
        ``fetch.failed``). ``allow_private_hosts`` and ``extra_roots_pem``
        loosen the fetcher for internal catalogs and tests."""
    def verify_response(
        self,
        status: int,
        headers: Headers,
        body: bytes,
        *,
        request: Optional[Tuple[str, str, Headers, bytes]] = None,
    ) -> Report:
        """An RFC 9421-signed response, with its covered Content-Digest."""
    def verify_request(
        self,
        method: Union[str, bytes],
        url: Union[str, bytes],
        headers: Headers,
        body: Optional[bytes] = None,
        *,
        web_bot_auth: bool = False,
        authorities: Optional[Sequence[str]] = None,
        strict: bool = False,
        scheme: Optional[str] = None,
    ) -> Report:
        """An RFC 9421-signed request (an absolute URL without userinfo, or,
        with ``scheme``, the origin-form target and the one ``Host`` field;
        a fragment is refused); ``web_bot_auth=True`` requires the Web Bot
        Auth profile. ``authorities``: the site's own ``host[:port]``; a
        signature must cover one of them (RFC 9421 section 7.2.1).
        ``strict``: ``@method``, ``@path`` and a ``nonce`` are required."""
    def audit_delegation(
        self,
        tokens: Union[str, Sequence[str]],
        *,
        issuer: Union[str, Sequence[str], None] = None,
        audience: Optional[str] = None,
        deny_warnings: bool = False,
    ) -> Report:
        """An RFC 8693 delegation chain (subject token first)."""

def canonicalize(obj: Union[bytes, Json]) -> bytes:
    """RFC 8785 canonical JSON of JSON bytes or a Python object."""

def sign_descriptor(doc: bytes, key: SigningKey) -> str:
    """The compact detached JWS over the descriptor's RFC 8785 form."""

def sign_card(card: Union[bytes, Dict[str, Any]], key: SigningKey, *, force: bool = False) -> Dict[str, Any]:
    """The A2A card to publish, with the new signature appended."""

def sign_response(
    status: int,
    headers: Headers,
    body: bytes,
    key: SigningKey,
    *,
    label: str = "sig1",
    created: Optional[int] = None,
    expires_in: Optional[int] = None,
) -> List[Tuple[str, str]]:
    """The headers plus Content-Digest, Signature-Input and Signature."""

def sign_request(
    method: str,
    url: Union[str, bytes],
    headers: Headers,
    body: bytes,
    key: SigningKey,
    *,
    web_bot_auth: Optional[bool] = None,
    signature_agent: Optional[str] = None,
    expires_in: int = 300,
    components: Optional[Sequence[str]] = None,
    label: str = "sig1",
    created: Optional[int] = None,
) -> List[Tuple[str, str]]:
    """The headers plus the signature fields (the Web Bot Auth profile when
    ``signature_agent`` is given, else plain RFC 9421)."""

def parse_response(raw: bytes) -> Tuple[int, List[Tuple[str, str]], bytes]:
    """A saved raw HTTP response (``curl -si URL``) as the ``(status,
    headers, body)`` that ``Verifier.verify_response`` takes."""
