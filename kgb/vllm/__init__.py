"""Shared references and input builders for the vLLM operator specs."""
