"""Every corpus CRD and workload manifest created on a real API server."""
