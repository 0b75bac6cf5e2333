"""Program proposers behind one interface: offline symbolic search and an LLM with reflection.

`SymbolicProposer` (the default, no network) mutates and crosses over expression trees.
`LLMProposer` asks any OpenAI-compatible chat endpoint for programs, showing it parent
programs with their scores and the target landscape (the reflection step). Every
proposal goes through the same validation; rejections are counted by reason in `stats`.
An endpoint that fails its very first request raises `LLMEndpointError` naming the URL.
"""

from __future__ import annotations

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
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Protocol

import numpy as np

from coplug.formulations.bbo.grammar import (
    FUNCTIONS,
    SCALAR,
    VECTOR,
    Node,
    Program,
    ProgramError,
    shape_of,
    to_text,
)
from coplug.formulations.bbo.validate import load
from coplug.plugins.errors import CoplugError, InputError


class LLMEndpointError(CoplugError, ConnectionError):
    """The LLM endpoint never answered: unreachable, refusing, or not a chat-completions API."""


@dataclass(frozen=True)
class Scored:
    """A program with its two objectives, as shown to proposers."""

    program: Program
    similarity: float
    differentiation: float
    target: str = ""
    features: tuple[float, ...] = ()


class Proposer(Protocol):
    """Anything that turns scored parents into new validated programs."""

    name: str
    stats: Counter

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator,
                context: dict[str, Any]) -> list[Program]: ...


def accept(text: Any, dim: int, lower: float, upper: float, max_nodes: int,
           stats: Counter) -> Program | None:
    """Parse and validate proposed text; count the outcome in `stats` by reason."""
    try:
        program = load(text, dim, lower, upper)
    except ProgramError as exc:
        stats[f"rejected_{exc.kind}"] += 1
        return None
    if program.size() > max_nodes:
        stats["rejected_too_large"] += 1
        return None
    if not any(node.op in ("x", "xi") for node in _all_nodes(program)):
        stats["rejected_constant"] += 1
        return None
    stats["accepted"] += 1
    return program


def _all_nodes(program: Program) -> list[Node]:
    return [n for tree in [*(t for _, t in program.lets), program.body] for n in tree.walk()]


# No tanh: Pyomo hands it to SCIP as a ratio of exponentials, which SCIP bounds poorly.
_UNARY = ("sin", "cos", "abs", "square", "sqrt_abs", "log1p_abs", "gauss")
_BINARY = ("add", "sub", "mul")


def _wrap(kind: str, a: Node) -> Node:
    """Apply a SCIP-friendly unary building block to a subtree."""
    if kind == "square":
        return Node("pow", (a, Node("num", value=2.0)))
    if kind == "sqrt_abs":
        return Node("sqrt", (Node("abs", (a,)),))
    if kind == "log1p_abs":
        return Node("log", (Node("add", (Node("num", value=1.0), Node("abs", (a,)))),))
    if kind == "gauss":
        return Node("exp", (Node("neg", (Node("pow", (a, Node("num", value=2.0))),)),))
    return Node(kind, (a,))


