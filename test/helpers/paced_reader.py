# A steady slow reader: one GET over a raw socket with a small receive buffer (set before
# connecting, so the kernel cannot soak up the body for it), its body read at a fixed rate.
# Usage: paced_reader.py HOST PORT PATH RATE_BYTES_PER_S [HEADER: VALUE ...]
# Prints one JSON line: the response head, the body bytes read, and the seconds it took.
# With PACED_FROM set, the connection comes from that local address (e.g. 127.0.0.5).
import json, os, socket, sys, time

host, port, path, rate = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
headers = "".join("%s\r\n" % h for h in sys.argv[5:])
RECV_BUFFER = 8192
PIECE = 4096

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECV_BUFFER)
if os.environ.get("PACED_FROM"):
    s.bind((os.environ["PACED_FROM"], 0))
s.connect((host, port))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s\r\n" % (path, headers)).encode())
buf = b""
while b"\r\n\r\n" not in buf:
    more = s.recv(PIECE)
    if not more:
        break
    buf += more
head, body = buf.split(b"\r\n\r\n", 1) if b"\r\n\r\n" in buf else (buf, b"")
got = len(body)
start = time.monotonic()
s.settimeout(60)
try:
    while True:
        # Keep to the rate: never ahead of rate x elapsed.
        ahead = got / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
        chunk = s.recv(PIECE)
        if not chunk:
            break
        got += len(chunk)
except OSError:
    pass
s.close()
print(json.dumps({"head": head.decode(errors="replace"), "got": got, "seconds": time.monotonic() - start}))
