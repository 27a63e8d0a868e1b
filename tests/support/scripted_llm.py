#!/usr/bin/env python3
"""A scripted OpenAI-compatible server for tests (loopback only).

Each POST .../chat/completions takes the next entry of the script (a JSON list)
and answers it in the request's mode (streamed when the request says
"stream": true). Every request is appended to the log file as one JSON line
{"path", "authorization", "body"}. Entries:

  {"say": "text", "reasoning": "...", "usage": {...}}   an answer
  {"call": [{"id", "name", "arguments"}], "say"?: "..."}  tool calls
  {"status": 500, "body": "..."}                          an HTTP error
  {"hang": 30}                                            no answer for 30 s
  {"raw": ["data: ...\\n", ...]}                          these bytes as a stream

Streams split text every `split` characters (default 3, so pieces cut words)
and tool-call arguments the same way, with id and name only on the first piece
of each call, as providers do. With --port-file the bound port is written there.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {"script": [], "next": 0, "log": None}


def pieces(text, n):
    return [text[i:i + n] for i in range(0, len(text), n)] or [""]


def completion_json(entry, model):
    msg = {"role": "assistant", "content": entry.get("say", "")}
    if entry.get("reasoning"):
        msg["reasoning_content"] = entry["reasoning"]
    calls = entry.get("call")
    if calls:
        msg["tool_calls"] = [{"id": c.get("id", ""), "type": "function",
                              "function": {"name": c["name"], "arguments": c.get("arguments", "")}}
                             for c in calls]
    return {"id": "cmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": entry.get("usage", {"prompt_tokens": 10, "completion_tokens": 5})}


def stream_chunks(entry, model):
    n = entry.get("split", 3)

    def chunk(delta, finish=None):
        return {"id": "cmpl-1", "object": "chat.completion.chunk", "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant"})]
    if entry.get("reasoning"):
        out += [chunk({"reasoning_content": p}) for p in pieces(entry["reasoning"], n)]
    if entry.get("say"):
        out += [chunk({"content": p}) for p in pieces(entry["say"], n)]
    for i, c in enumerate(entry.get("call") or []):
        args = pieces(c.get("arguments", ""), n)
        out.append(chunk({"tool_calls": [{"index": i, "id": c.get("id", ""), "type": "function",
                                          "function": {"name": c["name"], "arguments": args[0]}}]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": a}}]}) for a in args[1:]]
    out.append(chunk({}, "tool_calls" if entry.get("call") else "stop"))
    out.append({"id": "cmpl-1", "object": "chat.completion.chunk", "model": model, "choices": [],
                "usage": entry.get("usage", {"prompt_tokens": 10, "completion_tokens": 5})})
    return out


class handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # streams end when the connection closes

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        with lock:
            if state["log"]:
                with open(state["log"], "a") as f:
                    f.write(json.dumps({"path": self.path,
                                        "authorization": self.headers.get("Authorization", ""),
                                        "body": body}) + "\n")
            i = state["next"]
            state["next"] += 1
            entry = state["script"][i] if i < len(state["script"]) else {
                "status": 500, "body": "script exhausted"}
        if not self.path.endswith("/chat/completions"):
            entry = {"status": 404, "body": "not found"}
        model = body.get("model", "")
        if "hang" in entry:
            time.sleep(entry["hang"])
            return
        status = entry.get("status", 200)
        if status != 200:
            data = json.dumps({"error": {"message": entry.get("body", "")}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if "raw" in entry or body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            parts = entry["raw"] if "raw" in entry else \
                ["data: " + json.dumps(c) + "\n\n" for c in stream_chunks(entry, model)] + ["data: [DONE]\n\n"]
            for p in parts:
                self.wfile.write(p.encode())
                self.wfile.flush()
                time.sleep(0.005)
            return
        data = json.dumps(completion_json(entry, model)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--script", required=True)
    ap.add_argument("--log")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    a = ap.parse_args()
    with open(a.script) as f:
        state["script"] = json.load(f)
    state["log"] = a.log
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), handler)
    srv.daemon_threads = True
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        import os
        os.replace(a.port_file + ".tmp", a.port_file)
    print("listening", srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
