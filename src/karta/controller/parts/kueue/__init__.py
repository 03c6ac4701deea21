"""The Kueue part of karta-controller (``--kueue``, docs/kueue.md section 9): karta as Kueue's
external-framework adapter for every covered, eligible kind: the suspend webhook
(:mod:`.webhook`) and the Workload reconciler (:mod:`.reconciler`), both thin shells over the
pure library :mod:`karta.kueue`."""
