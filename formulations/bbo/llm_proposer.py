"""The LLM proposer: programs from any OpenAI-compatible chat endpoint, with reflection.

`LLMProposer` asks the endpoint for programs, showing it parent programs with their scores
and the target landscape (the reflection step); every reply goes through the same
validation as other proposals (`proposers.accept`), rejections counted by reason in
`stats`. Each request runs under one deadline for the whole request. An endpoint that fails
its very first request, refuses the key or the model (HTTP 401, 403, 404), or fails
`give_up_after` proposals in a row raises `LLMEndpointError` naming the URL and the cause.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from typing import Any

import numpy as np

from coplug.formulations.bbo.grammar import FUNCTIONS, Program, to_text
from coplug.formulations.bbo.proposers import Scored, accept
from coplug.plugins.errors import CoplugError, InputError

# The longest request timeout: past threading.TIMEOUT_MAX (about 9.2e9 s) the deadline's
# timer raised OverflowError at the first request.
MAX_TIMEOUT = 1e9


class LLMEndpointError(CoplugError, ConnectionError):
    """The LLM endpoint cannot serve the run: unreachable, refusing the key or the model, not
    a chat-completions API, or failing `give_up_after` proposals in a row."""


GRAMMAR_HELP = f"""A benchmark program is a minimized objective over x, a vector of length DIM in a
box. Write Python-like lines: optional `name = expression` lines, then one final line with
the scalar objective. Allowed: numbers, x (the vector), x[i] (i an integer literal),
+ - * / **, functions {", ".join(sorted(FUNCTIONS))} (elementwise on vectors; sum() and
prod() reduce a vector to a scalar; max/min take two arguments), pi, vector literals
[a, b, ...] of length DIM and DIM x DIM matrix literals written inline as [[...], ...] @ v
(a matrix cannot be named). Nothing else: no
imports, attributes, loops, lambdas or other names. The objective must be finite on the
box and small (at most MAXN expression nodes)."""


@dataclass
class LLMConfig:
    """Where and how to call an OpenAI-compatible chat endpoint."""

    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 30.0
    retries: int = 2
    backoff: float = 0.5
    temperature: float = 0.8
    max_tokens: int = 600
    give_up_after: int = 5

    def __post_init__(self) -> None:
        """Reject settings no request could use, naming the option (before any request)."""
        self.base_url = _checked_base_url(self.base_url)
        self.api_key = _checked_api_key(self.api_key)
        if not (isinstance(self.model, str) and self.model.strip()):
            raise InputError(f"LLM model must be a non-empty name (--llm-model or "
                             f"COPLUG_LLM_MODEL), got {self.model!r}")
        if not (_number(self.timeout) and 0 < self.timeout <= MAX_TIMEOUT):
            # past MAX_TIMEOUT the request's timer overflows
            raise InputError(f"LLM timeout must be a positive number of seconds up to "
                             f"{MAX_TIMEOUT:g} (--llm-timeout), got {self.timeout!r}")
        if not (_integer(self.retries) and 0 <= self.retries <= MAX_RETRIES):
            raise InputError(f"LLM retries must be an integer from 0 to {MAX_RETRIES}, got "
                             f"{self.retries!r}")
        if not (_number(self.backoff) and 0 <= self.backoff < math.inf):
            raise InputError(f"LLM backoff must be a non-negative number, got {self.backoff!r}")
        if not (_number(self.temperature) and 0 <= self.temperature < math.inf):
            raise InputError(f"LLM temperature must be a finite number >= 0, got "
                             f"{self.temperature!r}")
        if not (_integer(self.max_tokens) and self.max_tokens >= 1):
            raise InputError(f"LLM max_tokens must be a positive integer, got {self.max_tokens!r}")
        if not (_integer(self.give_up_after) and self.give_up_after >= 1):
            raise InputError(f"LLM give_up_after must be a positive integer, got "
                             f"{self.give_up_after!r}")

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Read COPLUG_LLM_BASE_URL / _MODEL / _API_KEY (or OPENAI_BASE_URL / OPENAI_API_KEY)."""
        env = os.environ
        base = env.get("COPLUG_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
        values: dict[str, Any] = {
            "base_url": base,
            "model": env.get("COPLUG_LLM_MODEL") or env.get("OPENAI_MODEL") or "gpt-4o-mini",
            "api_key": env.get("COPLUG_LLM_API_KEY") or env.get("OPENAI_API_KEY") or "",
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if not values["base_url"]:
            raise InputError("LLM proposer needs COPLUG_LLM_BASE_URL (or OPENAI_BASE_URL) or "
                             "--llm-url, e.g. http://127.0.0.1:8000/v1")
        return cls(**values)


def _number(value: Any) -> bool:
    """Whether `value` is a real number and not a bool (True passed as a timeout of 1 s)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    """Whether `value` is an int and not a bool (True was sent as max_tokens `true`)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _checked_api_key(key: Any) -> str:
    """The API key without surrounding whitespace (a CRLF .env file leaves a trailing \r);
    one that no HTTP header can carry is refused without showing it (http.client's refusal
    quoted the whole key, blamed on the URL)."""
    if key is None:  # os.environ.get(...) of an unset key: a local server needs none
        return ""
    if not isinstance(key, str):
        raise InputError(f"LLM API key must be text or None, got {type(key).__name__}")
    key = key.strip()
    if any(not (33 <= ord(c) <= 126) for c in key):
        raise InputError("LLM API key (COPLUG_LLM_API_KEY or OPENAI_API_KEY) holds spaces, "
                         "control or non-ASCII characters, which no HTTP header can carry; "
                         "copy it again (the key is not shown)")
    return key


def _checked_base_url(url: Any) -> str:
    """The base URL without surrounding whitespace (as pasted env vars carry); one that no
    request could use (malformed, not http(s), no host, inner spaces) is refused, named."""
    example = "use e.g. http://127.0.0.1:8000/v1 (--llm-url or COPLUG_LLM_BASE_URL)"
    if not isinstance(url, str):
        raise InputError(f"LLM base URL must be text, got {type(url).__name__}; {example}")
    text = url.strip()
    url = _without_userinfo(text)  # what messages show: never a user name or password
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 - parsing the port raises ValueError on a bad one
    except ValueError as exc:
        raise InputError(f"LLM base URL {url!r} is malformed ({exc}); {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"LLM base URL {url!r} needs an http:// or https:// scheme and a "
                         f"host; {example}")
    if parts.username is not None or parts.password is not None:
        raise InputError(f"LLM base URL {url!r} carries a user name or password: give the "
                         "key in COPLUG_LLM_API_KEY (or OPENAI_API_KEY), not in the URL")
    if parts.fragment:
        raise InputError(f"LLM base URL {url!r} has a '#' fragment, which no endpoint "
                         f"reads; {example}")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise InputError(f"LLM base URL {url!r} contains spaces or control characters; "
                         f"{example}")
    return text


def _without_userinfo(text: str) -> str:
    """`text` with the `user:password@` of its authority left out (parsed by hand: the
    messages that show it are for URLs urlsplit may refuse)."""
    head, sep, rest = text.partition("//") if "//" in text else ("", "", text)
    authority, slash, path = rest.partition("/")
    return head + sep + authority.rpartition("@")[2] + slash + path


def completions_url(base_url: str) -> str:
    """The chat-completions URL under a base URL, its query kept at the end (an Azure-style
    `?api-version=` had the path appended after it)."""
    parts = urllib.parse.urlsplit(base_url)
    return urllib.parse.urlunsplit(
        parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


class _Deadline:
    """Shuts down the sockets of one request when its time is up, so a slow or trickling
    endpoint cannot hold the request past `seconds` (socket timeouts bound one read only)."""

    def __init__(self, seconds: float) -> None:
        self.lock = threading.Lock()
        self.sockets: list[socket.socket] = []
        self.expired = False
        self.timer = threading.Timer(seconds, self._expire)
        self.timer.daemon = True
        self.timer.start()

    def watch(self, sock: socket.socket) -> None:
        """Shut this socket down at the deadline (at once if it has passed)."""
        with self.lock:
            self.sockets.append(sock)
            if self.expired:
                _shut(sock)

    def cancel(self) -> None:
        self.timer.cancel()

    def _expire(self) -> None:
        with self.lock:
            self.expired = True
            for sock in self.sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    """End a connection another thread may be reading (the plain socket's shutdown, also
    under TLS, so the reader sees end of stream rather than a half-torn SSL object)."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Watched:
    """Mixin for an http.client connection: hands its socket to a `_Deadline` on connect."""

    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline = deadline

    def connect(self) -> None:
        super().connect()
        self.deadline.watch(self.sock)


class _WatchedHTTP(_Watched, http.client.HTTPConnection):
    """An HTTP connection whose socket a `_Deadline` shuts down."""


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    """An HTTPS connection whose socket a `_Deadline` shuts down."""


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    """urllib's http handler with `_WatchedHTTP` connections."""

    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(_WatchedHTTP, deadline=self.deadline), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    """urllib's https handler with `_WatchedHTTPS` connections."""

    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(partial(_WatchedHTTPS, deadline=self.deadline), req,
                            context=self._context)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses redirects: urllib's own handler sent the API key on to the new host (and
    turned the POST into a GET)."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} refused "
                                     "(it would carry the API key)", headers, fp)


# A chat reply of max_tokens=600 is a few KB; a larger one is refused rather than read (a
# 1.2 GB reply ran the process out of memory).
MAX_REPLY_BYTES = 4 * 2**20


def post_json(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Any:
    """POST `body` and parse the JSON reply, all within `timeout` seconds (a deadline for the
    whole request, not per read); transport failures raise OSError or HTTPException (a
    redirect: HTTPError), a reply that is not JSON, nests past Python's recursion limit or
    holds more than MAX_REPLY_BYTES ValueError, and one cut off by the deadline
    TimeoutError."""
    deadline = _Deadline(timeout)
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(_WatchedHTTPHandler(deadline),
                                         _WatchedHTTPSHandler(deadline), _NoRedirect())
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read(MAX_REPLY_BYTES + 1)
    except (OSError, http.client.HTTPException) as exc:
        if deadline.expired and not isinstance(exc, urllib.error.HTTPError):
            raise TimeoutError(f"no complete reply within {timeout:g} s") from None
        if isinstance(exc, urllib.error.HTTPError):  # its body, while the deadline runs: a
            exc.said = _error_body(exc)  # trickling one had held a request for ever
        raise
    finally:
        deadline.cancel()
    if deadline.expired:
        raise TimeoutError(f"no complete reply within {timeout:g} s")
    if len(raw) > MAX_REPLY_BYTES:
        raise ValueError(f"the reply holds more than {MAX_REPLY_BYTES} bytes")
    try:
        return json.loads(raw.decode("utf-8", "replace"))
    except RecursionError:  # "[" * 100000: json's decoder recurses per level
        raise ValueError("the reply nests too deeply to parse") from None


_TAG = re.compile(r"[\w+#.-]*")

# Longest wait a Retry-After header is granted before the next request, and longest
# backoff between tries (doubling from `backoff`, it reached days by the 20th try).
MAX_RETRY_AFTER = 60.0

# The most retries per proposal: 2**(attempt) of a thousand tries overflowed a float.
MAX_RETRIES = 100

# HTTP statuses no retry or later request can mend: the key or the model is refused.
_FATAL = {401: "check the API key (COPLUG_LLM_API_KEY or OPENAI_API_KEY)",
          403: "check the API key (COPLUG_LLM_API_KEY or OPENAI_API_KEY)",
          404: "check --llm-url and --llm-model (COPLUG_LLM_BASE_URL, COPLUG_LLM_MODEL)"}


@dataclass
class LLMProposer:
    """Asks a chat model for one program per request, with parents and scores in the prompt."""

    dim: int
    config: LLMConfig
    lower: float = -5.0
    upper: float = 5.0
    max_nodes: int = 40
    parents_shown: int = 4
    name: str = "llm"
    stats: Counter = field(default_factory=Counter)
    answered: bool = field(default=False, init=False)
    failed_in_row: int = field(default=0, init=False)
    not_before: float = field(default=0.0, init=False)  # time.monotonic() a Retry-After set

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator,
                context: dict[str, Any] | None = None) -> list[Program]:
        """Up to n validated programs; failed requests and bad replies are only counted, once
        the endpoint has answered (before that a failed request raises LLMEndpointError)."""
        out = []
        for _ in range(n):
            shown = sorted(parents, key=lambda p: -(p.similarity + p.differentiation))
            messages = self.messages(shown[: self.parents_shown], context or {})
            reply = self._ask(messages)
            if reply is None:
                continue
            echoes = [to_text(p.program) for p in shown[: self.parents_shown]]
            text = extract_program(reply, exclude=echoes)
            if text is None:
                self.stats["rejected_no_program"] += 1
                continue
            program = accept(text, self.dim, self.lower, self.upper, self.max_nodes, self.stats)
            if program is not None:
                out.append(program)
        return out

    def messages(self, parents: Sequence[Scored], context: dict[str, Any]) -> list[dict]:
        """The chat prompt: grammar, targets, scored parents and the reflection request."""
        system = GRAMMAR_HELP.replace("DIM", str(self.dim)).replace("MAXN", str(self.max_nodes))
        lines = [f"Box: [{self.lower}, {self.upper}]^{self.dim}. Goal: a landscape whose "
                 "exploratory-landscape features are close to a target AND on which a solver "
                 "portfolio (random search, differential evolution, Nelder-Mead, L-BFGS-B, "
                 "CMA-ES, Lipschitz pruning) ranks clearly apart."]
        names = context.get("feature_names", ())
        for target, feats in context.get("targets", {}).items():
            pairs = ", ".join(f"{k}={v:.2f}" for k, v in zip(names, feats, strict=False))
            lines.append(f"Target {target}: {pairs}")
        for k, p in enumerate(parents):
            pairs = ", ".join(f"{a}={v:.2f}" for a, v in zip(names, p.features, strict=False))
            lines.append(f"\nParent {k + 1} (similarity {p.similarity:.3f} to {p.target}, "
                         f"differentiation {p.differentiation:.3f}; features {pairs}):\n"
                         f"```program\n{to_text(p.program)}```")
        lines.append("\nReflect briefly: which parts of the better parents move the features "
                     "toward the target, and which make solvers disagree? Then write ONE new "
                     "improved program in a ```program block.")
        return [{"role": "system", "content": system},
                {"role": "user", "content": "\n".join(lines)}]

    def _ask(self, messages: list[dict]) -> str | None:
        """POST to /chat/completions with retries (waiting as long as a Retry-After asks, up
        to MAX_RETRY_AFTER); None (counted) when every try fails, but LLMEndpointError when
        the endpoint has never answered, refuses the key or the model, or has now failed
        `give_up_after` proposals in a row: a dead endpoint stops the run instead of
        counting failures for hours."""
        cfg = self.config
        body = json.dumps({"model": cfg.model, "messages": messages,
                           "temperature": cfg.temperature, "max_tokens": cfg.max_tokens},
                          allow_nan=False).encode()
        headers = {"Content-Type": "application/json"}
        if cfg.api_key:
            headers["Authorization"] = f"Bearer {cfg.api_key}"
        url = completions_url(cfg.base_url)
        reason, detail, tries, wait, hint = "http_error", "", 0, 0.0, ""
        time.sleep(max(self.not_before - time.monotonic(), 0.0))  # the last Retry-After
        for attempt in range(cfg.retries + 1):
            if attempt:
                time.sleep(max(min(cfg.backoff * 2.0 ** (attempt - 1), MAX_RETRY_AFTER), wait))
            self.stats["requests"] += 1
            tries += 1
            try:
                data = post_json(url, body, headers, cfg.timeout)
                content = _reply_text(data["choices"][0]["message"]["content"])
            except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError,
                    TypeError) as exc:
                reason, detail, retry = _classify_failure(exc, cfg.timeout)
                detail = _redacted(detail, cfg.api_key)
                wait = _retry_after(exc)
                self.not_before = time.monotonic() + wait
                hint = _FATAL.get(getattr(exc, "code", None), "")
                if not retry:
                    break
                continue
            self.answered, self.failed_in_row = True, 0
            return content
        self.stats[f"failed_{reason}"] += 1
        self.failed_in_row += 1
        if not hint:
            hint = ("raise --llm-timeout or check" if reason == "timeout" else "check") + \
                " --llm-url or COPLUG_LLM_BASE_URL"
        if not self.answered:
            raise LLMEndpointError(f"LLM endpoint {url} did not answer the first request "
                                   f"({detail}; {tries} tries): {hint}")
        if hint in _FATAL.values() or self.failed_in_row >= cfg.give_up_after:
            raise LLMEndpointError(f"LLM endpoint {url} failed {self.failed_in_row} "
                                   f"proposal(s) in a row after answering earlier ({detail}; "
                                   f"{tries} tries for the last): {hint}")
        return None


