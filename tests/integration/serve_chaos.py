#!/usr/bin/env python3
"""The moving parts of the `hwimg serve` chaos suites (tests/integration/test_serve_chaos.sh,
bench/serve-chaos), all on loopback:

  serve_chaos.py upstream --registry ADDR --port-file FILE --mode-file FILE [--port P]
      A plain-HTTP upstream in front of a real registry. Before each request it reads the mode
      file: pass (forward), stall (hold the request unanswered while the mode stays stall, then
      close), garbage (random bytes that are no HTTP, then close), oversized (a manifest GET
      answered 200 with a 6 MiB body), wrong-digest (a manifest or blob GET answered with its
      last byte changed, its headers kept). Bodies are streamed as they come. Killing it and starting it again on the same --port is
      the upstream going down and coming back.
  serve_chaos.py pull --mirror ADDR --repo R --tag T --expect DIGEST --blobs D1,D2,..
                      --threads N [--tag-share 0.4] [--rate BYTES] --stop-file FILE --report FILE
      N threads pulling through the mirror until FILE exists: the tag (its variant's manifest,
      checked against DIGEST; that share of the requests) and blobs by digest (read no faster
      than --rate bytes per second each, when given). Every answer that comes back complete with 200
      is hashed: one whose bytes do not match its digest is a wrong answer. The report (JSON)
      counts answers by outcome and keeps the time of every good one.
  serve_chaos.py slow --mirror ADDR --connections N --source ADDRESS --interval SECONDS --stop-file FILE
                      [--report FILE]
      N connections from ADDRESS, each sending a request header one byte every --interval
      seconds, reconnecting when the mirror closes one; the report counts closes.
  serve_chaos.py health --mirror ADDR --stop-file FILE --report FILE
      GET /healthz every 0.2 s with a 1 s deadline: the report has the slowest answer, the
      misses, and when answers took over 0.25 s.
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import socket
import sys
import threading
import time
import urllib.request

MANIFEST_TYPES = ",".join([
    "application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json"])


def stopped(stop_file):
    """The stop file exists, or the directory it would be in is gone (the suite ended without it)."""
    return os.path.exists(stop_file) or not os.path.isdir(os.path.dirname(os.path.abspath(stop_file)))


def read_mode(path):
    try:
        with open(path) as f:
            return f.read().strip() or "pass"
    except OSError:
        return "pass"


def run_upstream(args):
    import http.server

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def handle_one(self, method):
            mode = read_mode(args.mode_file)
            if mode == "stall":
                while read_mode(args.mode_file) == "stall":
                    time.sleep(0.2)
                self.close_connection = True
                return
            if mode == "garbage":
                self.wfile.write(os.urandom(512))
                self.close_connection = True
                return
            is_manifest = "/manifests/" in self.path
            if mode == "oversized" and method == "GET" and is_manifest:
                body = b'{"schemaVersion":2,"padding":"' + b"x" * (6 << 20) + b'"}'
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            connection = http.client.HTTPConnection(args.registry, timeout=30)
            try:
                connection.request(method, self.path, headers=headers)
                answer = connection.getresponse()
                self.send_response(answer.status)
                length = answer.getheader("Content-Length")
                for key, value in answer.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                        self.send_header(key, value)
                body = None if length is not None else answer.read()
                self.send_header("Content-Length", length if body is None else str(len(body)))
                self.end_headers()
                if method == "HEAD":
                    return
                tamper = mode == "wrong-digest" and method == "GET" and answer.status == 200 and \
                    ("/manifests/" in self.path or "/blobs/" in self.path)
                chunks = [body] if body is not None else iter(lambda: answer.read(65536), b"")
                held = b""
                for chunk in chunks:
                    # Streamed as it comes; with wrong-digest the last byte is held back and changed.
                    if held:
                        self.wfile.write(held)
                    held = chunk
                if held:
                    self.wfile.write(held[:-1] + bytes([held[-1] ^ 1]) if tamper else held)
            except OSError:
                self.close_connection = True
            finally:
                connection.close()

        def do_GET(self):
            self.handle_one("GET")

        def do_HEAD(self):
            self.handle_one("HEAD")

    class Server(http.server.ThreadingHTTPServer):
        allow_reuse_address = True
        daemon_threads = True
        request_queue_size = 256

        def handle_error(self, request, client_address):
            pass  # the mirror hanging up (it gave up on an oversized answer) is part of the game

    server = Server(("127.0.0.1", args.port), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.outcomes = {}
        self.good_times = []
        self.wrong = []

    def add(self, outcome, detail=""):
        with self.lock:
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            if outcome == "good":
                self.good_times.append(time.time())
            if outcome == "wrong":
                self.wrong.append(detail)


def fetch(mirror, path, headers, rate=0, timeout=120):
    """(status, sha256 of the body, complete, headers): complete is False when the body was cut
    short. With a rate (bytes per second) the body is read no faster, as a slow pull."""
    connection = http.client.HTTPConnection(mirror, timeout=timeout)
    try:
        connection.request("GET", path, headers=headers)
        answer = connection.getresponse()
        digest = hashlib.sha256()
        complete = True
        started = time.time()
        received = 0
        try:
            while True:
                chunk = answer.read(65536)
                if not chunk:
                    break
                digest.update(chunk)
                received += len(chunk)
                if rate:
                    ahead = received / rate - (time.time() - started)
                    if ahead > 0:
                        time.sleep(ahead)
        except http.client.IncompleteRead as e:
            digest.update(e.partial)
            complete = False
        if answer.length not in (None, 0):
            complete = False
        return answer.status, "sha256:" + digest.hexdigest(), complete, dict((k.lower(), v) for k, v in answer.getheaders())
    finally:
        connection.close()


def run_pull(args):
    counts = Counts()
    blobs = [b for b in args.blobs.split(",") if b]

    def one_round(rng):
        if rng.random() < args.tag_share or not blobs:
            path = f"/v2/{args.repo}/manifests/{args.tag}"
            status, actual, complete, headers = fetch(args.mirror, path, {"Accept": MANIFEST_TYPES})
            expected = args.expect
        else:
            expected = rng.choice(blobs)
            path = f"/v2/{args.repo}/blobs/{expected}"
            status, actual, complete, headers = fetch(args.mirror, path, {}, args.rate)
        if status != 200:
            counts.add(f"status-{status}")
        elif not complete:
            counts.add("cut-short")
        elif actual != expected:
            counts.add("wrong", f"{path}: {actual}")
        elif "docker-content-digest" in headers and headers["docker-content-digest"] != expected:
            counts.add("wrong", f"{path}: header {headers['docker-content-digest']}")
        else:
            counts.add("good")
            return True
        return False

    def worker(seed):
        rng = random.Random(seed)
        while not stopped(args.stop_file):
            try:
                if not one_round(rng):
                    time.sleep(0.1)  # as a runtime retries a failed pull, not at once
            except (OSError, http.client.HTTPException) as e:
                counts.add("error-" + type(e).__name__)
                time.sleep(0.1)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(args.report, "w") as f:
        json.dump({"outcomes": counts.outcomes, "good_times": counts.good_times, "wrong": counts.wrong[:20]}, f)


def run_slow(args):
    host, port = args.mirror.rsplit(":", 1)
    closes = [0]
    request = b"GET /v2/ HTTP/1.1\r\nHost: slow\r\nX-Padding: " + b"y" * 4096 + b"\r\n\r\n"

    def connect():
        s = socket.socket()
        s.bind((args.source, 0))
        s.setblocking(False)
        try:
            s.connect((host, int(port)))
        except BlockingIOError:
            pass
        return [s, 0]

    conns = [connect() for _ in range(args.connections)]
    while not stopped(args.stop_file):
        for entry in conns:
            s, sent = entry
            try:
                if s.recv(4096, socket.MSG_DONTWAIT) == b"":
                    raise ConnectionResetError
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                s.close()
                closes[0] += 1
                entry[:] = connect()
                continue
            try:
                s.send(request[sent % len(request):sent % len(request) + 1])
                entry[1] = sent + 1
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                pass
        time.sleep(args.interval)
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"closes": closes[0], "connections": args.connections}, f)


def run_health(args):
    worst = 0.0
    misses = []
    slow = []
    samples = 0
    while not stopped(args.stop_file):
        started = time.time()
        try:
            with urllib.request.urlopen(f"http://{args.mirror}/healthz", timeout=1) as answer:
                if answer.status != 200 or answer.read() != b"ok\n":
                    misses.append(f"{time.strftime('%H:%M:%S')}: {answer.status}")
        except OSError as e:
            misses.append(f"{time.strftime('%H:%M:%S')}: {e}")
        elapsed = time.time() - started
        samples += 1
        worst = max(worst, elapsed)
        if elapsed > 0.25:
            slow.append(f"{time.strftime('%H:%M:%S', time.localtime(started))}: {elapsed:.3f} s")
        time.sleep(0.2)
    with open(args.report, "w") as f:
        json.dump({"samples": samples, "worst_seconds": worst, "misses": misses[:20], "missed": len(misses),
                   "slow": slow[:20]}, f)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("upstream")
    p.add_argument("--registry", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file", required=True)
    p.add_argument("--mode-file", required=True)
    p = sub.add_parser("pull")
    p.add_argument("--mirror", required=True)
    p.add_argument("--repo", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--expect", required=True)
    p.add_argument("--blobs", default="")
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--tag-share", type=float, default=0.4)
    p.add_argument("--rate", type=int, default=0)
    p.add_argument("--stop-file", required=True)
    p.add_argument("--report", required=True)
    p = sub.add_parser("slow")
    p.add_argument("--mirror", required=True)
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--source", default="127.0.0.2")
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--stop-file", required=True)
    p.add_argument("--report", default="")
    p = sub.add_parser("health")
    p.add_argument("--mirror", required=True)
    p.add_argument("--stop-file", required=True)
    p.add_argument("--report", required=True)
    args = parser.parse_args()
    if args.command == "slow":
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.connections + 256)), hard))
    {"upstream": run_upstream, "pull": run_pull, "slow": run_slow, "health": run_health}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
