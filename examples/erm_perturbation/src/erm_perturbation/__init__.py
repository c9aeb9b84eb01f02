"""A dpclaims paper plugin: Chaudhuri, Monteleoni and Sarwate (2011), "Differentially Private
Empirical Risk Minimization" (JMLR 12), output and objective perturbation for regularised
logistic regression.

The claims are in ``chaudhuri_monteleoni_sarwate_2011.toml``; their experiments in
:mod:`erm_perturbation.experiments`; the algorithms in :mod:`erm_perturbation.algorithms`.
"""