def _redacted(text: str, key: str) -> str:
    """`text` with the API key left out (a 401 body quoted it back)."""
    return text.replace(key, "<API key>") if key else text


def _reply_text(content: Any) -> str:
    """A reply's text; empty (counted as no program) when the message holds no text, such
    as a null content (was str(None), then counted as an unsafe program 'None')."""
    return content if isinstance(content, str) else ""


def _retry_after(exc: Exception) -> float:
    """Seconds an HTTP error's Retry-After header asks to wait (seconds or an HTTP date),
    capped at MAX_RETRY_AFTER; 0 where it names none."""
    headers = getattr(exc, "headers", None) if isinstance(exc, urllib.error.HTTPError) else None
    value = headers.get("Retry-After") if headers is not None else None
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return 0.0
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    return min(max(seconds, 0.0), MAX_RETRY_AFTER) if math.isfinite(seconds) else 0.0


def _error_body(exc: urllib.error.HTTPError) -> bytes:
    """Up to 4 KB of an HTTP error's body (read by `post_json` within the request's
    deadline), empty when it cannot be read."""
    try:
        raw = exc.read(4096)
    except (OSError, http.client.HTTPException, AttributeError, ValueError):
        return b""
    return raw if isinstance(raw, bytes) else b""


def _server_message(exc: urllib.error.HTTPError) -> str:
    """The error an endpoint put in its reply body ({"error": {"message": ...}} or text),
    on one line and short; empty when it gave none (or `post_json` did not read it)."""
    text = getattr(exc, "said", b"").decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = text
    if isinstance(data, dict):
        error = data.get("error", data.get("message", data.get("detail", "")))
        data = error.get("message", "") if isinstance(error, dict) else error
    words = " ".join(str(data).split())
    words = "".join(c for c in words if c.isprintable())
    return words[:200] + ("..." if len(words) > 200 else "")


