#!/usr/bin/env python3
"""A plain-HTTP proxy on 127.0.0.1 between hwimg and a local registry, for the fault tests.

  registry_proxy.py --upstream 127.0.0.1:PORT --port-file FILE [--fault-rate 0.2] [--seed 1]
                    [--tamper MODE] [--hang-after-uploads N] [--stall-blob-gets N] [--log FILE]

--fault-rate: that share of requests gets one fault, drawn at random: the connection dropped
  before or after forwarding, an answer of 500 or 503 (with Retry-After) without forwarding, or
  the answer's body cut in half.
--tamper: rewrites manifest GET answers: wrong-digest (body changed, header digest kept),
  oversize (a 5 MiB body), huge-error (a 404 with a 5 MiB JSON error body), invalid-json,
  unknown-type (an unregistered Content-Type); or blob GET answers: corrupt-blob (the last byte
  flipped, length and headers kept).
--retry-after-date N: the first N requests get 503 with Retry-After as an HTTP-date 3 s ahead.
--redirect-blobs URL: blob GETs and HEADs the registry answers 200 are answered 307 to
  URL/<digest>?X-Amz-Signature=s3cr3t instead, as registries send clients to blob storage.
--storage DIR: no proxy: "blob storage" on another port serving GET/HEAD .../<digest> from the
  registry's data DIR; every request is logged with the Authorization scheme it carried
  (auth=none, auth=Basic, auth=Bearer); /token answers a 2 MiB token. With --challenge REALM it
  answers every request 401 with `WWW-Authenticate: Bearer realm="REALM"` instead.
--paginate-tags N: tags/list answers carry at most N tags (or the n the request asks for), sorted,
  with a relative `Link: <...>; rel="next"` to the rest, as distribution 3 pages (2.8.2 itself
  ignores n and last).
--hang-after-uploads N: after N finished blob uploads (PUT answered 201) every later request
  gets no answer; the file FILE.hung appears beside the port file.
--oci-subject: a stored manifest whose JSON has a "subject" is answered with `OCI-Subject: <its
  digest>`, as a registry with the referrers API answers (distribution-spec 1.1); only that header.
--refuse-subject: manifest PUTs whose JSON has a "subject" are answered 400 MANIFEST_INVALID without
  forwarding, as registries that predate image-spec 1.1 refuse referrers.
--stall-blob-gets N: the first N GETs of blobs over 1 MiB answered 200 send their headers and half
  the body, then nothing more (the connection is held open); the file FILE.stalled appears beside
  the port file once the half has been sent.
Only loopback addresses are used; every request and fault is logged one per line.
"""
import argparse
import email.utils
import http.client
import http.server
import json
import os
import random
import re
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", default="")
    parser.add_argument("--retry-after-date", type=int, default=0)
    parser.add_argument("--redirect-blobs", default="")
    parser.add_argument("--storage", default="")
    parser.add_argument("--challenge", default="")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tamper", default="")
    parser.add_argument("--hang-after-uploads", type=int, default=-1)
    parser.add_argument("--paginate-tags", type=int, default=0)
    parser.add_argument("--stall-blob-gets", type=int, default=0)
    parser.add_argument("--fail-blob-heads", action="store_true")
    parser.add_argument("--refuse-subject", action="store_true")
    parser.add_argument("--oci-subject", action="store_true")
    parser.add_argument("--log", default=os.devnull)
    args = parser.parse_args()
    host, port = (args.upstream or "127.0.0.1:0").rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("registry_proxy: upstream must be a loopback address")
    rng = random.Random(args.seed)
    lock = threading.Lock()
    state = {"uploads": 0, "requests": 0, "faults": 0, "stalls": 0, "delays": 0}
    log = open(args.log, "a", buffering=1)

    def note(line):
        with lock:
            log.write(line + "\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def proxy_base(self):
            return "http://%s:%d" % self.server.server_address[:2]

        def handle_any(self):
            try:
                if args.storage:
                    return self.storage()
                self.forward()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def reply(self, status, headers, data=b""):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def storage(self):
            auth = (self.headers.get("Authorization") or "none").split(" ")[0]
            note("%s %s auth=%s" % (self.command, self.path.split("?")[0], auth))
            if args.challenge:
                return self.reply(401, [("WWW-Authenticate", 'Bearer realm="%s",service="storage"' % args.challenge)])
            if self.path.startswith("/token"):
                token = json.dumps({"token": "t" * (2 << 20)}).encode()
                return self.reply(200, [("Content-Type", "application/json")], token)
            digest = self.path.split("?")[0].rsplit("/", 1)[-1]
            hexa = digest.split(":", 1)[-1]
            path = os.path.join(args.storage, "docker/registry/v2/blobs/sha256", hexa[:2], hexa, "data")
            if not re.fullmatch(r"[0-9a-f]{64}", hexa) or not os.path.exists(path):
                return self.reply(404, [])
            with open(path, "rb") as f:
                self.reply(200, [("Content-Type", "application/octet-stream"), ("Docker-Content-Digest", digest)],
                           f.read())

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                state["requests"] += 1
                hang = 0 <= args.hang_after_uploads <= state["uploads"]
                fault = rng.choice(["drop-before", "drop-after", "500", "503", "truncate"]) \
                    if rng.random() < args.fault_rate else ""
                if fault:
                    state["faults"] += 1
            path = self.path
            with lock:
                delay = state["delays"] < args.retry_after_date
                state["delays"] += 1 if delay else 0
            if delay:
                note("retry-after-date %s %s" % (self.command, path.split("?")[0]))
                when = email.utils.formatdate(time.time() + 3, usegmt=True)
                payload = b'{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]}'
                return self.reply(503, [("Content-Type", "application/json"), ("Retry-After", when)], payload)
            if hang:
                note("hang %s %s" % (self.command, path.split("?")[0]))
                time.sleep(120)
                self.close_connection = True
                return
            if args.fail_blob_heads and self.command == "HEAD" and "/blobs/sha256:" in path:
                fault = "500"  # every time: a registry whose blob checks keep failing
            if fault:
                note("fault %s %s %s" % (fault, self.command, path.split("?")[0]))
            if fault == "drop-before":
                self.close_connection = True
                return
            if fault in ("500", "503"):
                payload = b'{"errors":[{"code":"UNAVAILABLE","message":"injected fault"}]}'
                self.send_response(int(fault))
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                if fault == "503":
                    self.send_header("Retry-After", "0")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
                return
            if args.refuse_subject and self.command == "PUT" and "/manifests/" in path and b'"subject"' in body:
                note("refuse-subject PUT %s" % path.split("?")[0])
                payload = b'{"errors":[{"code":"MANIFEST_INVALID","message":"manifest invalid"}]}'
                return self.reply(400, [("Content-Type", "application/json")], payload)
            upstream = http.client.HTTPConnection(host, int(port), timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            upstream.request(self.command, path, body=body if self.command not in ("GET", "HEAD") or body else None,
                             headers=headers)
            response = upstream.getresponse()
            data = response.read() if self.command != "HEAD" else b""
            out_headers = [(k, v) for k, v in response.getheaders() if k.lower() not in ("connection", "transfer-encoding")]
            upstream.close()
            note("%s %s %d" % (self.command, path.split("?")[0], response.status))
            if self.command == "PUT" and "/blobs/uploads/" in path and response.status == 201:
                with lock:
                    state["uploads"] += 1
                    if state["uploads"] == args.hang_after_uploads:
                        open(args.port_file + ".hung", "w").close()
            if fault == "drop-after":
                self.close_connection = True
                return
            blob = re.search(r"/blobs/sha256:[0-9a-f]{64}$", path.split("?")[0])
            if args.redirect_blobs and blob and self.command in ("GET", "HEAD") and response.status == 200:
                location = "%s/%s?X-Amz-Signature=s3cr3t" % (args.redirect_blobs, path.split("?")[0].rsplit("/", 1)[-1])
                note("redirect %s %s" % (self.command, path.split("?")[0]))
                return self.reply(307, [("Location", location)])
            if args.tamper == "corrupt-blob" and blob and self.command == "GET" and response.status == 200 and data:
                data = data[:-1] + bytes([data[-1] ^ 0xFF])
            elif args.tamper not in ("", "corrupt-blob") and self.command == "GET" and re.search(r"/manifests/", path) \
                    and response.status == 200:
                status, data, out_headers = tamper(args.tamper, data, out_headers)
                response.status = status
            if args.paginate_tags and self.command == "GET" and path.split("?")[0].endswith("/tags/list") \
                    and response.status == 200:
                data, link = paginate(data, path, args.paginate_tags)
                out_headers = [(k, v) for k, v in out_headers if k.lower() != "link"]
                if link:
                    out_headers.append(("Link", link))
            if args.oci_subject and self.command == "PUT" and "/manifests/" in path and response.status == 201:
                try:
                    subject = json.loads(body).get("subject", {}).get("digest")
                except ValueError:
                    subject = None
                if subject:
                    note("oci-subject PUT %s" % path.split("?")[0])
                    out_headers.append(("OCI-Subject", subject))
            upstream_base = "http://%s:%s" % (host, port)
            self.send_response(response.status)
            for k, v in out_headers:
                if k.lower() == "location":
                    v = v.replace(upstream_base, self.proxy_base())
                if k.lower() == "content-length":
                    v = str(len(data)) if self.command != "HEAD" else v
                self.send_header(k, v)
            self.end_headers()
            stall = False
            if self.command == "GET" and "/blobs/" in path and response.status == 200 and len(data) > (1 << 20):
                with lock:
                    stall = state["stalls"] < args.stall_blob_gets
                    if stall:
                        state["stalls"] += 1
            if stall:
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                note("stall GET %s after %d of %d bytes" % (path.split("?")[0], len(data) // 2, len(data)))
                open(args.port_file + ".stalled", "w").close()
                time.sleep(120)
                self.close_connection = True
                return
            if fault == "truncate" and len(data) > 1:
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    class Server(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # clients that hang up mid-request are part of the test

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


def paginate(data, path, size):
    import urllib.parse
    url = urllib.parse.urlparse(path)
    query = urllib.parse.parse_qs(url.query)
    last = query.get("last", [""])[0]
    if query.get("n", [""])[0].isdigit() and int(query["n"][0]) > 0:
        size = int(query["n"][0])
    body = json.loads(data)
    tags = sorted(t for t in body.get("tags") or [] if t > last)
    page, more = tags[:size], len(tags) > size
    body["tags"] = page
    link = '<%s?n=%d&last=%s>; rel="next"' % (url.path, size, urllib.parse.quote(page[-1])) if more else ""
    return json.dumps(body).encode(), link


def tamper(mode, data, headers):
    def without(name):
        return [(k, v) for k, v in headers if k.lower() != name]

    if mode == "wrong-digest":
        return 200, data + b" ", headers
    if mode == "oversize":
        return 200, json.dumps({"schemaVersion": 2, "padding": "x" * (5 << 20)}).encode(), without("docker-content-digest")
    if mode == "huge-error":
        body = {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "x" * (5 << 20)}]}
        return 404, json.dumps(body).encode(), without("docker-content-digest")
    if mode == "invalid-json":
        return 200, b'{"schemaVersion": 2, "manifests": [', without("docker-content-digest")
    if mode == "unknown-type":
        return 200, data, without("content-type") + [("Content-Type", "application/vnd.example.unknown+json")]
    raise SystemExit("registry_proxy: unknown --tamper mode " + mode)


if __name__ == "__main__":
    main()
