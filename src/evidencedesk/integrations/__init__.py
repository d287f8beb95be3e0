"""Adapters to the tools people already use, each behind its optional extra:

* ``evidencedesk.integrations.mcp_server``: the Model Context Protocol server behind ``evidencedesk mcp``
  (extra ``mcp``);
* ``evidencedesk.integrations.langchain``: a LangChain retriever (extra ``langchain``);
* ``evidencedesk.integrations.llamaindex``: a LlamaIndex retriever (extra ``llamaindex``).

The OpenAI-compatible chat routes are part of the service (``evidencedesk.server.routes_openai``).
Importing this package imports none of those libraries.
"""
