#!/usr/bin/env python3
# serve_clients.py - hostile and many clients against `pagemap serve`, on loopback only (see serve_stall.sh).
# Usage: serve_clients.py PORT SCENARIO [ARGS]; prints PASS/FAIL lines and figures. Every loop is bounded in
# count and in time. Loopback has all of 127.0.0.0/8: clients bind distinct source addresses to stand for
# distinct hosts (the per-client limit counts addresses).
import os
import re
import select
import socket
import statistics
import sys
import threading
import time

# The server's address: loopback, or (per-client) a TEST-NET address on the loopback of a private namespace.
HOST = os.environ.get("SERVE_HOST", "127.0.0.1")
PORT = int(sys.argv[1])
SCENARIO = sys.argv[2]
# Prometheus' default scrape timeout: an answer later than this is a failed scrape (a benchmark, or a test of an
# ASan build on a loaded machine, may wait longer: serve_stall.sh sets it for ASan builds)
PROM_TIMEOUT = float(os.environ.get("SERVE_CLIENT_TIMEOUT", "10"))
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"


def ok(name):
    print("PASS " + name, flush=True)


def bad(name, why):
    print("FAIL %s: %s" % (name, why), flush=True)


def connect(src=None, timeout=PROM_TIMEOUT):
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((src or HOST, 0))
    s.connect((HOST, PORT))
    return s


def read_all(s, deadline):
    """Everything the server sends until it closes, or until @deadline (monotonic)."""
    data = b""
    while time.monotonic() < deadline:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            b = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            break
        if not b:
            break
        data += b
    return data


def scrape(src=None):
    """One scrape as Prometheus makes it: (status, body, seconds), status 0 when it failed or passed PROM_TIMEOUT."""
    t0 = time.monotonic()
    try:
        s = connect(src)
        s.sendall(REQUEST)
        data = read_all(s, t0 + PROM_TIMEOUT)
        s.close()
    except OSError:
        return 0, b"", time.monotonic() - t0
    dt = time.monotonic() - t0
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.[01] (\d+)", head)
    status = int(m.group(1)) if m else 0
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    if status == 200 and (dt > PROM_TIMEOUT or (length and len(body) < int(length.group(1)))):
        status = 0
    return status, body, dt


def walks():
    st, body, _ = scrape()
    m = re.search(rb"(?m)^pagemap_scrape_walks_total (\d+)", body)
    return int(m.group(1)) if st == 200 and m else None


HEADER_DEADLINE = 5  # serve's: seconds from accept to the end of the headers
# A trickling connection alive this long was not cut at the deadline: its margin covers the guard's tick and a
# loaded machine (the cut is seen at once: each trickler polls for the server's end between its bytes).
UNCUT_LIMIT = HEADER_DEADLINE + 3


def slowloris(conns, seconds, src):
    """@conns connections trickle header bytes (one every 0.5 s) and reconnect when dropped, for @seconds, half
    of them from 127.0.0.1..8 and half from 127.0.0.1 as a local user's would (@src "local": all from
    127.0.0.1; an address: all, and the scrapes, from it); meanwhile 5 scrapes spread over the run must each
    answer within Prometheus' timeout, and (when the run is long enough to tell) no trickling connection may
    outlive the deadline by UNCUT_LIMIT (the server cuts them)."""
    stop = time.monotonic() + seconds
    lives, uncut = [], []
    lock = threading.Lock()
    one = src if src not in (None, "local") else None

    def trickle(i):
        if one:
            addr = one
        else:
            addr = "127.0.0.%d" % (1 + i % 8) if i % 2 and src != "local" else "127.0.0.1"
        while time.monotonic() < stop:
            t0 = time.monotonic()
            try:
                s = connect(addr, timeout=1)
                s.sendall(b"GET /metrics HTTP/1.1\r\nX-Slow: ")
                while time.monotonic() < stop:
                    s.sendall(b"a")
                    # the server's end (a cut) shows as readable: seen now, not two writes later
                    if select.select([s], [], [], min(0.5, max(0, stop - time.monotonic())))[0]:
                        s.recv(1)
                        raise ConnectionResetError("cut")
                with lock:
                    uncut.append(time.monotonic() - t0)
                s.close()
                return
            except OSError:
                with lock:
                    lives.append(time.monotonic() - t0)
                time.sleep(0.2)

    ts = [threading.Thread(target=trickle, args=(i,), daemon=True) for i in range(conns)]
    for t in ts:
        t.start()
    time.sleep(1)
    got = []
    gap = max(0.2, (seconds - 2) / 5)
    for _ in range(5):
        t1 = time.monotonic()
        st, _, dt = scrape(one)
        got.append((st, dt))
        time.sleep(max(0, gap - (time.monotonic() - t1)))
    for t in ts:
        t.join(max(0, stop - time.monotonic()) + 5)
    good = sum(1 for st, dt in got if st == 200)
    print("slowloris: %d connections trickling for %.0f s%s: %d of 5 scrapes answered within %.0f s (%s); "
          "%d trickling connections cut by the server (the longest lived %.1f s); at the end %d uncut, "
          "the oldest %.1f s old"
          % (conns, seconds, " from " + one if one else "", good, PROM_TIMEOUT,
             ", ".join("%d/%.2fs" % g for g in got), len(lives), max(lives) if lives else 0, len(uncut),
             max(uncut) if uncut else 0))
    if good == 5:
        ok("serve-slowloris-scrapes")
    else:
        bad("serve-slowloris-scrapes", "%d of 5 scrapes answered within %.0f s" % (good, PROM_TIMEOUT))
    if seconds < UNCUT_LIMIT + 2:
        return  # too short to tell a connection the server never cut from one it cut late
    old = [u for u in uncut if u > UNCUT_LIMIT]
    if lives and not old:
        ok("serve-slowloris-deadline")
    else:
        bad("serve-slowloris-deadline", "%d connections trickling header bytes lived to the end, the oldest %.1f s"
            % (len(old), max(old) if old else 0))


