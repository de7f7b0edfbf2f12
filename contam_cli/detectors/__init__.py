"""Model-based detectors: per-token scores (Min-K%, Min-K%++, perplexity, zlib), guided prompting,
and the providers that score text with a model (hf, openai, the built-in n-gram LM)."""
