"""kgwalk inside the frameworks RAG apps are built with, each adapter behind its own extra:

- `kgwalk.integrations.langchain.KgwalkRetriever` (`pip install 'kgwalk[langchain]'`): a LangChain retriever;
- `kgwalk.integrations.llamaindex.KgwalkRetriever` (`kgwalk[llamaindex]`): a LlamaIndex retriever;
- `kgwalk.integrations.mcp` (`kgwalk[mcp]`): an MCP server, `kgwalk mcp` over stdio and /mcp on `kgwalk serve`.

Each retrieves in this process (`local_kg`: a Retriever over a built warehouse) or from a running
`kgwalk serve` (`remote_kg`: no model, index, Spark or Ray in the app). The core never imports this package.
"""

from kgwalk.integrations.source import KgSource, LocalKg, RemoteKg, WalkRecord, as_source, context_text, local_kg, remote_kg, walk_records

__all__ = ["KgSource", "LocalKg", "RemoteKg", "WalkRecord", "as_source", "context_text", "local_kg", "remote_kg", "walk_records"]