def sendclose(conns):
    """@conns connections send a request and close at once; then a scrape must answer within the timeout."""
    for _ in range(conns):
        try:
            s = connect()
            s.sendall(REQUEST)
            s.close()
        except OSError:
            pass
    st, _, dt = scrape()
    print("send-close: after %d connect-send-close, a scrape: status %d in %.2f s" % (conns, st, dt))
    if st == 200:
        ok("serve-send-close")
    else:
        bad("serve-send-close", "status %d after %.1f s" % (st, dt))


def concurrent(n, addrs, period):
    """@n scrapes at once from @addrs source addresses: all answer within the timeout, and the walks
    counter grows by at most one per cache @period (seconds) of the run, plus one."""
    w0 = walks()
    time.sleep(period + 0.1)  # the cached walk is stale: the first of the @n walks, the others share it
    res = [None] * n
    go = threading.Event()

    def one(i):
        go.wait()
        res[i] = scrape("127.0.0.%d" % (1 + i % addrs))

    ts = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in ts:
        t.start()
    t0 = time.monotonic()
    go.set()
    for t in ts:
        t.join(PROM_TIMEOUT + 20)
    wall = time.monotonic() - t0
    w1 = walks()
    times = sorted(r[2] for r in res if r)
    good = sum(1 for r in res if r and r[0] == 200)
    p50 = statistics.median(times) if times else 0
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] if times else 0
    print("concurrent: %d scrapes from %d addresses: %d answered 200 within %.0f s; wall %.2f s, p50 %.2f s, "
          "p99 %.2f s, max %.2f s; walks %s -> %s" % (n, addrs, good, PROM_TIMEOUT, wall, p50, p99,
                                                     times[-1] if times else 0, w0, w1))
    if good == n:
        ok("serve-concurrent")
    else:
        bad("serve-concurrent", "%d of %d scrapes answered within %.0f s" % (good, n, PROM_TIMEOUT))
    limit = int(wall / period) + 2 if period > 0 else n  # + the stale walk and the final read
    if w0 is not None and w1 is not None and w1 - w0 <= limit:
        ok("serve-concurrent-one-walk")
    else:
        bad("serve-concurrent-one-walk", "walks counter %s -> %s over %.1f s (at most %d)" % (w0, w1, wall, limit))


def pipeline(n, bound):
    """@n requests in one write on one connection: at most @bound responses."""
    s = connect()
    s.sendall(REQUEST * n)
    data = read_all(s, time.monotonic() + 20)
    s.close()
    got = len(re.findall(rb"HTTP/1\.[01] \d{3} ", data))
    print("pipeline: %d requests on one connection, %d responses" % (n, got))
    if 1 <= got <= bound:
        ok("serve-pipeline-bounded")
    else:
        bad("serve-pipeline-bounded", "%d responses to %d pipelined requests (want 1..%d)" % (got, n, bound))


def per_client_round(n, src):
    """One round of per_client: (connections answered, the other scrape's status and seconds, and the seconds
    from the connects to the requests)."""
    socks = []
    t0 = time.monotonic()
    for _ in range(n):
        try:
            socks.append(connect(src, timeout=1))
        except OSError:
            pass
    time.sleep(1)  # the server accepts (and refuses) them all
    st, _, dt = scrape()
    answered = 0
    for s in socks:
        try:
            s.sendall(REQUEST)
        except OSError:
            pass
    sent = time.monotonic() - t0
    for s in socks:
        if read_all(s, time.monotonic() + PROM_TIMEOUT).startswith(b"HTTP/1.1 200"):
            answered += 1
        s.close()
    return answered, st, dt, sent


def per_client(n, limit, src):
    """@n idle connections from address @src: at most @limit get a response once they ask, and a scrape from
    another address is answered meanwhile. The count says something only if the requests went out before
    serve's header deadline: a round whose scrape was held up past it (a CI run once saw one take 16 s, its
    machine stalled) cut every idle connection, rightly; such a round is said and made again, twice at most."""
    for _ in range(3):
        answered, st, dt, sent = per_client_round(n, src)
        print("per-client: %d connections from %s, %d answered; meanwhile a scrape from %s: status %d in %.2f s"
              % (n, src, answered, HOST, st, dt))
        if sent < HEADER_DEADLINE:
            break
        print("  the requests went out %.1f s after the connects, past serve's header deadline (%d s): "
              "the idle connections were cut as they should be; again" % (sent, HEADER_DEADLINE))
    if sent >= HEADER_DEADLINE:
        bad("serve-per-client-limit", "every round's requests went out past the header deadline (the last "
            "after %.1f s): the other address's scrape was held up %.1f s" % (sent, dt))
    elif 1 <= answered <= limit:
        ok("serve-per-client-limit")
    else:
        bad("serve-per-client-limit", "%d of %d connections from one address answered (want 1..%d)"
            % (answered, n, limit))
    if st == 200:
        ok("serve-per-client-other")
    else:
        bad("serve-per-client-other", "a scrape from another address: status %d after %.1f s" % (st, dt))


if SCENARIO == "slowloris":
    slowloris(int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
elif SCENARIO == "sendclose":
    sendclose(int(sys.argv[3]))
elif SCENARIO == "concurrent":
    concurrent(int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
elif SCENARIO == "pipeline":
    pipeline(int(sys.argv[3]), int(sys.argv[4]))
elif SCENARIO == "per-client":
    per_client(int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
else:
    sys.exit("unknown scenario " + SCENARIO)
