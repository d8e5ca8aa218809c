"""The `http` system: the user's application as an HTTP service, one request per example (an OpenAI-compatible chat
endpoint, or any JSON API through a declared mapping), its spans received over OTLP/HTTP. system.py holds the System
class the registry loads; mapping.py the request bodies and where the answer, passages and citations are in a reply;
streaming.py a reply streamed as Server-Sent Events, assembled.
"""
