"""``karta-controller``: the Karta operator, its admission webhooks, the gang reconciler, pod binding
and the platform metrics.

A thin process over the library and :mod:`karta.kube` (DESIGN.md section 2; it never imports
:mod:`karta.cli`, nor the reverse), in two packages and the wiring:

* :mod:`~karta.controller.runtime`: the framework every part runs on (manager, informers and
  their covered-types tracker, work queue, leader election, events, logs, metrics, the live
  definitions, the webhook server). It never imports a part;
* :mod:`~karta.controller.parts`: what the controller does (the Karta operator and webhooks, the
  gang reconciler, pod binding and escaped pods, platform metrics, catalog install,
  certificates), each independent of the others;
* :mod:`~karta.controller.options` (the command line, controller-runtime's flag names),
  :mod:`~karta.controller.main` (wires the parts into a manager), :mod:`~karta.controller.rbac` and
  :mod:`~karta.controller.registration` (what the parts need from the cluster).
"""
