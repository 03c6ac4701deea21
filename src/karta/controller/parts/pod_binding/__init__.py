"""Pod binding: the pod admission webhook (:mod:`.admission`) and the leader-only pass that reports
the pods that escaped it (:mod:`.escaped`), which resolves pods with the same binder."""
