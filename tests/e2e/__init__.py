"""Tests against a real Kubernetes API server (see conftest.py and hack/cluster/)."""
