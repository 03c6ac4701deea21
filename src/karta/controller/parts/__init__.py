"""The controller's parts, each independent of the others (import-linter): the Karta operator and
its webhooks (:mod:`.kartas`), the gang reconciler (:mod:`.gangs`), pod binding and escaped pods
(:mod:`.pod_binding`), platform metrics (:mod:`.platform`), catalog install
(:mod:`.catalog_install`) and certificates (:mod:`.certs`). A part runs on
:mod:`karta.controller.runtime`; :mod:`karta.controller.main` wires them."""