@dataclass
class SymbolicProposer:
    """Offline proposer: subtree replacement, constant jitter, wrapping, operator swap,
    shrinking, added terms, and subtree crossover between parents."""

    dim: int
    lower: float = -5.0
    upper: float = 5.0
    max_nodes: int = 40
    crossover_rate: float = 0.4
    attempts: int = 25
    name: str = "symbolic"
    stats: Counter = field(default_factory=Counter)

    def random_program(self, rng: np.random.Generator, depth: int = 3) -> Program:
        """A random valid program (the seeds of evolution and the random baseline)."""
        for _ in range(self.attempts * 4):
            body = self._random(rng, SCALAR, depth)
            program = accept(to_text(Program(self.dim, (), body, self.lower, self.upper)),
                             self.dim, self.lower, self.upper, self.max_nodes, Counter())
            if program is not None:
                return program
        raise InputError("could not draw a valid random program; raise max_nodes")

    def propose(self, parents: Sequence[Scored], n: int, rng: np.random.Generator,
                context: dict[str, Any] | None = None) -> list[Program]:
        """n children of the given parents (a random program where every attempt fails)."""
        if not parents:
            return [self.random_program(rng) for _ in range(n)]
        out = []
        for _ in range(n):
            for _ in range(self.attempts):
                a = parents[int(rng.integers(len(parents)))].program
                if len(parents) > 1 and rng.random() < self.crossover_rate:
                    b = parents[int(rng.integers(len(parents)))].program
                    child = self._crossover(a, b, rng)
                else:
                    child = self._mutate(a, rng)
                program = accept(to_text(child), self.dim, self.lower, self.upper,
                                 self.max_nodes, self.stats) if child is not None else None
                if program is not None and program != a:
                    out.append(program)
                    break
            else:
                self.stats["fallback_random"] += 1
                out.append(self.random_program(rng))
        return out

    def _random(self, rng: np.random.Generator, shape: int, depth: int) -> Node:
        """A random expression of the given shape."""
        if depth <= 0 or rng.random() < 0.25:
            return self._leaf(rng, shape)
        r = rng.random()
        if shape == SCALAR and r < 0.45:
            return Node("sum", (self._random(rng, VECTOR, depth - 1),))
        if r < 0.7:
            op = _BINARY[int(rng.integers(len(_BINARY)))]
            other = shape if rng.random() < 0.6 else SCALAR
            left = self._random(rng, shape, depth - 1)
            return Node(op, (left, self._random(rng, other, depth - 1)))
        return _wrap(_UNARY[int(rng.integers(len(_UNARY)))], self._random(rng, shape, depth - 1))

    def _leaf(self, rng: np.random.Generator, shape: int) -> Node:
        span = self.upper - self.lower
        if shape == VECTOR:
            r = rng.random()
            if r < 0.4:
                return Node("x")
            shift = Node("vec", value=tuple(np.round(self.lower + span * (0.1 + 0.8 * rng.random(
                self.dim)), 2).tolist()))
            if r < 0.8:
                return Node("sub", (Node("x"), shift))
            scale = Node("vec", value=tuple(np.round(rng.uniform(0.2, 3.0, self.dim), 2).tolist()))
            return Node("mul", (scale, Node("x")))
        if rng.random() < 0.5:
            return Node("xi", value=int(rng.integers(self.dim)))
        return Node("num", value=float(np.round(rng.uniform(-3, 3), 2)))

    def _mutate(self, program: Program, rng: np.random.Generator) -> Program | None:
        trees = self._trees(program)
        k = int(rng.integers(len(trees)))
        nodes = list(trees[k].walk())
        target = nodes[int(rng.integers(len(nodes)))]
        shape = shape_of(target, program.shapes)
        kind = rng.choice(["subtree", "jitter", "wrap", "operator", "shrink", "add_term"])
        if kind == "jitter" and target.op in ("num", "vec"):
            noise = rng.normal(0, 0.3, np.shape(target.value))
            value = np.round(np.asarray(target.value) + noise, 3)
            value = float(value) if target.op == "num" else tuple(value.tolist())
            new = Node(target.op, value=value)
        elif kind == "wrap" and shape in (SCALAR, VECTOR):
            new = _wrap(_UNARY[int(rng.integers(len(_UNARY)))], target)
        elif kind == "operator" and target.op in _BINARY:
            new = Node(_BINARY[int(rng.integers(len(_BINARY)))], target.args)
        elif kind == "shrink":
            same = [a for a in target.args if shape_of(a, program.shapes) == shape]
            if not same:
                return None
            new = same[int(rng.integers(len(same)))]
        elif kind == "add_term" and shape in (SCALAR, VECTOR):
            new = Node("add", (target, self._random(rng, shape, 2)))
        elif shape in (SCALAR, VECTOR):
            new = self._random(rng, shape, 2)
        else:
            return None
        trees[k] = _replace(trees[k], target, new)
        return self._rebuild(program, trees)

    def _crossover(self, a: Program, b: Program, rng: np.random.Generator) -> Program | None:
        donors = [n for n in b.body.walk() if not any(m.op == "ref" for m in n.walk())
                  and shape_of(n, b.shapes) in (SCALAR, VECTOR)]
        nodes = list(a.body.walk())
        target = nodes[int(rng.integers(len(nodes)))]
        shape = shape_of(target, a.shapes)
        fitting = [n for n in donors if shape_of(n, b.shapes) == shape]
        if not fitting:
            return None
        donor = fitting[int(rng.integers(len(fitting)))]
        return replace(a, body=_replace(a.body, target, donor))

    @staticmethod
    def _trees(program: Program) -> list[Node]:
        return [tree for _, tree in program.lets] + [program.body]

    @staticmethod
    def _rebuild(program: Program, trees: list[Node]) -> Program:
        lets = tuple((name, tree) for (name, _), tree in zip(program.lets, trees, strict=False))
        return replace(program, lets=lets, body=trees[-1])


def _replace(tree: Node, target: Node, new: Node) -> Node:
    """Copy of `tree` with the first occurrence (by identity) of `target` replaced."""
    if tree is target:
        return new
    if not tree.args:
        return tree
    args = tuple(_replace(arg, target, new) for arg in tree.args)
    return tree if all(x is y for x, y in zip(args, tree.args, strict=True)) else Node(
        tree.op, args, tree.value)


