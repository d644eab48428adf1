#!/usr/bin/env python3
"""A TCP forwarder on a loopback address that makes a local registry look remote: every byte is
delivered a fixed one-way delay after it arrived, in each direction, in order, so a client sees
a round trip of --rtt-ms more than on loopback (bench/remote, tests/integration/test_remote.sh).
TLS passes through untouched: it works at the TCP level.

  delay_proxy.py --upstream HOST:PORT [--listen 127.0.0.1:0] [--port-file FILE]
                 [--rtt-ms MS] [--no-connect-delay] [--rate-mib N] [--log FILE]

--rtt-ms: the round trip added (half of it each way; default 0). Each chunk read is delivered at
  its arrival time plus the one-way delay: delays are not serialised, so a stream of chunks costs
  the delay once, not once per chunk. A new connection also costs one round trip, as TCP's
  handshake does on a real network (here the kernel completes it on loopback at once): what the
  client sends is delivered no sooner than one round trip plus the one-way delay after the
  connection was accepted. --no-connect-delay leaves that out.
--rate-mib: a bandwidth limit in MiB/s per connection and direction (a link of that rate: a chunk
  is sent once the link is free, takes size/rate, and arrives the one-way delay later). Reading
  pauses while the link is more than 50 ms behind, so the sender feels back-pressure.
--port-file: written (the port alone) once listening.
--log: one line when a connection opens and one when it closes, with the bytes each way:
    open ID client=PORT
    close ID up=BYTES down=BYTES seconds=S
  (up: client to upstream). Counting connections: grep -c '^open '.
Only loopback addresses (127.0.0.0/8, ::1, localhost) may be listened on or forwarded to.
SIGTERM or SIGINT closes every connection and exits 0.
"""
import argparse
import asyncio
import ipaddress
import os
import signal
import socket
import sys
import time

CHUNK = 64 * 1024
QUEUE_LIMIT = 8 << 20  # bytes read but not yet delivered, per direction, before reading pauses
RATE_WINDOW = 0.05  # with --rate-mib, how far ahead of the link reading may run (seconds)


def loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_port(text, what):
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise SystemExit(f"delay_proxy: {what} must be HOST:PORT, got {text!r}")
    host = host.strip("[]")
    if not loopback(host):
        raise SystemExit(f"delay_proxy: {what} must be a loopback address, got {host!r}")
    return host, int(port)


class Direction:
    """One direction of one connection: reads chunks, delivers each at arrival + delay."""

    def __init__(self, reader, writer, delay, rate, abort, not_before=0.0):
        self.reader, self.writer, self.delay, self.rate, self.abort = reader, writer, delay, rate, abort
        self.not_before = not_before  # the loop time before which nothing is sent (the handshake)
        self.queue = asyncio.Queue()
        self.queued = 0
        self.room = asyncio.Event()
        self.room.set()
        self.bytes = 0
        self.link_free = 0.0

    async def read(self):
        loop = asyncio.get_running_loop()
        try:
            while True:
                await self.room.wait()
                data = await self.reader.read(CHUNK)
                now = loop.time()
                if not data:
                    break
                self.bytes += len(data)
                sent = max(now, self.not_before)
                if self.rate:
                    self.link_free = max(self.link_free, sent) + len(data) / self.rate
                    sent = self.link_free
                self.queued += len(data)
                if self.queued >= QUEUE_LIMIT:
                    self.room.clear()
                self.queue.put_nowait((sent + self.delay, data))
                if self.rate and self.link_free - now > RATE_WINDOW:
                    await asyncio.sleep(self.link_free - now - RATE_WINDOW)
        except (ConnectionError, OSError):
            pass
        finally:
            self.queue.put_nowait((loop.time() + self.delay, None))

    async def deliver(self):
        loop = asyncio.get_running_loop()
        try:
            while True:
                due, data = await self.queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if data is None:
                    if self.writer.can_write_eof():
                        self.writer.write_eof()
                    return
                self.writer.write(data)
                self.queued -= len(data)
                if self.queued < QUEUE_LIMIT:
                    self.room.set()
                await self.writer.drain()
        except (ConnectionError, OSError):
            self.abort()  # the other end is gone: end both directions


def nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True, metavar="HOST:PORT")
    parser.add_argument("--listen", default="127.0.0.1:0", metavar="HOST:PORT")
    parser.add_argument("--port-file", default="")
    parser.add_argument("--rtt-ms", type=float, default=0.0)
    parser.add_argument("--no-connect-delay", action="store_true")
    parser.add_argument("--rate-mib", type=float, default=0.0)
    parser.add_argument("--log", default=os.devnull)
    args = parser.parse_args()
    up_host, up_port = host_port(args.upstream, "--upstream")
    listen_host, listen_port = host_port(args.listen, "--listen")
    if args.rtt_ms < 0 or args.rate_mib < 0:
        raise SystemExit("delay_proxy: --rtt-ms and --rate-mib must not be negative")
    delay = args.rtt_ms / 2000.0
    rate = args.rate_mib * (1 << 20)
    connect_delay = 0.0 if args.no_connect_delay else 2 * delay
    log = open(args.log, "a", buffering=1)
    asyncio.run(serve(listen_host, listen_port, up_host, up_port, delay, connect_delay, rate, args.port_file, log))


async def serve(listen_host, listen_port, up_host, up_port, delay, connect_delay, rate, port_file, log):
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    connections = set()
    counter = [0]

    async def handle(client_reader, client_writer):
        counter[0] += 1
        cid = counter[0]
        peer = client_writer.get_extra_info("peername")
        log.write(f"open {cid} client={peer[1] if peer else '?'}\n")
        started = time.monotonic()
        accepted = loop.time()
        nodelay(client_writer)
        up = down = None
        upstream_writer = None
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(up_host, up_port)
            nodelay(upstream_writer)

            def abort():
                client_writer.transport.abort()
                upstream_writer.transport.abort()

            up = Direction(client_reader, upstream_writer, delay, rate, abort, accepted + connect_delay)
            down = Direction(upstream_reader, client_writer, delay, rate, abort)
            await asyncio.gather(up.read(), up.deliver(), down.read(), down.deliver())
        except (ConnectionError, OSError) as e:
            log.write(f"error {cid} upstream {up_host}:{up_port}: {e}\n")
        finally:
            for w in (client_writer, upstream_writer):
                if w is not None:
                    w.close()
            log.write(f"close {cid} up={up.bytes if up else 0} down={down.bytes if down else 0} "
                      f"seconds={time.monotonic() - started:.3f}\n")

    def track(reader, writer):
        task = asyncio.ensure_future(handle(reader, writer))
        connections.add(task)
        task.add_done_callback(connections.discard)

    server = await asyncio.start_server(track, listen_host, listen_port)
    port = server.sockets[0].getsockname()[1]
    if port_file:
        tmp = port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, port_file)
    await stop.wait()
    server.close()
    for task in list(connections):
        task.cancel()
    await asyncio.gather(*connections, return_exceptions=True)
    log.close()


if __name__ == "__main__":
    sys.exit(main())
