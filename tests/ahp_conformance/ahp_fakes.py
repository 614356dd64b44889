"""What ``copilot --ahp-host`` needs besides the model, on 127.0.0.1: a GitHub that knows one user,
and the sealed envelope its ``authenticate`` takes.

Copilot CLI's AHP host refuses ``createSession`` until the client authenticates for the GitHub
API it advertises (``-32007``), even offline; it takes the token only sealed to a key it publishes
in the root state's ``_meta`` (``copilot.encryptionKeys``) and bound to the connection's challenge
(``initialize``'s ``_meta`` ``copilot.authChallenge``); it then checks the token against the
GitHub API (``GET /user``), and a session checks it again and asks the Copilot API for the user's
endpoints and models. So:

- :class:`FakeGitHub` answers those requests over HTTPS (a self-signed certificate made for the
  run, which the CLI trusts through ``SSL_CERT_FILE``; it takes the GitHub host from ``GH_HOST``),
  names itself as the Copilot API, offers one model, and passes ``/chat/completions`` on to the
  scripted model (:class:`real_agents.models.ChatCompletionsModel`), whose record of what reached
  the model stays the one to read.
- :func:`seal` makes the envelope (``copilot-sealed.v1.KEY.BODY``: HPKE X25519 / HKDF-SHA256 /
  AES-256-GCM, empty info, of ``{cty, ctx: {purpose, resource, connection: {challenge, nonce,
  issuedAt}}, value}``).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import secrets
import ssl
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, hpke, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
from cryptography.x509.oid import NameOID

__all__ = ["MODEL_NAME", "USER", "FakeGitHub", "seal"]

MODEL_NAME: Final = "test-model"
USER: Final = {"login": "tester", "id": 1, "type": "User", "name": "Tester"}
_SEALED_PREFIX: Final = "copilot-sealed.v1"
_SUITE: Final = hpke.Suite(hpke.KEM.X25519, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM)
_FORWARD_TIMEOUT: Final = 60.0


def _model_entry() -> dict[str, Any]:
    return {
        "id": MODEL_NAME,
        "name": "Test Model",
        "object": "model",
        "vendor": "test",
        "version": MODEL_NAME,
        "preview": False,
        "model_picker_enabled": True,
        "is_chat_default": True,
        "is_chat_fallback": True,
        "capabilities": {
            "family": MODEL_NAME,
            "object": "model_capabilities",
            "type": "chat",
            "tokenizer": "o200k_base",
            "limits": {"max_prompt_tokens": 100000, "max_output_tokens": 4096, "max_context_window_tokens": 128000},
            "supports": {"streaming": True, "tool_calls": True, "parallel_tool_calls": True},
        },
        "policy": {"state": "enabled", "terms": ""},
        "supported_endpoints": ["/chat/completions"],
    }


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, valid for two days; (certificate, key) files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "fake-github.pem", folder / "fake-github.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


class FakeGitHub:
    """GitHub and the Copilot API for one user, over HTTPS on 127.0.0.1; a context manager.

    ``model_origin``: where ``/chat/completions`` goes on (the scripted model's origin).
    :attr:`requests` is every path asked, in order.
    """

    def __init__(self, folder: Path, model_origin: str) -> None:
        self.certificate, key = _certificate(folder)
        self.model_origin = model_origin
        self.requests: list[str] = []
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.certificate, key)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-github", daemon=True
        )

    @property
    def host(self) -> str:
        """``127.0.0.1:PORT``: the CLI's ``GH_HOST``."""
        host, port = self._server.server_address[:2]
        return f"{host!s}:{port}"

    def env(self) -> dict[str, str]:
        """What points the CLI here and makes it trust this server's certificate."""
        return {"GH_HOST": self.host, "SSL_CERT_FILE": str(self.certificate)}

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _answer(self, path: str) -> Any:
        origin = f"https://{self.host}"
        if path.startswith("/copilot_internal/user"):
            endpoints = {"api": origin, "proxy": origin, "telemetry": origin, "origin-tracker": origin}
            return {**USER, "chat_enabled": True, "copilot_plan": "individual", "endpoints": endpoints}
        if path.startswith("/models"):
            return {"data": [_model_entry()]}
        if path.startswith("/copilot_internal/"):
            return {}
        return USER

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                fake.requests.append(f"GET {self.path}")
                self._send(200, json.dumps(fake._answer(self.path)).encode())

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                fake.requests.append(f"POST {self.path}")
                if not self.path.split("?")[0].endswith("/chat/completions"):
                    self._send(404, b"{}")
                    return
                forwarded = urllib.request.Request(
                    f"{fake.model_origin}/v1/chat/completions", data=body, headers={"content-type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(forwarded, timeout=_FORWARD_TIMEOUT) as answer:
                        self._send(answer.status, answer.read(), answer.headers.get("content-type", "application/json"))
                except (OSError, BrokenPipeError):
                    pass  # the CLI went away, or the model did: the run's own checks say so

        return Handler


def seal(initialized: dict[str, Any], root_state: dict[str, Any], resource: str, token: str) -> str:
    """``token`` sealed for ``resource`` to the host's ``auth-token`` HPKE key (from the root
    state's ``_meta``), bound to the challenge of ``initialized`` (the ``initialize`` result)."""
    keys = (root_state.get("_meta") or {}).get("copilot.encryptionKeys") or []
    key = next(k for k in keys if k.get("use") == "auth-token" and str(k.get("algorithm", "")).startswith("hpke"))
    challenge = initialized["_meta"]["copilot.authChallenge"]["challenge"]
    connection = {"challenge": challenge, "nonce": secrets.token_hex(16), "issuedAt": int(time.time())}
    context = {"purpose": "auth-token", "resource": resource, "connection": connection}
    plaintext = {"cty": "text", "ctx": context, "value": token}
    public = X25519PublicKey.from_public_bytes(base64.b64decode(key["publicKey"]))
    box = _SUITE.encrypt(json.dumps(plaintext).encode(), public, info=b"")
    return f"{_SEALED_PREFIX}.{key['keyId']}.{base64.urlsafe_b64encode(box).rstrip(b'=').decode()}"