def _classify_failure(exc: Exception, timeout: float) -> tuple[str, str, bool]:
    """(stats reason, readable detail, worth retrying) for one failed request."""
    if isinstance(exc, urllib.error.HTTPError):
        said = _server_message(exc)
        detail = f"HTTP {exc.code} {exc.reason}" + (f": {said}" if said else "")
        return "http_error", detail, exc.code >= 500 or exc.code == 429
    if isinstance(exc, TimeoutError) or (isinstance(exc, urllib.error.URLError)
                                         and isinstance(exc.reason, TimeoutError)):
        return "timeout", f"no complete reply within {timeout:g} s", True
    if isinstance(exc, urllib.error.URLError):
        return "http_error", f"cannot connect: {exc.reason}", True
    if isinstance(exc, http.client.IncompleteRead):
        return "http_error", f"the reply broke off after {len(exc.partial)} bytes", True
    if isinstance(exc, (http.client.RemoteDisconnected, ConnectionError)):
        return "http_error", f"the connection closed without a reply ({exc})", True
    if isinstance(exc, http.client.BadStatusLine):
        line = str(exc).strip().splitlines()[0][:60] if str(exc).strip() else "empty"
        return "http_error", f"the reply is not HTTP (status line {line!r})", False
    if isinstance(exc, http.client.HTTPException):
        return "http_error", f"broken HTTP reply ({type(exc).__name__}: {exc})", True
    if isinstance(exc, OSError):
        return "http_error", f"connection failed: {exc}", True
    if isinstance(exc, json.JSONDecodeError):
        return "bad_response", "the reply is not JSON", False
    if isinstance(exc, ValueError):  # post_json's own: too large, nested too deeply
        return "bad_response", str(exc), False
    return "bad_response", "the reply is not chat-completions JSON", False


