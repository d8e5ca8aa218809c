"""The `traced` system: an application's traces exported elsewhere (OTLP/JSON, Phoenix, Langfuse), scored as
predictions (`ragbench score --traces FILE`). system.py holds the System class the registry loads."""
