"""Tests of the Karta CRD against a real API server."""
