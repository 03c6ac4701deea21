"""``karta-controller``: the Karta operator, its admission webhooks and the gang reconciler.

A thin process over the library and :mod:`karta.kube` (DESIGN.md section 2; it never imports
:mod:`karta.cli`, nor the reverse). The modules:

* :mod:`~karta.controller.options`: the command line (controller-runtime's flag names);
* :mod:`~karta.controller.manager`: the runnables, leader-only or not, the health and metrics
  endpoints, signals and graceful shutdown;
* :mod:`~karta.controller.definitions`: the usable definitions, live (cluster Kartas over a
  directory over the catalog, per root GVK, as ``kli``);
* :mod:`~karta.controller.metrics`, :mod:`~karta.controller.events`, :mod:`~karta.controller.logs`:
  what it tells operators;
* :mod:`~karta.controller.webhook`: the HTTPS admission server.
"""
