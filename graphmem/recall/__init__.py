"""Recall: hybrid search (full-text, vector, graph proximity, fused by RRF) and multi-hop traversals."""
