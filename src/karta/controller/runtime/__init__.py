"""The controller's runtime: what every part runs on, and never a part itself (import-linter).

Manager (:mod:`.manager`), the parts that follow the covered types (:mod:`.follow`, over
:mod:`karta.kube.cache` and :mod:`karta.kube.tracker`), work queue (:mod:`.workqueue`), leader
election (:mod:`.leader`), events, logs and metrics, the live definitions (:mod:`.definitions`),
the CRD index (:mod:`.crds`), owner walks (:mod:`.owners`), event-to-key mappers
(:mod:`.mappers`), the group-object writer (:mod:`.group_writer`), the backend options read from
discovery (:mod:`.served`), the quarantine record (:mod:`.quarantine`), the admission child
process (:mod:`.child`) and the webhook server (:mod:`.webhook`).
"""
