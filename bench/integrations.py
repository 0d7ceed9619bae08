"""Benchmark: what an adapter adds over the retrieval it wraps, in process (kgwalk/integrations).

    .venv/bin/python bench/integrations.py [--warehouse /tmp/kgwalk-integrations-bench] [--name sample] [--questions 200] [--rounds 3]

The bundled MetaQA sample built with the default config (`kgwalk build`, once, where the warehouse
lacks it), one warmed-up Retriever, and the three adapters over it: the LangChain retriever's
`invoke`, the LlamaIndex retriever's `retrieve`, and the MCP server's `search` tool called in its
event loop (argument checks, a worker thread, the structured result; no transport). Questions are
made from the sample's triples, spread over them, at the default k (3 nodes x 3 walks). Per
question and round the baseline (`Retriever.retrieve`) and each adapter run back to back, which of
the two goes first alternating; the overhead is each pair's difference, and its p50 is the figure
to hold under 5 ms. Writes bench/results/integrations.md.
"""

from __future__ import annotations

import argparse
import inspect
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from report import git_head, save_report

from kgwalk.config import load_config
from kgwalk.integrations import LocalKg
from kgwalk.integrations.langchain import KgwalkRetriever as LangChainRetriever
from kgwalk.integrations.llamaindex import KgwalkRetriever as LlamaIndexRetriever
from kgwalk.integrations.mcp import InProcess, mcp_server
from kgwalk.query import Retriever
from kgwalk.storage import read_table, table_exists

REPO = Path(__file__).resolve().parent.parent


def questions(cfg: Any, count: int) -> list[str]:
    """`count` questions from the KG's triples, spread evenly over them: a relation of a head, or the heads of a tail."""
    edges = read_table(cfg.table("edges"), ["src", "rel", "dst"]).sort_by([("src", "ascending"), ("rel", "ascending"), ("dst", "ascending")])
    entities = read_table(cfg.table("entities"), ["id", "label"]).to_pydict()
    relations = read_table(cfg.table("relations"), ["id", "label"]).to_pydict()
    label, relation = dict(zip(entities["id"], entities["label"])), dict(zip(relations["id"], relations["label"]))
    rows = edges.to_pylist()[:: max(edges.num_rows // count, 1)][:count]
    return [f"what is the {relation[e['rel']].replace('_', ' ')} of {label[e['src']]}" if i % 2 else
            f"which films have {label[e['dst']]} as {relation[e['rel']].replace('_', ' ')}" for i, e in enumerate(rows)]


async def ms(call: Callable[[], Any]) -> float:
    """How long `call` takes, awaiting what it returns where that is a coroutine."""
    start = time.perf_counter()
    result = call()
    if inspect.isawaitable(result):
        await result
    return (time.perf_counter() - start) * 1000


async def measure(retriever: Retriever, asked: list[str], rounds: int, k: int) -> dict[str, list[tuple[float, float]]]:
    """Per adapter, (baseline ms, adapter ms) for each question of each round."""
    kg = LocalKg(retriever)
    langchain = LangChainRetriever(kg=kg, k_nodes=k, k_walks=k)
    llamaindex = LlamaIndexRetriever(kg, k_nodes=k, k_walks=k)
    server = mcp_server(InProcess(retriever))
    adapters: dict[str, Callable[[str], Any]] = {
        "LangChain `invoke`": langchain.invoke,
        "LlamaIndex `retrieve`": llamaindex.retrieve,
        "MCP `search` tool": lambda q: server.call_tool("search", {"question": q, "k_nodes": k, "k_walks": k}),
    }
    for q in asked:  # every question once through each, untimed
        for run in [lambda q: retriever.retrieve(q, k, k), *adapters.values()]:
            await ms(lambda: run(q))
    pairs: dict[str, list[tuple[float, float]]] = {name: [] for name in adapters}
    for r in range(rounds):
        for i, q in enumerate(asked):
            for name, run in adapters.items():
                base, adapter = lambda: retriever.retrieve(q, k, k), lambda: run(q)
                if (i + r) % 2:
                    adapter_ms, base_ms = await ms(adapter), await ms(base)
                else:
                    base_ms, adapter_ms = await ms(base), await ms(adapter)
                pairs[name].append((base_ms, adapter_ms))
    return pairs


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--warehouse", default="/tmp/kgwalk-integrations-bench")
    parser.add_argument("--name", default="sample")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cfg = load_config(None, [], name=args.name, warehouse=args.warehouse)
    if not table_exists(cfg.table("vectors")):
        subprocess.run([sys.executable, "-m", "kgwalk.cli", "build", "--name", args.name, "--warehouse", args.warehouse], check=True, cwd=REPO)
    retriever = Retriever(cfg)
    retriever.warm_up()
    asked = questions(cfg, args.questions)
    k = cfg.query.k_nodes
    pairs = anyio.run(measure, retriever, asked, args.rounds, k)
    retriever.close()
    body = ["| adapter | calls | baseline p50 ms (`Retriever.retrieve`) | candidate p50 ms (adapter) | added p50 ms (paired) | added p90 ms | added p50 / baseline p50 |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name, measured in pairs.items():
        base, adapter = [b for b, _ in measured], [a for _, a in measured]
        added = [a - b for b, a in measured]
        body.append(f"| {name} | {len(measured):,} | {statistics.median(base):.2f} | {statistics.median(adapter):.2f} | {statistics.median(added):.3f} "
                    f"| {pct(added, 90):.3f} | {statistics.median(added) / statistics.median(base):.1%} |")
    facts = [f"- measured {time.strftime('%Y-%m-%d')} at git {git_head(REPO)}; `python bench/integrations.py --questions {args.questions} --rounds {args.rounds}`",
             f"- KG: data/sample/metaqa_sample.txt built with the default config (`kgwalk build`: embed.model={cfg.embed.model}, "
             f"query.rerank={retriever.rerank}, query.mode={cfg.query.mode}); {len(asked)} questions from its triples, k_nodes = k_walks = {k}",
             f"- each call of an adapter is paired with a `Retriever.retrieve` of the same question just before or after it (alternating), "
             f"after one untimed pass; {args.rounds} rounds",
             f"- langchain-core {version('langchain-core')}, llama-index-core {version('llama-index-core')}, mcp {version('mcp')}",
             f"- load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other jobs shared the machine where above {os.cpu_count()})"]
    save_report("integrations", "Adapter overhead over the retrieval it wraps, in process", facts, body)


if __name__ == "__main__":
    main()