GRAMMAR_HELP = f"""A benchmark program is a minimized objective over x, a vector of length DIM in a
box. Write Python-like lines: optional `name = expression` lines, then one final line with
the scalar objective. Allowed: numbers, x (the vector), x[i] (i an integer literal),
+ - * / **, functions {", ".join(sorted(FUNCTIONS))} (elementwise on vectors; sum() and
prod() reduce a vector to a scalar; max/min take two arguments), pi, vector literals
[a, b, ...] of length DIM and DIM x DIM matrix literals used as M @ v. Nothing else: no
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

    def __post_init__(self) -> None:
        """Reject settings no request could use, naming the option (before any request)."""
        self.base_url = _checked_base_url(self.base_url)
        if not (isinstance(self.timeout, (int, float)) and 0 < self.timeout < math.inf):
            raise InputError(f"LLM timeout must be a positive number of seconds (--llm-timeout),"
                             f" got {self.timeout!r}")
        if not (isinstance(self.retries, int) and self.retries >= 0):
            raise InputError(f"LLM retries must be a non-negative integer, got {self.retries!r}")
        if not (isinstance(self.backoff, (int, float)) and 0 <= self.backoff < math.inf):
            raise InputError(f"LLM backoff must be a non-negative number, got {self.backoff!r}")
        if not (isinstance(self.max_tokens, int) and self.max_tokens >= 1):
            raise InputError(f"LLM max_tokens must be a positive integer, got {self.max_tokens!r}")

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


def _checked_base_url(url: Any) -> str:
    """The base URL without surrounding whitespace (as pasted env vars carry); one that no
    request could use (malformed, not http(s), no host, inner spaces) is refused, named."""
    example = "use e.g. http://127.0.0.1:8000/v1 (--llm-url or COPLUG_LLM_BASE_URL)"
    if not isinstance(url, str):
        raise InputError(f"LLM base URL must be text, got {url!r}; {example}")
    text = url.strip()
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 - parsing the port raises ValueError on a bad one
    except ValueError as exc:
        raise InputError(f"LLM base URL {url!r} is malformed ({exc}); {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"LLM base URL {url!r} needs an http:// or https:// scheme and a "
                         f"host; {example}")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise InputError(f"LLM base URL {url!r} contains spaces or control characters; "
                         f"{example}")
    return text


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


def post_json(url: str, body: bytes, headers: dict[str, str], timeout: float) -> Any:
    """POST `body` and parse the JSON reply, all within `timeout` seconds (a deadline for the
    whole request, not per read); transport failures raise OSError or HTTPException, a
    reply that is not JSON ValueError, and one cut off by the deadline TimeoutError."""
    deadline = _Deadline(timeout)
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = urllib.request.build_opener(_WatchedHTTPHandler(deadline),
                                         _WatchedHTTPSHandler(deadline))
    try:
        with opener.open(request, timeout=timeout) as response:
            raw = response.read()
    except (OSError, http.client.HTTPException) as exc:
        if deadline.expired and not isinstance(exc, urllib.error.HTTPError):
            raise TimeoutError(f"no complete reply within {timeout:g} s") from None
        raise
    finally:
        deadline.cancel()
    if deadline.expired:
        raise TimeoutError(f"no complete reply within {timeout:g} s")
    return json.loads(raw.decode("utf-8", "replace"))


_FENCE = re.compile(r"```(?:[a-zA-Z]*)\n(.*?)```", re.S)


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
            text = extract_program(reply)
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
        """POST to /chat/completions with retries; None (counted) when every try fails, but
        LLMEndpointError when the endpoint has never answered, so a wrong or dead URL stops
        the run at its first request instead of counting failures for hours."""
        cfg = self.config
        body = json.dumps({"model": cfg.model, "messages": messages,
                           "temperature": cfg.temperature, "max_tokens": cfg.max_tokens}).encode()
        headers = {"Content-Type": "application/json"}
        if cfg.api_key:
            headers["Authorization"] = f"Bearer {cfg.api_key}"
        url = cfg.base_url.rstrip("/") + "/chat/completions"
        reason, detail, tries = "http_error", "", 0
        for attempt in range(cfg.retries + 1):
            if attempt:
                time.sleep(cfg.backoff * 2 ** (attempt - 1))
            self.stats["requests"] += 1
            tries += 1
            try:
                data = post_json(url, body, headers, cfg.timeout)
                content = str(data["choices"][0]["message"]["content"])
            except (OSError, http.client.HTTPException, ValueError, KeyError, IndexError,
                    TypeError) as exc:
                reason, detail, retry = _classify_failure(exc, cfg.timeout)
                if not retry:
                    break
                continue
            self.answered = True
            return content
        self.stats[f"failed_{reason}"] += 1
        if not self.answered:
            hint = "raise --llm-timeout or check" if reason == "timeout" else "check"
            raise LLMEndpointError(f"LLM endpoint {url} did not answer the first request "
                                   f"({detail}; {tries} tries): {hint} --llm-url or "
                                   "COPLUG_LLM_BASE_URL")
        return None


def _classify_failure(exc: Exception, timeout: float) -> tuple[str, str, bool]:
    """(stats reason, readable detail, worth retrying) for one failed request."""
    if isinstance(exc, urllib.error.HTTPError):
        return "http_error", f"HTTP {exc.code} {exc.reason}", exc.code >= 500 or exc.code == 429
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
    return "bad_response", "the reply is not chat-completions JSON", False


def extract_program(reply: str) -> str | None:
    """The program in a chat reply: the last fenced block, else the whole (stripped) reply."""
    blocks = _FENCE.findall(reply)
    if blocks:
        return blocks[-1]
    return reply.strip() or None
