"""Kueue for every Karta type: karta as Kueue's "external framework" adapter (issue 25,
docs/kueue.md).

Kueue (sigs.k8s.io/kueue) shares quota between teams; each kind it queues needs an adapter that
creates its ``Workload`` objects and suspends and resumes the job. A definition with suspend and
resume actions holds every fact that adapter needs, so karta is that adapter, once, for every type.
This package is the library side, pure functions the controller part calls: the Kueue
``Configuration`` generated from the definitions (``config``); whether a definition can be managed
(``eligibility``); the Workload of a workload and the equivalence check (``workload``); an admission
as per-PodSet values (``admission``); the patches that start and stop the workload (``patches``);
the Finished condition (``finished``); IsActive and PodsReady (``activity``); and the names Kueue
and karta agree on (``names``).
"""
