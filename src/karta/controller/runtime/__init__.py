"""The controller's runtime: what every part runs on, and never a part itself (import-linter).

Manager (:mod:`.manager`), informers (:mod:`.informer`) and the covered types (:mod:`.tracker`),
work queue (:mod:`.workqueue`), leader election (:mod:`.leader`), events, logs and metrics, the
live definitions (:mod:`.definitions`), the CRD index (:mod:`.crds`), owner walks (:mod:`.owners`),
event-to-key mappers (:mod:`.mappers`), the group-object writer (:mod:`.group_writer`) and the
webhook server (:mod:`.webhook`).
"""
