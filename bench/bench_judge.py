"""Speed of the LLM judge's re-judge (scoring/judge/rejudge.py) against a local OpenAI-compatible server
that answers every chat completion after 50 ms, in a process of its own (HTTP/1.1, keep-alive).

    .venv/bin/python bench/bench_judge.py [--answers 10000] [--delay 0.05] [--concurrency 4] [--small 400] [--repeat 3]

Prints, never asserts:
- the wall time of --answers answers at --concurrency (default 4, the command line's) against the floor
  answers x delay / concurrency, and our overhead per answer (wall minus the floor, over the answers) and
  the CPU seconds this process spent per answer (building requests, reading replies, scoring, caching);
- the same answers again, every reply from the cache (a second run, a restarted app): wall and CPU per answer;
- concurrency 1 against --concurrency on --small answers, interleaved --repeat times, medians and their ratio;
- the load average before and after (two shared cores: wall times move with it, CPU seconds much less).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PROMPT = "Write the answer the analysis gives, in two lines:\nExtracted answer: [answer]\nAnswer format: [format]\n"


def serve(port: int, delay: float) -> None:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._send(json.dumps({"data": [{"id": "judge-7b"}]}).encode())

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            time.sleep(delay)
            analysis = body["messages"][-1]["content"].rsplit("Analysis:", 1)[-1].strip().rstrip(".")
            answer = analysis.split()[-1] if analysis.split() else ""
            self._send(json.dumps({"model": "judge-7b", "choices": [{"message": {
                "role": "assistant", "content": f"Extracted answer: {answer}\nAnswer format: Integer"},
                "finish_reason": "stop"}]}).encode())

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    Server(("127.0.0.1", port), Handler).serve_forever()


def answers(n: int, salt: str):
    from scoring.judge.answers import JudgedAnswer

    return [JudgedAnswer(qid=f"q{i}", question=f"How many units are in table {i}? ({salt})", response=f"The table lists {1000 + i}.",
                         gold=str(1000 + i), answer_format="Int", rules="mmlongbench-doc", document=f"d{i // 5}",
                         rule_answers=(str(1000 + i),), rule_format="Int") for i in range(n)]


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=10_000)
    ap.add_argument("--delay", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--small", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve, args.delay)
        return
    import socket

    from scoring.judge.cache import ReplyCache
    from scoring.judge.client import JudgeClient
    from scoring.judge.prompts import read_prompt
    from scoring.judge.rejudge import rejudge

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--delay", str(args.delay)])
    try:
        url = f"http://127.0.0.1:{port}/v1"
        for _ in range(200):
            try:
                JudgeClient(url, "judge-7b", retries=0).server_model()
                break
            except Exception:
                time.sleep(0.05)
        tmp = Path(tempfile.mkdtemp(prefix="bench_judge_"))
        (tmp / "p.md").write_text(PROMPT, encoding="utf-8")
        prompt = read_prompt(tmp / "p.md")
        load0 = os.getloadavg()
        print(f"load average before: {load0[0]:.2f} {load0[1]:.2f}")

        big = answers(args.answers, "big")
        cache = ReplyCache(tmp / "cache")
        run, wall, cpu = timed(lambda: rejudge(big, JudgeClient(url, "judge-7b"), prompt, cache, concurrency=args.concurrency))
        floor = args.answers * args.delay / args.concurrency
        print(f"{args.answers:,} answers, {args.delay * 1000:.0f} ms each, concurrency {args.concurrency}: wall {wall:.1f} s "
              f"(floor {floor:.1f} s, {wall / floor:.2f}x); overhead {1000 * (wall - floor) / args.answers:.2f} ms/answer wall, "
              f"{1000 * cpu / args.answers:.2f} ms/answer CPU; {run.requests:,} asked, {len(run.errors)} errors")
        run2, wall2, cpu2 = timed(lambda: rejudge(big, JudgeClient(url, "judge-7b"), prompt, cache, concurrency=args.concurrency))
        print(f"again, every reply from the cache: wall {wall2:.2f} s ({1000 * wall2 / args.answers:.3f} ms/answer), "
              f"CPU {1000 * cpu2 / args.answers:.3f} ms/answer; {run2.cached:,} cached, {run2.requests} asked")

        walls: dict[int, list[float]] = {1: [], args.concurrency: []}
        for rep in range(args.repeat):  # interleaved
            for c in (1, args.concurrency):
                small = answers(args.small, f"small{rep}c{c}")
                _, w, _ = timed(lambda: rejudge(small, JudgeClient(url, "judge-7b"), prompt, ReplyCache(None), concurrency=c))
                walls[c].append(w)
        m1, mc = statistics.median(walls[1]), statistics.median(walls[args.concurrency])
        print(f"{args.small} answers, median of {args.repeat} interleaved: concurrency 1 {m1:.2f} s, {args.concurrency} "
              f"{mc:.2f} s: {m1 / mc:.2f}x")
        load1 = os.getloadavg()
        print(f"load average after: {load1[0]:.2f} {load1[1]:.2f}")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