def fenced_blocks(reply: str) -> list[tuple[str, str, bool]]:
    """(tag, text, closed) of each ``` block in a reply, in order, read line by line: a regex
    over the reply backtracked quadratically on a fence before a long run of spaces (32k
    spaces: 5 s). Inside a block the next ``` closes it, prose after it left out; one the
    reply leaves open (cut off at max_tokens) runs to its end, `closed` False; ```sum(x)```
    on one line is a block too."""
    blocks: list[tuple[str, str, bool]] = []
    tag: str | None = None  # None: outside a block
    body: list[str] = []
    for line in reply.splitlines(keepends=True):
        if tag is None:
            text = line.strip()
            if not text.startswith("```"):
                continue
            rest = text[3:].strip()
            if "```" in rest:  # opened and closed on this line
                blocks.append(("", rest[:rest.index("```")].strip(), True))
            elif _TAG.fullmatch(rest):
                tag, body = rest.lower(), []
            else:
                tag, body = "", [rest + "\n"]
        elif "```" in line:
            last = line[:line.index("```")].strip()
            blocks.append((tag, "".join(body) + (last + "\n" if last else ""), True))
            tag = None
        else:
            body.append(line)
    if tag is not None:
        blocks.append((tag, "".join(body), False))
    return blocks


def extract_program(reply: str, exclude: Sequence[str] = ()) -> str | None:
    """The program in a chat reply: of its fenced blocks with text that are not `exclude`d
    (the parents the prompt showed, echoed back), the last closed ```program block (the tag
    the prompt asks for), else the last closed block, else the last one left open (cut off
    at max_tokens); with no fenced block at all, the whole (stripped) reply."""
    blocks = fenced_blocks(reply)
    if not blocks:
        return reply.strip() or None
    echoed = {text.strip() for text in exclude}
    usable = [(tag, text, closed) for tag, text, closed in blocks
              if text.strip() and text.strip() not in echoed]
    for wanted in ((lambda t, c: t == "program" and c), (lambda t, c: c), (lambda t, c: True)):
        picked = [text for tag, text, closed in usable if wanted(tag, closed)]
        if picked:
            return picked[-1]
    return None
