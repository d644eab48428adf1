#!/usr/bin/env python3
"""A minimal token service (distribution's token auth spec) over TLS on 127.0.0.1, for testing
hwimg's bearer flow against Debian's docker-registry.

  token_server.py --dir DIR --port-file FILE --user U --password-file F --refresh-token T [--log FILE]

DIR holds the registry's cert.pem/key.pem (created by run-registry.sh, possibly after this
starts: they are read at the first connection). Tokens are RS256 JWTs carrying the certificate in
`x5c`, issuer "hwimg-test-issuer", audience "hwimg-test-registry". GET with Basic credentials
(or no credentials: anonymous, granted nothing) and the OAuth2 POST with a refresh token are
served. Every token request is logged as one line: method, grant, scopes; never a secret.
"""
import argparse
import base64
import http.server
import json
import os
import ssl
import subprocess
import threading
import time
import urllib.parse

ISSUER = "hwimg-test-issuer"
SERVICE = "hwimg-test-registry"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--refresh-token", required=True)
    parser.add_argument("--log", default=os.devnull)
    args = parser.parse_args()
    lock = threading.Lock()
    log = open(args.log, "a", buffering=1)
    cache = {}

    def material():
        with lock:
            if not cache:
                cert = os.path.join(args.dir, "cert.pem")
                der = subprocess.run(["openssl", "x509", "-in", cert, "-outform", "DER"], check=True,
                                     capture_output=True).stdout
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.load_cert_chain(cert, os.path.join(args.dir, "key.pem"))
                cache.update(x5c=base64.b64encode(der).decode(), context=context)
            return cache

    def sign(claims):
        header = {"typ": "JWT", "alg": "RS256", "x5c": [material()["x5c"]]}
        signing_input = (b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())).encode()
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", os.path.join(args.dir, "key.pem")],
                                   input=signing_input, check=True, capture_output=True).stdout
        return signing_input.decode() + "." + b64url(signature)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def issue(self, grant, subject, scopes, service):
            with lock:
                log.write("%s %s %s scopes=%s\n" % (self.command, grant, subject or "anonymous", " ".join(scopes)))
            if service != SERVICE:
                return self.answer(400, {"error": "unknown service"})
            access = []
            for scope in scopes if subject else []:
                kind, rest = scope.split(":", 1)
                name, actions = rest.rsplit(":", 1)
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
            now = int(time.time())
            token = sign({"iss": ISSUER, "sub": subject, "aud": SERVICE, "exp": now + 300, "nbf": now - 10,
                          "iat": now, "jti": b64url(os.urandom(12)), "access": access})
            self.answer(200, {"token": token, "access_token": token, "expires_in": 300})

        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query)
            scopes = [s for value in query.get("scope", []) for s in value.split(" ") if s]
            subject = ""
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
                with open(args.password_file) as f:
                    expected = f.read().strip()
                if user != args.user or password != expected:
                    with lock:
                        log.write("GET rejected credentials\n")
                    return self.answer(401, {"details": "invalid username or password"})
                subject = user
            self.issue("basic" if subject else "anonymous", subject, scopes, query.get("service", [""])[0])

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            if form.get("grant_type", [""])[0] != "refresh_token" or \
                    form.get("refresh_token", [""])[0] != args.refresh_token:
                with lock:
                    log.write("POST rejected refresh token\n")
                return self.answer(401, {"error": "invalid_grant"})
            scopes = [s for s in form.get("scope", [""])[0].split(" ") if s]
            self.issue("refresh_token", args.user, scopes, form.get("service", [""])[0])

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def get_request(self):
            sock, address = super().get_request()
            return material()["context"].wrap_socket(sock, server_side=True), address

        def handle_error(self, request, client_address):
            pass

    server = Server(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
