"""``kli``'s text output: one table renderer (:mod:`.table`), kubectl's ages (:mod:`.age`) and the
table of each command over the library's reports (``get``, ``describe``, ``inspect``,
``definitions``). Pure formatting: records in, text out."""
