"""A second, "remote" Docker engine for the TCP+TLS tests: the machine's dockerd on a loopback port.

`make_certificates` writes a CA, a server certificate for 127.0.0.1 and a client
certificate with openssl, plus a second, unrelated CA and client pair for the
wrong-certificate cases. `RemoteEngine` starts dockerd with its own data-root,
exec-root and pidfile (so it never touches the engine on /tmp/dockerd.agentls),
listening only on tcp://127.0.0.1:PORT with --tlsverify; `load_image` copies the
sandbox image into it from the running engine (docker save | docker load
through the SDK); `stop` ends that dockerd (by its pid) and removes its
directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import docker
from docker.tls import TLSConfig


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _issue(folder: Path, ca: str, name: str, subject: str, extensions: str) -> None:
    """`name`-key.pem and `name`-cert.pem signed by `ca`-key.pem / `ca`.pem."""
    (folder / f"{name}.ext").write_text(extensions)
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-subj", subject, "-keyout", f"{name}-key.pem", "-out", f"{name}.csr", cwd=folder)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}-key.pem",
             "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}-cert.pem", cwd=folder)


def _ca(folder: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", f"{name}-key.pem", "-out", f"{name}.pem",
             cwd=folder)


def _client_dir(folder: Path, target: str, ca: str, client: str) -> Path:
    """A DOCKER_CERT_PATH directory: ca.pem, cert.pem, key.pem."""
    out = folder / target
    out.mkdir()
    shutil.copy(folder / f"{ca}.pem", out / "ca.pem")
    shutil.copy(folder / f"{client}-cert.pem", out / "cert.pem")
    shutil.copy(folder / f"{client}-key.pem", out / "key.pem")
    return out


def make_certificates(folder: Path) -> dict[str, Path]:
    """Server files and three client DOCKER_CERT_PATH dirs: good, wrong CA, and a client the engine does not trust."""
    folder.mkdir(parents=True, exist_ok=True)
    _ca(folder, "ca")
    _ca(folder, "other-ca")
    _issue(folder, "ca", "server", "/CN=127.0.0.1",
           "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _issue(folder, "ca", "client", "/CN=agentls-test-client", "extendedKeyUsage=clientAuth\n")
    _issue(folder, "other-ca", "stranger", "/CN=agentls-stranger", "extendedKeyUsage=clientAuth\n")
    return {
        "good": _client_dir(folder, "client-good", "ca", "client"),
        "wrong_ca": _client_dir(folder, "client-wrong-ca", "other-ca", "client"),
        "untrusted_client": _client_dir(folder, "client-untrusted", "ca", "stranger"),
    }


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RemoteEngine:
    """dockerd on tcp://127.0.0.1:PORT with TLS, in a directory of its own."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentls-tls-", dir="/tmp"))  # short: socket paths live under it
        self.certs = make_certificates(self.root / "certs")
        self.port = free_port()
        self.host = f"tcp://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 90.0) -> None:
        server = self.root / "certs"
        (self.root / "daemon.json").write_text("{}")
        argv = ["dockerd", "--config-file", str(self.root / "daemon.json"),
                "--iptables=false", "--ip6tables=false", "--bridge=none",
                "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
                "--pidfile", str(self.root / "dockerd.pid"), "-H", self.host,
                "--tlsverify", "--tlscacert", str(server / "ca.pem"),
                "--tlscert", str(server / "server-cert.pem"), "--tlskey", str(server / "server-key.pem")]
        with open(self.root / "dockerd.log", "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dockerd exited: {self.log_tail()}")
            try:
                client = self.client()
                client.ping()
                client.close()
                return
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.3)
        raise RuntimeError(f"dockerd did not answer on {self.host} within {timeout_s} s: {self.log_tail()}")

    def client(self) -> docker.DockerClient:
        good = self.certs["good"]
        tls = TLSConfig(client_cert=(str(good / "cert.pem"), str(good / "key.pem")), ca_cert=str(good / "ca.pem"),
                        verify=True)
        # A fixed API version means no request in the constructor, so trust_env can be cleared first:
        # requests would otherwise let REQUESTS_CA_BUNDLE replace the CA file (see docker/engine.py, _EngineAPI).
        client = docker.DockerClient(base_url=self.host, tls=tls, timeout=120, version="1.41")
        client.api.trust_env = False
        return client

    def load_image(self, source_host: str, image: str) -> None:
        """Copy `image` from the engine at `source_host` (docker save there, docker load here)."""
        archive = self.root / "image.tar"
        source = docker.DockerClient(base_url=source_host, timeout=600)
        try:
            with open(archive, "wb") as out:
                for chunk in source.images.get(image).save(named=True):
                    out.write(chunk)
        finally:
            source.close()
        target = self.client()
        try:
            with open(archive, "rb") as data:
                target.images.load(data)
        finally:
            target.close()
        archive.unlink()

    def env(self, cert_dir: Path | None = None) -> dict[str, str]:
        """DOCKER_* variables that point the docker CLI, the SDK and agentls at this engine."""
        return {"DOCKER_HOST": self.host, "DOCKER_TLS_VERIFY": "1",
                "DOCKER_CERT_PATH": str(cert_dir or self.certs["good"])}

    def log_tail(self) -> str:
        try:
            return (self.root / "dockerd.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM our dockerd (it stops its own containerd), wait, then remove its directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        subprocess.run(["rm", "-rf", "--one-file-system", str(self.root)], check=False, timeout=120)

    def leftover_processes(self) -> list[str]:
        """Processes still running from this engine's directory (dockerd or its containerd)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if str(self.root) in cmdline and os.getpid() != int(entry.name):
                    found.append(cmdline)
        return found
