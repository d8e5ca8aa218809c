"""The engines of hosted APIs (`openai`, `anthropic`, `gemini`): each vendor's requests and answers, the HTTP side they
share, usage counts and the vendors' batch APIs."""
