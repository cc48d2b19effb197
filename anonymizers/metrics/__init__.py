"""The shared writer of release metrics and the ratios it publishes.

* :mod:`~anonymizers.metrics.writer`: every family's figures reach ``{build}.metrics``
  and ``{build}.metric_series`` through it, and every count then through the interval
  filter.
* :mod:`~anonymizers.metrics.shares`: a quotient of two counts, published from the
  filtered counts.

A family's own measures live in its folder: the generalization family's displacement,
cluster preservation and re-identification risk (Monreale et al. 2010, Sections 6.1.2,
8.3 and 8.4) are :mod:`anonymizers.families.generalization.displacement`,
:mod:`~anonymizers.families.generalization.cluster_preservation` and
:mod:`~anonymizers.families.generalization.reidentification`.
"""
