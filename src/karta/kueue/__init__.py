"""Kueue for every Karta type: karta as Kueue's "external framework" adapter (issue 25).

Kueue (sigs.k8s.io/kueue) shares quota between teams; each kind it queues needs an adapter that
creates its ``Workload`` objects and suspends and resumes the job. A definition with suspend and
resume actions holds every fact that adapter needs, so karta is that adapter, once, for every type.
This package is the library side: the Kueue ``Configuration`` generated from the definitions
(``config``), and the Workload, admission and restore logic the controller part uses.
"""
