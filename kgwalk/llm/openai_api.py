"""Any OpenAI-compatible chat endpoint (`vllm serve`, hosted APIs), with a bound on requests in
flight, a request rate limit, and retries with exponential backoff on transient failures."""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.llm.base import Message

# Worth retrying: the server is busy, overloaded or restarting. Anything else is an answer.
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# About the request as a whole (endpoint, key, model): retrying or going on cannot help.
FATAL_STATUS = frozenset({401, 403, 404})
# The longest wait before a retry, a server's Retry-After included: past it a verbalize stage would
# stall for minutes on one request; the retries (llm.max_retries) still end in a clear failure.
MAX_BACKOFF_S = 30.0


class RateLimiter:
    """At most `per_second` starts per second, spaced evenly, across threads. Each caller gets the
    next free slot; an idle spell earns no burst. `clock` and `sleep` are injectable so the
    spacing can be checked exactly, without measuring time."""

    def __init__(self, per_second: float | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self._clock = clock
        self._sleep = sleep

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        self._sleep(max(0.0, start - now))


class OpenAIChat:
    def __init__(self, conf: LLMConf, setting: str) -> None:
        self.conf = conf
        self.setting = setting
        headers = {}
        key = os.environ.get(conf.api_key_env) if conf.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.url = str(conf.base_url).rstrip("/") + "/chat/completions"  # checked by check_llm_conf
        self.client = httpx.Client(
            headers=headers,
            timeout=conf.timeout_s,
            limits=httpx.Limits(max_connections=conf.concurrency, max_keepalive_connections=conf.concurrency),
        )
        self.limiter = RateLimiter(conf.requests_per_second)
        # the bound holds per client, however many chat() calls run at once (Ray may run two
        # batches on one actor concurrently)
        self.in_flight = threading.BoundedSemaphore(conf.concurrency)
        self.retries = 0  # transient failures retried, over this client's life

    def chat(self, conversations: list[list[Message]]) -> list[str]:
        with ThreadPoolExecutor(self.conf.concurrency) as pool:
            return list(pool.map(self._one, conversations))

    def _one(self, messages: list[Message]) -> str:
        body = {"model": self.conf.model, "messages": messages, "temperature": self.conf.temperature, "max_tokens": self.conf.max_tokens}
        for attempt in range(self.conf.max_retries + 1):
            self.limiter.wait()
            retry_after = None
            try:
                with self.in_flight:
                    response = self.client.post(self.url, json=body)
            except httpx.TransportError as e:  # refused, reset, timed out
                problem = f"{type(e).__name__}: {e}"
            else:
                if response.status_code == 200:
                    return _reply_text(response)
                problem = f"HTTP {response.status_code}: {response.text[:200]!r}"
                if response.status_code in FATAL_STATUS:
                    raise KgwalkError(f"{self.setting}: {self.url} answered {problem} (check base_url, model and ${self.conf.api_key_env})")
                if response.status_code not in RETRY_STATUS:
                    return ""  # about this conversation (e.g. too long): the caller's fallback applies
                retry_after = _seconds(response.headers.get("retry-after"))
            if attempt == self.conf.max_retries:
                break
            self.retries += 1
            backoff = min(MAX_BACKOFF_S, 0.25 * 2**attempt) * (0.5 + random.random() / 2)  # jitter: no thundering herd
            time.sleep(min(MAX_BACKOFF_S, retry_after) if retry_after is not None else backoff)
        raise KgwalkError(f"{self.setting}: {self.url} failed {self.conf.max_retries + 1} times; last: {problem}")


def _reply_text(response: httpx.Response) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return ""  # a malformed reply counts as an empty one
    return content if isinstance(content, str) else ""


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
