"""coplug.learned: the learned models and the offline scripts that train them.

Modules (import them directly):

- ``rowdualnet``: RowDualNet, LAP row duals from per-row features (``load()`` gives the
  shipped checkpoint); trained by ``python -m coplug.learned.train_rowdual``.
- ``pmvb_predictors``, ``pmvb_features``: PMVB predictors (logreg, gbt, mlp) behind
  ``fit``/``predict_proba``; trained by ``python -m coplug.learned.train_pmvb``.
- ``fair_spectral``: SC, FairSC and R-FairSC as a scikit-learn estimator.
"""
