#!/usr/bin/env python3
"""Loopback HTTP server that misbehaves, for the trace-capture hardening
tests (t5007).  It logs every request (method, raw path with its query,
headers) as one JSON line, then, by --mode:

  redirect  answer every request with --status and Location: --to + path
  proxy     a path under /real/ is forwarded to --upstream (without /real
            and without the query) and its answer relayed; any other path
            is redirected with --status to /real + path on this server,
            unless --no-redirect, which forwards every path as it is
  trickle   send the response header one byte every --interval seconds

It binds 127.0.0.1 on a free port and writes the port to --port-file.
"""
import argparse
import json
import os
import socketserver
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--mode", required=True, choices=["redirect", "proxy", "trickle"])
ap.add_argument("--log", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--to", default="")
ap.add_argument("--status", type=int, default=307)
ap.add_argument("--upstream", default="")
ap.add_argument("--no-redirect", action="store_true")
ap.add_argument("--interval", type=float, default=0.5)
ARGS = ap.parse_args()
LOCK = threading.Lock()


def log(entry):
    with LOCK:
        with open(ARGS.log, "a") as fh:
            fh.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self, method, path, body):
        req = urllib.request.Request(ARGS.upstream + path, data=body if method == "POST" else None,
                                     method=method)
        if self.headers.get("Content-Type"):
            req.add_header("Content-Type", self.headers["Content-Type"])
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(req, timeout=30) as r:
                return self.reply(r.status, r.read(), [("Content-Type", r.headers.get("Content-Type", "text/plain"))])
        except urllib.error.HTTPError as e:
            return self.reply(e.code, e.read())

    def handle_any(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        log({"t": time.time(), "method": method, "path": self.path,
             "headers": {k.lower(): v for k, v in self.headers.items()}})
        if ARGS.mode == "redirect":
            return self.reply(ARGS.status, b"moved\n", [("Location", ARGS.to + self.path)])
        if ARGS.mode == "trickle":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"x" * 200 + b"\r\n\r\n{}"
            try:
                for i in range(len(head)):
                    self.wfile.write(head[i:i + 1])
                    self.wfile.flush()
                    time.sleep(ARGS.interval)
            except OSError:
                pass
            self.close_connection = True
            return
        path = self.path.split("?", 1)[0]
        if path.startswith("/real/"):
            return self.forward(method, path[len("/real"):], body)
        if ARGS.no_redirect:
            return self.forward(method, path, body)
        return self.reply(ARGS.status, b"moved\n", [("Location", "/real" + self.path)])

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("%d\n" % srv.server_address[1])
    os.replace(tmp, ARGS.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
