"""LLMProposer against a local stub chat server (127.0.0.1 only): the loop survives bad replies."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from coplug.formulations.bbo.evolve import EvolutionConfig, evolve
from coplug.formulations.bbo.llm_proposer import (
    LLMConfig,
    LLMEndpointError,
    LLMProposer,
    completions_url,
    extract_program,
)
from coplug.formulations.bbo.proposers import Scored
from coplug.formulations.bbo.validate import load
from coplug.plugins.cli import main
from coplug.plugins.errors import InputError

MAX_REQUESTS = 40


def _reply(kind: str, k: int) -> tuple[int, str]:
    """HTTP status and assistant text for one behaviour."""
    if kind == "good":
        return 200, (f"Reflection: the better parent has a single basin.\n```program\n"
                     f"z = x - [{0.1 * k:.1f}, -1.0]\nsum(z ** 2) + sin(3 * x[0])\n```")
    if kind == "unsafe":
        return 200, "```program\n__import__('os').system('echo pwned')\n```"
    if kind == "prose":
        return 200, "I am sorry, but I would rather talk about the weather."
    if kind == "nonfinite":
        return 200, "```program\nlog(x[0] - 10.0)\n```"
    if kind == "error":
        return 500, "overloaded"
    raise AssertionError(kind)


_ERRORS = {"unauthorized": (401, "Incorrect API key provided", {}),
           "notfound": (404, "The model `stub-x` does not exist", {}),
           "ratelimit": (429, "Rate limit reached", {"Retry-After": "1"}),
           "ratelimit_long": (429, "Rate limit reached", {"Retry-After": "3600"})}


class _Stub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviours: list[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviours, self.requests, self.lock = behaviours, [], threading.Lock()

    def handle_error(self, request, client_address) -> None:  # client gave up on a slow reply
        pass


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # where a followed redirect lands
        server: _Stub = self.server  # type: ignore[assignment]
        with server.lock:
            server.requests.append({"path": self.path, "auth": self.headers.get("Authorization")})
        self.send_error(404)

    def do_POST(self) -> None:
        server: _Stub = self.server  # type: ignore[assignment]
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            k = len(server.requests)
            server.requests.append({"path": self.path, "body": body, "t": time.monotonic(),
                                    "auth": self.headers.get("Authorization")})
        if k >= MAX_REQUESTS:
            self.send_error(503)
            return
        kind = server.behaviours[k % len(server.behaviours)]
        if kind == "slow":
            time.sleep(0.6)
            kind = "good"
        if kind == "redirect":  # urllib followed it, with the API key, as a GET
            self.send_response(302)
            self.send_header("Location", "/elsewhere/v1/chat/completions")
            self.end_headers()
            return
        if kind == "huge":  # valid chat JSON of 5,000 bytes
            payload = json.dumps({"choices": [{"message": {"content": "x" * 4900}}]})
            self.send_response(200)
            self.end_headers()
            self.wfile.write(payload.encode())
            return
        if kind == "deep":  # valid JSON that json's recursive decoder cannot read
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"[" * 100_000 + b"]" * 100_000)
            return
        if kind == "trickle503":  # an error whose body comes a byte at a time
            self.send_response(503)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(40):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.25)
            return
        if kind == "echo_key":  # a 401 quoting the header back, as some servers do
            self.send_response(401)
            self.end_headers()
            said = f"Incorrect API key provided: {self.headers.get('Authorization')}"
            self.wfile.write(json.dumps({"error": {"message": said}}).encode())
            return
        if kind in _ERRORS:  # an error status with an OpenAI-style error body
            status, message, headers = _ERRORS[kind]
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": message}}).encode())
            return
        status, text = _reply(kind, k)
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": text}}]})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode() if status == 200 else b"{}")


@pytest.fixture
def stub(request) -> Iterator[_Stub]:
    server = _Stub(request.param)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("stub", [["good", "unsafe", "prose", "slow", "nonfinite"]],
                         indirect=True)
def test_full_loop_with_llm_counts_bad_replies(stub: _Stub, monkeypatch) -> None:
    monkeypatch.setenv("COPLUG_LLM_BASE_URL", f"http://127.0.0.1:{stub.server_port}/v1")
    monkeypatch.setenv("COPLUG_LLM_MODEL", "stub-model")
    monkeypatch.setenv("COPLUG_LLM_API_KEY", "test-key")
    config = LLMConfig.from_env(timeout=0.2, retries=0)
    proposer = LLMProposer(2, config)
    cfg = EvolutionConfig(dim=2, targets=(1,), population=4, generations=2, budget=16, seeds=3,
                          sample=40, seed=1)
    result = evolve(cfg, proposer=proposer, progress=False)
    stats = result.rejections
    assert len(stub.requests) == 8 <= MAX_REQUESTS
    assert stats["accepted"] == 2
    assert stats["rejected_unsafe"] == 2
    assert stats["rejected_syntax"] == 2
    assert stats["rejected_non_finite"] == 1
    assert stats["failed_timeout"] == 1
    assert len(result.candidates) == 4 + 2
    first = stub.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["auth"] == "Bearer test-key" and first["body"]["model"] == "stub-model"
    prompt = first["body"]["messages"][1]["content"]
    assert "Parent 1" in prompt and "similarity" in prompt and "```program" in prompt
    assert "Target f1_sphere" in prompt and "Reflect" in prompt


@pytest.mark.parametrize("stub", [["error", "good"]], indirect=True)
def test_retries_after_server_error(stub: _Stub) -> None:
    config = LLMConfig(base_url=f"http://127.0.0.1:{stub.server_port}/v1", model="m",
                       timeout=2.0, retries=1, backoff=0.01)
    proposer = LLMProposer(2, config)
    parent = Scored(load("sum(x ** 2)", 2), 0.5, 0.1, "f1", (0.0,) * 7)
    programs = proposer.propose([parent], 1, np.random.default_rng(0), {})
    assert len(programs) == 1 and len(stub.requests) == 2
    assert proposer.stats["requests"] == 2 and proposer.stats["accepted"] == 1


def _closed_port_url() -> str:
    """Base URL of a local port nothing listens on (connections are refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_unreachable_endpoint_and_missing_config(monkeypatch) -> None:
    for name in ("COPLUG_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(InputError, match="COPLUG_LLM_BASE_URL"):
        LLMConfig.from_env()
    url = _closed_port_url()
    proposer = LLMProposer(2, LLMConfig(base_url=url, model="m", timeout=0.5, retries=1,
                                        backoff=0.01))
    with pytest.raises(LLMEndpointError, match=f"{url}/chat/completions.*cannot connect.*2 tries"):
        proposer.propose([], 2, np.random.default_rng(0), {})
    assert proposer.stats["requests"] == 2 and proposer.stats["failed_http_error"] == 1


def test_evolve_command_stops_at_a_dead_endpoint(tmp_path, capsys) -> None:
    url = _closed_port_url()
    start = time.perf_counter()
    assert main(["bbo", "evolve", "--proposer", "llm", "--llm-url", url, "--targets", "1",
                 "--population", "3", "--generations", "2", "--budget", "30", "--seeds", "3",
                 "--run-dir", str(tmp_path / "run"), "--quiet"]) == 2
    assert time.perf_counter() - start < 30.0
    err = capsys.readouterr().err.strip()
    assert err.startswith("coplug: error: LLM endpoint") and url in err and "\n" not in err
    assert "--llm-url" in err and not (tmp_path / "run").exists()


def _two_proposals(stub: _Stub, timeout: float) -> tuple[list, LLMProposer]:
    """Ask the stub for two children of one parent, without retries."""
    config = LLMConfig(base_url=f"http://127.0.0.1:{stub.server_port}/v1", model="m",
                       timeout=timeout, retries=0)
    proposer = LLMProposer(2, config)
    parent = Scored(load("sum(x ** 2)", 2), 0.5, 0.1, "f1", (0.0,) * 7)
    return proposer.propose([parent], 2, np.random.default_rng(0), {}), proposer


@pytest.mark.parametrize("stub", [["good", "error"]], indirect=True)
def test_failures_after_a_first_answer_are_only_counted(stub: _Stub) -> None:
    programs, proposer = _two_proposals(stub, timeout=2.0)
    assert len(programs) == 1 and proposer.stats["failed_http_error"] == 1


@pytest.mark.parametrize("stub", [["good", "redirect"]], indirect=True)
def test_a_redirect_is_refused_not_followed_with_the_key(stub: _Stub) -> None:
    config = LLMConfig(base_url=f"http://127.0.0.1:{stub.server_port}/v1", model="m",
                       api_key="SECRET", timeout=5.0, retries=0)
    proposer = LLMProposer(2, config)
    parent = Scored(load("sum(x ** 2)", 2), 0.5, 0.1, "f1", (0.0,) * 7)
    assert len(proposer.propose([parent], 2, np.random.default_rng(0), {})) == 1
    assert proposer.stats["failed_http_error"] == 1
    assert [r["path"] for r in stub.requests] == ["/v1/chat/completions"] * 2


@pytest.mark.parametrize("stub", [["good", "huge"]], indirect=True)
def test_a_reply_past_the_size_cap_is_counted_not_read(stub: _Stub, monkeypatch) -> None:
    monkeypatch.setattr("coplug.formulations.bbo.llm_proposer.MAX_REPLY_BYTES", 1000)
    programs, proposer = _two_proposals(stub, timeout=5.0)
    assert len(programs) == 1 and proposer.stats["failed_bad_response"] == 1


def test_extract_program() -> None:
    for fence in ("```python3\n", "```c++\n", "``` python\n", "```python\r\n"):
        assert extract_program(f"think\n{fence}sum(x)\n```").strip() == "sum(x)"
    assert extract_program("think\n```python\nsum(x)\n```\nmore") == "sum(x)\n"
    assert extract_program("```\na = 1\n```\n```program\nsum(x)\n```") == "sum(x)\n"
    assert extract_program("sum(x)") == "sum(x)"
    assert extract_program("   ") is None


@pytest.mark.parametrize("stub", [["good", "deep"]], indirect=True)
def test_a_reply_nested_past_the_recursion_limit_is_counted_as_bad(stub: _Stub) -> None:
    """It ended the run with json's RecursionError and a traceback."""
    programs, proposer = _two_proposals(stub, timeout=5.0)
    assert len(programs) == 1 and proposer.stats["failed_bad_response"] == 1


def test_a_fence_before_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    """The fence regex backtracked quadratically: 32k spaces took 5 s, a 4 MB reply a day."""
    start = time.perf_counter()
    assert extract_program("```" + " " * 400_000 + "\nsum(x)\n```") == "sum(x)\n"
    assert extract_program("```" + " " * 400_000 + "x") is None  # a fence tagged x, empty
    assert extract_program("```program\n" + "\t" * 400_000) is None
    assert time.perf_counter() - start < 2.0


def test_the_program_block_is_taken_over_later_blocks_and_open_fences_count() -> None:
    reply = "```program\nsum(x ** 2)\n```\nWhy it works:\n```\nbasins\n```"
    assert extract_program(reply) == "sum(x ** 2)\n"
    assert extract_program("Here:\n```program\nz = x - 1\nsum(z ** 2)") == "z = x - 1\nsum(z ** 2)"
    assert extract_program("```sum(abs(x))```") == "sum(abs(x))"
    assert extract_program("```program\nsum(x)```") == "sum(x)\n"


def _proposer(stub: _Stub, **settings) -> LLMProposer:
    settings = {"timeout": 5.0, "retries": 0, "backoff": 0.01} | settings
    return LLMProposer(2, LLMConfig(base_url=f"http://127.0.0.1:{stub.server_port}/v1",
                                    model="stub-x", **settings))


_PARENT = [Scored(load("sum(x ** 2)", 2), 0.5, 0.1, "f1", (0.0,) * 7)]


@pytest.mark.parametrize("stub", [["good", "unauthorized"]], indirect=True)
def test_a_refused_key_mid_run_stops_the_run_naming_the_key(stub: _Stub) -> None:
    """A revoked key was counted as a failure on every later proposal, the run exiting 0."""
    proposer = _proposer(stub)
    with pytest.raises(LLMEndpointError, match=r"HTTP 401.*Incorrect API key.*API key"):
        proposer.propose(_PARENT, 3, np.random.default_rng(0), {})
    assert len(stub.requests) == 2


@pytest.mark.parametrize("stub", [["notfound"]], indirect=True)
def test_a_missing_model_names_the_model_option_and_the_servers_words(stub: _Stub) -> None:
    with pytest.raises(LLMEndpointError, match=r"404.*stub-x. does not exist.*--llm-model"):
        _proposer(stub).propose(_PARENT, 1, np.random.default_rng(0), {})


@pytest.mark.parametrize("stub", [["good", "error", "good", "error", "error", "error"]],
                         indirect=True)
def test_an_endpoint_failing_proposals_in_a_row_stops_the_run(stub: _Stub) -> None:
    """After one answer every failure was only counted: a dead endpoint ran for hours."""
    proposer = _proposer(stub, give_up_after=2)
    with pytest.raises(LLMEndpointError, match=r"failed 2 proposal\(s\) in a row.*HTTP 500"):
        proposer.propose(_PARENT, 10, np.random.default_rng(0), {})
    assert len(stub.requests) == 5 and proposer.stats["failed_http_error"] == 3
    with pytest.raises(InputError, match="give_up_after"):
        LLMConfig(base_url="http://127.0.0.1:1/v1", model="m", give_up_after=0)


@pytest.mark.parametrize("stub", [["ratelimit", "good"]], indirect=True)
def test_retry_after_is_waited_for(stub: _Stub) -> None:
    """429's Retry-After was ignored: the retry came after the 0.5 s backoff."""
    start = time.perf_counter()
    programs = _proposer(stub, retries=1).propose(_PARENT, 1, np.random.default_rng(0), {})
    assert len(programs) == 1 and time.perf_counter() - start >= 0.95


@pytest.mark.parametrize("stub", [["ratelimit_long", "good"]], indirect=True)
def test_a_long_retry_after_is_capped(stub: _Stub, monkeypatch) -> None:
    monkeypatch.setattr("coplug.formulations.bbo.llm_proposer.MAX_RETRY_AFTER", 0.2)
    start = time.perf_counter()
    programs = _proposer(stub, retries=1).propose(_PARENT, 1, np.random.default_rng(0), {})
    assert len(programs) == 1 and 0.2 <= time.perf_counter() - start < 10.0


@pytest.mark.parametrize("stub", [["huge"]], indirect=True)
def test_an_oversized_first_reply_says_so(stub: _Stub, monkeypatch) -> None:
    monkeypatch.setattr("coplug.formulations.bbo.llm_proposer.MAX_REPLY_BYTES", 1000)
    with pytest.raises(LLMEndpointError, match="more than 1000 bytes"):
        _proposer(stub).propose(_PARENT, 1, np.random.default_rng(0), {})


def test_base_urls_with_credentials_fragments_or_queries() -> None:
    with pytest.raises(InputError, match="password") as info:
        LLMConfig(base_url="http://user:s3cret@127.0.0.1:8000/v1", model="m")
    assert "s3cret" not in str(info.value) and "127.0.0.1:8000/v1" in str(info.value)
    with pytest.raises(InputError, match="fragment"):
        LLMConfig(base_url="http://127.0.0.1:8000/v1#top", model="m")
    assert (completions_url("https://h.example/openai/v1/?api-version=2024-06-01")
            == "https://h.example/openai/v1/chat/completions?api-version=2024-06-01")
    assert completions_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000/chat/completions"


@pytest.mark.parametrize("stub", [["good", "good", "good", "unauthorized"]], indirect=True)
def test_evolve_command_stopped_mid_run_keeps_finished_generations(stub: _Stub, tmp_path,
                                                                   capsys) -> None:
    run = tmp_path / "run"
    assert main(["bbo", "evolve", "--proposer", "llm", "--llm-url",
                 f"http://127.0.0.1:{stub.server_port}/v1", "--targets", "1", "--population",
                 "3", "--generations", "3", "--budget", "30", "--seeds", "3", "--run-dir",
                 str(run), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "HTTP 401" in err and "keeps the finished generations" in err and "\n" not in err
    assert json.loads((run / "history.json").read_text())


def test_fences_close_mid_line_and_closed_blocks_win_over_a_cut_off_one() -> None:
    """Review of the line reader: a block cut off at max_tokens after a complete one, a lone
    fence at the end, prose after a closing fence, and an inline mention of ```program```
    had each lost the program the regex found."""
    done = "```program\nsum(x ** 2)\n```"
    assert extract_program(done + "\nAlso:\n```program\nsum(abs(") == "sum(x ** 2)\n"
    assert extract_program(done + "\n```") == "sum(x ** 2)\n"
    assert extract_program("```program\nsum(x ** 2)\n``` done.") == "sum(x ** 2)\n"
    assert extract_program("Use a ```program``` block below:\n" + done) == "sum(x ** 2)\n"
    echo = "Parent 1 was:\n```program\nsum(x)\n```\nNew:\n```python\nsum(x ** 2)\n```"
    assert extract_program(echo, exclude=["sum(x)\n"]) == "sum(x ** 2)\n"
    assert extract_program("```program\nsum(abs(") == "sum(abs("  # only a cut-off one


@pytest.mark.parametrize("stub", [["trickle503"]], indirect=True)
def test_an_error_body_is_read_within_the_request_deadline(stub: _Stub) -> None:
    """The body of an HTTP error was read after the deadline was cancelled: one trickling a
    byte every 0.25 s held the request about 4 minutes per try."""
    start = time.perf_counter()
    with pytest.raises(LLMEndpointError, match="HTTP 503"):
        _proposer(stub, timeout=1.0).propose(_PARENT, 1, np.random.default_rng(0), {})
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("url", ["http://user:s3cret@127.0.0.1:80800/v1",
                                 "htps://user:s3cret@127.0.0.1/v1", "user:s3cret@host/v1",
                                 "http://user:s3cret@[::1/v1"])
def test_a_refused_base_url_never_shows_its_password(url: str) -> None:
    with pytest.raises(InputError) as info:
        LLMConfig(base_url=url, model="m")
    assert "s3cret" not in str(info.value) and "user" not in str(info.value)


@pytest.mark.parametrize("stub", [["echo_key"]], indirect=True)
def test_the_api_key_is_never_shown(stub: _Stub) -> None:
    """A key from a CRLF .env file (trailing \\r) was quoted whole in http.client's refusal,
    blamed on the URL; a 401 quoting the key back was shown as it came."""
    with pytest.raises(LLMEndpointError, match="HTTP 401") as info:
        _proposer(stub, api_key="sk-SECRET123\r\n").propose(_PARENT, 1,
                                                              np.random.default_rng(0), {})
    assert "SECRET" not in str(info.value) and "<API key>" in str(info.value)
    assert stub.requests[0]["auth"] == "Bearer sk-SECRET123"
    with pytest.raises(InputError, match="non-ASCII") as info:
        LLMConfig(base_url="http://127.0.0.1:1/v1", model="m", api_key="sk-SECRET\u2019")
    assert "SECRET" not in str(info.value)


@pytest.mark.parametrize("stub", [["good", "ratelimit", "good"]], indirect=True)
def test_a_retry_after_holds_for_the_next_proposal_too(stub: _Stub) -> None:
    """The wait a 429 asked for was kept only between tries of one proposal: the next
    proposal's request went out at once."""
    _proposer(stub).propose(_PARENT, 3, np.random.default_rng(0), {})
    times = [request["t"] for request in stub.requests]
    assert len(times) == 3 and times[2] - times[1] >= 0.95


@pytest.mark.parametrize("stub", [["error", "good"]], indirect=True)
def test_the_backoff_between_tries_is_capped(stub: _Stub, monkeypatch) -> None:
    """Doubling from `backoff` had no ceiling (days by the 20th try, OverflowError past
    the 1,000th)."""
    monkeypatch.setattr("coplug.formulations.bbo.llm_proposer.MAX_RETRY_AFTER", 0.2)
    start = time.perf_counter()
    programs = _proposer(stub, retries=1, backoff=1e6).propose(_PARENT, 1,
                                                               np.random.default_rng(0), {})
    assert len(programs) == 1 and time.perf_counter() - start < 10.0
    with pytest.raises(InputError, match="retries"):
        LLMConfig(base_url="http://127.0.0.1:1/v1", model="m", retries=1100)


@pytest.mark.parametrize("setting", [{"temperature": math.nan}, {"temperature": "hot"},
                                     {"model": None}, {"model": " "}, {"max_tokens": True},
                                     {"timeout": True}, {"retries": False}])
def test_settings_no_request_could_use_are_refused(setting: dict) -> None:
    """NaN went out as the JSON-invalid `NaN`, True as `true` max_tokens."""
    name = next(iter(setting))
    with pytest.raises(InputError, match=name):
        LLMConfig(**({"base_url": "http://127.0.0.1:1/v1", "model": "m"} | setting))


@pytest.mark.parametrize("stub", [["good", "unauthorized"]], indirect=True)
def test_a_refused_key_in_the_first_round_keeps_the_scored_start(stub: _Stub, tmp_path,
                                                                 capsys) -> None:
    """A 401 in the first proposal round left no run directory, where Ctrl-C at the same
    point kept the scored initial population."""
    run = tmp_path / "run"
    assert main(["bbo", "evolve", "--proposer", "llm", "--llm-url",
                 f"http://127.0.0.1:{stub.server_port}/v1", "--targets", "1", "--population",
                 "3", "--generations", "3", "--budget", "30", "--seeds", "3", "--run-dir",
                 str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "keeps the finished generations" in err
    assert json.loads((run / "history.json").read_text())["generations_done"] == 0
