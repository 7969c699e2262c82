#!/usr/bin/env python3
"""Loopback fake of an LLM server with torch-profiler control endpoints, for
the trace-capture tests.  It imitates SGLang, vLLM, TensorRT-LLM or
TokenSpeed closely enough to drive every capture path, records every request
(method, path, headers, body, arrival time) as one JSON line, and writes a
small valid trace when the profiler stops.

It binds 127.0.0.1 on a free port and writes that port to --port-file once
it is listening.  Knobs reproduce the failures the tool must handle.
"""
import argparse
import gzip
import json
import os
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MARKERS = {
    "sglang": "python/sglang/srt/models/llama.py(10): forward",
    "vllm": "vllm/model_executor/models/llama.py(10): forward",
    "trtllm": "tensorrt_llm/_torch/models/modeling_llama.py(10): forward",
    "tokenspeed": "tokenspeed/models/llama.py(10): forward",
}

ap = argparse.ArgumentParser()
ap.add_argument("--framework", required=True, choices=sorted(MARKERS))
ap.add_argument("--log", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--trace-dir", help="vLLM/TRT: where stop_profile writes traces")
ap.add_argument("--trace-file", help="TRT: one fixed trace file (plain JSON)")
ap.add_argument("--ranks", type=int, default=1)
ap.add_argument("--start-status", type=int, default=200)
ap.add_argument("--start-body", default='{"detail": "Not Found"}')
ap.add_argument("--start-text", action="store_true",
                help="answer a successful start with text/plain, not JSON")
ap.add_argument("--stop-status", type=int, default=200)
ap.add_argument("--stop-body", default='{"detail": "stop failed"}')
ap.add_argument("--chat-status", type=int, default=200)
ap.add_argument("--models", default="ok", choices=["ok", "404", "empty", "bad"])
ap.add_argument("--answer", default="ok", help="the text of every generated answer")
ap.add_argument("--tokens", type=int, help="completion tokens every answer reports")
ap.add_argument("--no-trace", action="store_true", help="never write a trace")
ap.add_argument("--slow-trace", type=float, default=0.0,
                help="write a partial trace, complete it after this many seconds")
ap.add_argument("--hang", help="never answer this path (the client must time out)")
ARGS = ap.parse_args()

LOCK = threading.Lock()
STATE = {"active": False, "start": None, "steps": 0, "epoch": 0}


def usage(answer):
    """An OpenAI answer with its usage block when --tokens is given."""
    if ARGS.tokens is not None:
        answer["usage"] = {"prompt_tokens": 3, "completion_tokens": ARGS.tokens}
    return answer


def log(entry):
    with LOCK:
        with open(ARGS.log, "a") as fh:
            fh.write(json.dumps(entry) + "\n")


def trace_bytes(gz):
    events = [
        {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
         "ts": 0, "dur": 100, "args": {"stream": 7, "correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "rmsnorm_kernel", "pid": 0, "tid": 7,
         "ts": 200, "dur": 110, "args": {"stream": 7, "correlation": 2}},
        {"ph": "X", "cat": "python_function", "name": MARKERS[ARGS.framework],
         "pid": 1, "tid": 1, "ts": 0, "dur": 300, "args": {}},
    ]
    raw = json.dumps({"traceEvents": events}).encode()
    return gzip.compress(raw, mtime=0) if gz else raw


def write_trace(path):
    """Write one trace: atomically, or in two steps with --slow-trace."""
    if ARGS.no_trace:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = trace_bytes(not path.endswith(".json"))
    if ARGS.slow_trace > 0:
        with open(path, "wb") as fh:
            fh.write(data[: len(data) // 3])

        def finish():
            time.sleep(ARGS.slow_trace)
            with open(path, "wb") as fh:
                fh.write(data)
        threading.Thread(target=finish, daemon=True).start()
        return
    tmp = path + ".partial"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def write_traces():
    """What the server writes when its profiler stops."""
    fw = ARGS.framework
    st = STATE["start"] or {}
    STATE["epoch"] += 1
    stamp = "%d%03d" % (int(time.time()), STATE["epoch"])
    if fw == "sglang":
        out, prefix = st.get("output_dir", "."), st.get("profile_prefix", "")
        for r in range(ARGS.ranks):
            if st.get("profile_by_stage"):
                for tag in ("EXTEND", "DECODE"):
                    write_trace(os.path.join(out, "%s-%s-TP-%d-%s.trace.json.gz" % (prefix, stamp, r, tag)))
            else:
                write_trace(os.path.join(out, "%s-%s-TP-%d.trace.json.gz" % (prefix, stamp, r)))
        if st.get("merge_profiles"):
            write_trace(os.path.join(out, "merged-%s-%s.trace.json.gz" % (prefix, stamp)))
    elif fw == "tokenspeed":
        for r in range(ARGS.ranks):
            write_trace(os.path.join(st.get("output_dir", "."), "%s-TP-%d.trace.json.gz" % (st.get("profile_id"), r)))
    elif ARGS.trace_file:
        write_trace(ARGS.trace_file)
    else:
        for r in range(ARGS.ranks):
            write_trace(os.path.join(ARGS.trace_dir, "fake_tp%d.%s.pt.trace.json.gz" % (r, stamp)))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        raw = body if isinstance(body, bytes) else (
            body.encode() if isinstance(body, str) else json.dumps(body).encode())
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def handle_any(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        log({"t": time.time(), "method": method, "path": self.path,
             "headers": {k.lower(): v for k, v in self.headers.items()},
             "body": body.decode("utf-8", "replace")})
        if ARGS.hang and self.path == ARGS.hang:
            time.sleep(30)
            return
        route = getattr(self, "%s_%s" % (method.lower(), self.path.strip("/").replace("/", "_")), None)
        if route is None:
            return self.reply(404, {"detail": "Not Found"})
        return route(body)

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    # -- common OpenAI-compatible endpoints --
    def get_v1_models(self, body):
        if ARGS.models == "404":
            return self.reply(404, {"detail": "Not Found"})
        if ARGS.models == "empty":
            return self.reply(200, {"object": "list", "data": []})
        if ARGS.models == "bad":
            return self.reply(200, {"object": "list", "data": [{}]})
        return self.reply(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    def post_v1_chat_completions(self, body):
        if ARGS.chat_status != 200:
            return self.reply(ARGS.chat_status, {"error": "chat template missing"})
        return self.reply(200, usage({"choices": [{"message": {"role": "assistant",
                                                               "content": ARGS.answer}}]}))

    def post_v1_completions(self, body):
        return self.reply(200, usage({"choices": [{"text": ARGS.answer}]}))

    # -- detection --
    def get_server_info(self, body):
        if ARGS.framework != "sglang":
            return self.reply(404, {"detail": "Not Found"})
        return self.reply(200, {"model_path": "fake/model", "tokenizer_path": "fake/model",
                                "attention_backend": "fa3"})

    def get_readiness(self, body):
        if ARGS.framework != "tokenspeed":
            return self.reply(404, {"detail": "Not Found"})
        return self.reply(200, {"status": "ready"})

    # -- SGLang native generation, counting forward steps while profiling --
    def post_generate(self, body):
        if ARGS.framework != "sglang":
            return self.reply(404, {"detail": "Not Found"})
        req = json.loads(body)
        with LOCK:
            if STATE["active"]:
                STATE["steps"] += max(1, int(req["sampling_params"]["max_new_tokens"]))
                if STATE["steps"] >= int(STATE["start"]["num_steps"]):
                    STATE["active"] = False
                    write_traces()
        meta = {} if ARGS.tokens is None else {"completion_tokens": ARGS.tokens}
        return self.reply(200, {"text": ARGS.answer, "meta_info": meta})

    # -- profiler control --
    def post_start_profile(self, body):
        if ARGS.start_status != 200:
            return self.reply(ARGS.start_status, ARGS.start_body)
        fw = ARGS.framework
        if fw in ("sglang", "tokenspeed"):
            STATE["start"] = json.loads(body)
        elif body:
            return self.reply(400, {"detail": "unexpected body"})
        with LOCK:
            STATE["active"] = True
            STATE["steps"] = 0
        if fw == "sglang" or ARGS.start_text:
            return self.reply(200, "Start profiling.\n", "text/plain")
        if fw == "tokenspeed":
            return self.reply(200, {"success": True})
        return self.reply(200, b"")

    def post_stop_profile(self, body):
        if ARGS.stop_status != 200:
            return self.reply(ARGS.stop_status, ARGS.stop_body)
        with LOCK:
            was_active = STATE["active"]
            STATE["active"] = False
            if was_active:
                write_traces()
        if ARGS.framework == "sglang":
            if not was_active:
                return self.reply(400, {"error": "profiling is not in progress"})
            return self.reply(200, "Stop profiling. This will take some time.\n", "text/plain")
        if ARGS.framework == "tokenspeed":
            return self.reply(200, {"success": True})
        return self.reply(200, b"")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        # HTTPServer.server_bind does a reverse DNS lookup; skip it.
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
