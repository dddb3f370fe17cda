"""A misbehaving HTTP client on a real socket, for the server's abort tests.

usage: raw_client.py HOST PORT PATH MODE [HEADER ...]
MODE: reset    read a little of the body, then close with a TCP reset
      close    read a little of the body, then close normally
      stall    read a little, then stop reading (keep the socket open until killed)
      abandon  send the request and close at once, before any byte of the reply
With RAW_CLIENT_FROM set, the connection comes from that local address (e.g. 127.0.0.5).
The receive buffer is kept small so the server's send buffers fill quickly, as they would
for a slow link. Prints the status line it saw (or "none").
"""
import os
import socket
import struct
import sys
import time

host, port, path, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
headers = sys.argv[5:]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
if os.environ.get("RAW_CLIENT_FROM"):
    s.bind((os.environ["RAW_CLIENT_FROM"], 0))
s.connect((host, port))
req = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n"
s.sendall(req.encode())
if mode == "abandon":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    print("none", flush=True)
    sys.exit(0)
got = b""
while len(got) < 1000:
    part = s.recv(1000)
    if not part:
        break
    got += part
print(got.split(b"\r\n", 1)[0].decode(errors="replace"), flush=True)
if mode == "reset":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
elif mode == "close":
    s.close()
elif mode == "stall":
    time.sleep(3600)
