"""PMVB predictors: P(x_j = 1 in an optimum) from per-variable root features.

Three model kinds behind one scikit-learn style interface (`fit`, `predict_proba`):
logistic regression ("logreg"), gradient boosting ("gbt") and a torch MLP ("mlp"). A
share of the training rows is held out to calibrate the probabilities (isotonic or Platt
via `CalibratedClassifierCV` on the frozen model), since PMVB's Hoeffding bound is only as
honest as the calibration. `predict_variables(scip, vars)` is the hook the PMVB branching
rule calls at the root; `save`/`load_predictor` write and read checkpoints (.joblib, or
.pt for the MLP). Checkpoints are pickles: load only files you trust.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import torch
from numpy.typing import ArrayLike
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Tags, check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from coplug.formulations.checks import check_choice
from coplug.learned.checkpoint_io import (
    atomic_write,
    check_fingerprint,
    check_recorded_sha256,
    check_zip_crc,
    file_sha256,
    read_sidecar,
    write_fingerprint,
)
from coplug.learned.fit_state import unfitted_on_failure
from coplug.learned.pmvb_features import FEATURE_NAMES, FEATURE_VERSION, root_features
from coplug.plugins.arguments import detached, refuse_masked
from coplug.plugins.caller_warning import warn_at_caller
from coplug.plugins.errors import InputError

KINDS = ("logreg", "gbt", "mlp")
CALIBRATIONS = ("isotonic", "sigmoid", "none")
SEED_BOUND = 2**32  # sklearn's RandomState (train_test_split, calibration) takes seeds below it
FEATURE_LIMIT = 1e150  # StandardScaler squares the features: beyond this its variance overflows
BINARY = np.array([0, 1])  # the classes of a predictor that predates classes_ or never set it
MAX_CLIP = 1e6  # standardised features clipped to +-clip: float32 layers overflow past ~1e30


class TorchMLPClassifier(ClassifierMixin, BaseEstimator):
    """Binary classifier: ReLU MLP, full-batch Adam on log-loss, one CPU thread.

    Expects standardised inputs (`make_estimator` puts a StandardScaler in front); inputs
    are clipped to [-clip, clip] so a feature that was near-constant in training cannot
    blow up at prediction time. Any two labels are accepted (``classes_`` sorted, as
    scikit-learn does); the network's output is the probability of ``classes_[1]``.
    """

    def __init__(
        self, hidden: tuple[int, ...] = (64, 64), epochs: int = 200, lr: float = 5e-3,
        weight_decay: float = 1e-3, clip: float = 5.0, random_state: int = 0,
    ) -> None:
        self.hidden = hidden
        self.epochs = epochs
        self.lr = lr
        self.weight_decay = weight_decay
        self.clip = clip
        self.random_state = random_state

    def __sklearn_tags__(self) -> Tags:
        """Binary only, dense finite features (scikit-learn reads these in its checks)."""
        return _binary_tags(super().__sklearn_tags__())

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once the network exists (a failed fit leaves it unfitted)."""
        return hasattr(self, "net_")

    def _inputs(self, X: np.ndarray) -> torch.Tensor:
        """Float32 tensor of the (standardised) features, clipped in float64 before the cast."""
        clipped = np.clip(np.asarray(X, dtype=float), -self.clip, self.clip)
        return torch.from_numpy(clipped.astype(np.float32))

    def fit(self, X: ArrayLike, y: ArrayLike) -> TorchMLPClassifier:
        """Train on features X (n, k) and two-class labels y (n,)."""
        with unfitted_on_failure(self):  # a bad setting too: the old model must not stay
            self._check_settings()
            X, target = _fit_data(self, X, y, "TorchMLPClassifier training labels",
                                  "a probability model needs both classes")
            _check_features(X, "TorchMLPClassifier training features")
            seed = _seed(self.random_state, "TorchMLPClassifier")
            with torch.random.fork_rng(devices=[]):  # seed a copy: the caller's RNG stays
                torch.manual_seed(seed)
                return self._train(X, target.astype(np.float32))

    def _train(self, X: np.ndarray, y: np.ndarray) -> TorchMLPClassifier:
        """Build and train the network on validated data, y the 0/1 class index (seeded)."""
        sizes = (X.shape[1], *self.hidden)
        layers: list[torch.nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=True):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers, torch.nn.Linear(sizes[-1], 1))
        opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        inputs, target = self._inputs(X), torch.from_numpy(y)
        loss_fn = torch.nn.BCEWithLogitsLoss()
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny full-batch problem: threads only add contention
        try:
            for _ in range(self.epochs):
                opt.zero_grad()
                loss = loss_fn(net(inputs).squeeze(1), target)
                loss.backward()
                opt.step()
        finally:
            torch.set_num_threads(threads)
        if not all(torch.isfinite(w).all() for w in net.parameters()):
            raise InputError(f"TorchMLPClassifier training diverged to non-finite weights "
                             f"(lr {self.lr!r}); lower lr")
        self.net_ = net
        return self

    def _check_settings(self) -> None:
        """Validate the hyperparameters before training (scikit-learn: in fit, not __init__)."""
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, int | np.integer) \
                or self.epochs < 1:
            raise InputError(f"TorchMLPClassifier epochs must be an integer >= 1, "
                             f"got {self.epochs!r}")
        if not isinstance(self.hidden, tuple | list) or any(
                isinstance(h, bool) or not isinstance(h, int | np.integer) or h < 1
                for h in self.hidden):
            raise InputError(f"TorchMLPClassifier hidden must hold integers >= 1, "
                             f"got {self.hidden!r}")
        if _positive(self.lr, "lr") > float(np.finfo(np.float32).max):  # torch steps in float32
            raise InputError(f"TorchMLPClassifier lr must fit in float32, got {self.lr!r}")
        _positive(self.weight_decay, "weight_decay", zero_ok=True)
        if _positive(self.clip, "clip") > MAX_CLIP:
            raise InputError(f"TorchMLPClassifier clip must be at most {MAX_CLIP:g} (features "
                             f"are standardised; float32 layers overflow to NaN on larger "
                             f"inputs), got {self.clip!r}")

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Columns P(y = classes_[0]), P(y = classes_[1])."""
        check_is_fitted(self)
        X = _predict_data(self, X, self.net_[0].in_features)
        _check_features(X, "TorchMLPClassifier features")
        with torch.no_grad():
            p1 = torch.sigmoid(self.net_(self._inputs(X)).squeeze(1)).numpy().astype(float)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels from classes_: the second above probability 1/2 (the first at a tie)."""
        return _labels(self, self.predict_proba(X))


def make_estimator(kind: str, random_state: int = 0) -> Any:
    """An unfitted base classifier of `kind` (logreg, gbt or mlp)."""
    if kind == "logreg":
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    if kind == "gbt":
        return HistGradientBoostingClassifier(max_iter=150, learning_rate=0.1,
                                              random_state=random_state)
    if kind == "mlp":
        return make_pipeline(StandardScaler(), TorchMLPClassifier(random_state=random_state))
    raise InputError(f"unknown PMVB predictor kind {kind!r}; choose one of {', '.join(KINDS)}")


class PMVBPredictor(ClassifierMixin, BaseEstimator):
    """A calibrated per-variable probability model for PMVB.

    ``fit`` trains the `kind` classifier on (1 - calibration_share) of the rows and
    calibrates it on the rest with `calibration` ("isotonic", "sigmoid" = Platt, "none");
    with too few rows of a class to split, it stays uncalibrated (``calibrated_`` False).
    Any two labels are accepted (``classes_`` sorted, as scikit-learn does); PMVB trains on
    0/1, so ``predict_proba(X)[:, 1]`` is P(x_j = 1).
    """

    def __init__(
        self, kind: str = "logreg", calibration: str = "isotonic",
        calibration_share: float = 0.25, random_state: int = 0,
    ) -> None:
        self.kind = kind
        self.calibration = calibration
        self.calibration_share = calibration_share
        self.random_state = random_state

    def __sklearn_tags__(self) -> Tags:
        """Binary only, dense finite features (scikit-learn reads these in its checks)."""
        return _binary_tags(super().__sklearn_tags__())

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once the model exists (a failed fit leaves it unfitted)."""
        return hasattr(self, "model_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> PMVBPredictor:
        """Fit and calibrate on features X (n, n_features) and two-class labels y (n,)."""
        with unfitted_on_failure(self):  # a bad setting too: the old model must not stay
            self._check_settings()
            seed = _seed(self.random_state, "PMVBPredictor")
            X, target = _fit_data(self, X, y, "PMVB training labels", "solve more instances")
            _check_features(X, "PMVB training features", FEATURE_LIMIT,
                            _feature_names(X.shape[1]))
            with threadpool_limits(limits=1):  # small data: threads only add contention
                return self._fit(X, target, seed)

    def _check_settings(self) -> None:
        """Validate kind, calibration and calibration_share before any data is touched."""
        check_choice(self.kind, "PMVB predictor kind", KINDS)
        check_choice(self.calibration, "calibration", CALIBRATIONS)
        share = self.calibration_share
        if isinstance(share, bool) or not isinstance(share, int | float | np.number) \
                or not 0.0 < float(share) < 1.0:
            raise InputError(f"calibration_share must be a number strictly between 0 and 1, "
                             f"got {share!r}")

    def _fit(self, X: np.ndarray, y: np.ndarray, seed: int) -> PMVBPredictor:
        """Fit (and calibrate) on validated data, y the 0/1 class index, with an int seed."""
        self.calibrated_ = False
        split = None
        if self.calibration != "none" and np.bincount(y, minlength=2).min() >= 4:
            split = _calibration_split(X, y, float(self.calibration_share), seed)
        if split is None:
            self.model_ = make_estimator(self.kind, seed).fit(X, y)
            return self  # too few rows of a class to hold some out for calibration
        X_fit, X_cal, y_fit, y_cal = split
        base = make_estimator(self.kind, seed).fit(X_fit, y_fit)
        folds = int(min(5, np.bincount(y_cal, minlength=2).min()))
        if folds < 2:
            self.model_ = base
            return self
        model = CalibratedClassifierCV(FrozenEstimator(base), method=self.calibration, cv=folds)
        self.model_ = model.fit(X_cal, y_cal)
        self.calibrated_ = True
        return self

    def predict_proba(self, X: ArrayLike) -> np.ndarray:
        """Columns P(y = classes_[0]), P(y = classes_[1]): P(x_j = 0), P(x_j = 1) for PMVB."""
        check_is_fitted(self)
        X = _predict_data(self, X, len(FEATURE_NAMES))  # older checkpoints lack n_features_in_
        if X.shape[0] == 0:  # no variables: nothing to predict (sklearn refuses 0 rows)
            return np.zeros((0, 2))
        _check_features(X, "PMVB features", FEATURE_LIMIT, _feature_names(X.shape[1]))
        with threadpool_limits(limits=1):
            return np.asarray(self.model_.predict_proba(X), dtype=float)

    def predict(self, X: ArrayLike) -> np.ndarray:
        """Labels from classes_: the second above probability 1/2 (the first at a tie)."""
        return _labels(self, self.predict_proba(X))

    def predict_variables(self, scip: Any, variables: list[Any]) -> np.ndarray:
        """P(x_j = 1) for SCIP variables at the current (root) LP: the PMVB rule's hook."""
        column = _column_of_one(self)
        if not variables:
            return np.zeros(0)
        return self.predict_proba(root_features(scip, variables))[:, column]

    def save(self, path: str | Path) -> Path:
        """Write a checkpoint: .pt (torch.save) or .joblib, chosen by the suffix.

        Written to a temporary file and renamed over `path`, so an interrupt mid-write
        leaves the previous checkpoint intact rather than a corrupt one. The file's sha256
        goes beside it as `<name>.sha256`, which `load_predictor` checks (a corrupted
        .joblib loaded, then crashed the interpreter in predict_proba). A train_pmvb JSON
        beside `path` described the checkpoint this one replaces (its t, q and figures): it
        is removed, unless it records the sha256 of the other checkpoint sharing its stem
        (p.pt beside p.joblib), whose JSON it is.
        """
        check_is_fitted(self, "model_")
        path = Path(path).expanduser()
        if path.suffix not in (".pt", ".joblib"):
            raise InputError(f"checkpoint {path} must end in .joblib or .pt")
        if path.with_suffix(".json").is_dir():  # removed below: it describes the old file
            raise InputError(f"cannot write {path}: {path.with_suffix('.json')} is a folder")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file where a folder should be, a read-only place
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        dump = torch.save if path.suffix == ".pt" else joblib.dump
        atomic_write(path, lambda tmp: dump(self, tmp))
        write_fingerprint(path)
        meta_path = path.with_suffix(".json")
        try:
            meta = read_sidecar(meta_path, "") if meta_path.is_file() else None
        except InputError:  # unreadable: it describes nothing worth keeping
            meta = None
        if not _describes_sibling(path, meta):
            meta_path.unlink(missing_ok=True)
        return path


def _describes_sibling(path: Path, meta: Any) -> bool:
    """Whether the JSON `meta` beside `path` records the sha256 of the checkpoint with the
    other suffix (p.pt for p.joblib): it holds that file's t, q and figures, not `path`'s,
    so saving `path` keeps it and loading `path` reads the defaults."""
    sibling = path.with_suffix(".joblib" if path.suffix == ".pt" else ".pt")
    recorded = meta.get("sha256") if isinstance(meta, dict) else None
    if not (isinstance(recorded, str) and sibling.is_file()):
        return False
    try:
        return recorded == file_sha256(sibling)
    except OSError:  # unreadable: it cannot be shown to own the JSON
        return False


def _kind_hint(path: Path) -> str:
    """What a missing checkpoint named like a predictor kind or the data-free mode meant
    (`PMVBBranching("logreg")` read as a file name)."""
    name = str(path).strip().lower()
    if name in KINDS:
        return (f": {name!r} is a predictor kind, not a file; pass the checkpoint shipped for "
                f"a family, coplug.learned.pmvb_predictors.shipped_checkpoint(family, {name!r}), "
                "or a checkpoint path")
    if name == "lp":
        return ": the data-free mode is spelled 'lp'"
    return ""


def load_predictor(path: str | Path) -> PMVBPredictor:
    """Read a checkpoint written by `PMVBPredictor.save` (a trusted file)."""
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(f"PMVB checkpoint {path} does not exist{_kind_hint(path)}")
    if not path.is_file():
        raise InputError(f"PMVB checkpoint {path} is a directory, not a checkpoint file")
    if path.suffix not in (".pt", ".joblib"):
        raise InputError(f"checkpoint {path} must end in .joblib or .pt")
    meta = checkpoint_metadata(path)  # before unpickling: the file must be the one it records
    check_fingerprint(path, "PMVB checkpoint")
    if path.suffix == ".pt":
        check_zip_crc(path, "PMVB checkpoint")
    try:
        obj = torch.load(path, weights_only=False) if path.suffix == ".pt" else joblib.load(path)
    except Exception as exc:  # pickle, zip and EOF errors all mean the same thing here
        raise InputError(f"PMVB checkpoint {path} is unreadable or corrupt: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, PMVBPredictor):
        raise InputError(f"{path} holds a {type(obj).__name__}, not a PMVBPredictor")
    _refuse_foreign_metadata(path, obj, meta)
    _warn_if_stale(path, meta)
    return obj


def _refuse_foreign_metadata(path: Path, predictor: PMVBPredictor, meta: Any) -> None:
    """An InputError when the JSON beside the checkpoint (`meta`) names another kind or
    calibration than the predictor has (a JSON written before sha256s were recorded, kept
    beside other weights): its t, q and figures are not this predictor's."""
    if not isinstance(meta, dict):  # named where its t and q are read (`check_metadata`)
        return
    for key in ("kind", "calibration"):
        if key in meta and meta[key] != getattr(predictor, key, None):
            raise InputError(f"{path.with_suffix('.json')} describes a {key} {meta[key]!r} "
                             f"predictor, {path} holds a {getattr(predictor, key, None)!r} one: "
                             "retrain, or delete the JSON to use the checkpoint with default "
                             "t and q")


def _warn_if_stale(path: Path, meta: Any) -> None:
    """Warn when train_pmvb's JSON beside the checkpoint (`meta`) says it was trained on an
    older version of the root features: its predictions are then off (PMVB stays exact)."""
    reason = stale_features(meta)
    if reason is not None:
        warn_at_caller(f"PMVB checkpoint {path} {reason}: its probabilities are unreliable "
                       "(PMVB stays exact); retrain it with python -m coplug.learned.train_pmvb")


def stale_features(meta: Any) -> str | None:
    """Why a train_pmvb JSON's checkpoint was fitted on other root features than this coplug
    computes (its `feature_version`, missing before version 2), or None when it was not, or
    when the JSON does not come from train_pmvb (no `features` or `feature_version` key)."""
    if not isinstance(meta, dict) or not {"features", "feature_version"} & meta.keys():
        return None
    version = meta.get("feature_version", 1)
    if isinstance(version, bool) or not isinstance(version, int | float):
        return f"records feature_version {version!r}, not a version number"
    if version != FEATURE_VERSION:
        shown = version if isinstance(version, int) else f"{version:g}"  # 10**400 has no :g
        return (f"was trained on root features of version {shown}, this coplug computes "
                f"version {FEATURE_VERSION}")
    return None


def checkpoint_metadata(path: str | Path) -> dict[str, Any]:
    """The JSON written next to a checkpoint by train_pmvb (family, sizes, validation
    accuracy, the tuned "threshold" and "confidence"), or {} when there is none."""
    path = Path(path).expanduser()
    if not path.name:  # "." or "/": no file name to put a suffix on
        return {}
    meta_path = path.with_suffix(".json")
    if not meta_path.is_file():
        return {}
    meta = read_sidecar(meta_path, "PMVB checkpoint metadata")
    if _describes_sibling(path, meta):  # p.pt's, beside p.joblib (there or not)
        return {}
    if path.is_file():  # its t and q are the file's only if it describes that file
        check_recorded_sha256(path, meta, meta_path, "PMVB checkpoint")
    return meta


def checkpoint_name(family: str, kind: str) -> str:
    """File name of a `kind` checkpoint for `family` (pmvb_<family>_<kind>.joblib, .pt for
    the MLP), whether or not such a file exists yet."""
    return f"pmvb_{family}_{kind}{'.pt' if kind == 'mlp' else '.joblib'}"


def shipped_checkpoint(family: str, kind: str) -> Path:
    """Path of the checkpoint shipped in coplug.models for `family` and `kind`."""
    import coplug.models

    check_choice(kind, "PMVB predictor kind", KINDS)
    folder = Path(coplug.models.__file__).parent
    path = folder / checkpoint_name(family, kind)
    if not path.is_file():
        shipped = sorted({p.stem.split("_")[1]
                          for p in folder.glob(f"pmvb_*_{kind}{path.suffix}")})
        raise InputError(f"no shipped PMVB {kind} checkpoint for family {family!r}; shipped: "
                         f"{', '.join(shipped)} (train one with python -m "
                         "coplug.learned.train_pmvb)")
    return path


def _binary_tags(tags: Tags) -> Tags:
    """Declare what both estimators take: two classes and dense, finite features."""
    tags.classifier_tags.multi_class = False
    tags.input_tags.sparse = False
    tags.input_tags.allow_nan = False
    return tags


def _fit_data(estimator: BaseEstimator, X: ArrayLike, y: ArrayLike, what: str,
              hint: str) -> tuple[np.ndarray, np.ndarray]:
    """Float features and the 0/1 index of each label in the sorted classes_, which it sets.

    scikit-learn's validate_data sets n_features_in_ and words the shape errors (raised here
    as InputError, a ValueError); NaN and huge features are left to `_check_features`.
    """
    owner = type(estimator).__name__
    X, y = _unwrapped(X, f"{owner} X"), _unwrapped(y, f"{owner} y")
    try:
        X, y = validate_data(estimator, X, y, dtype=np.float64, ensure_all_finite=False)
        check_classification_targets(y)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, TypeError) and not issparse(X):
            raise  # scikit-learn's own TypeError for non-numbers, as its conventions want
        raise InputError(f"{owner} needs X of shape (n, k) with n, k >= 1 and class labels y "
                         f"of shape (n,): {_one_line(exc)}") from exc
    kind = type_of_target(y, input_name="y")
    if kind != "binary":
        found = np.unique(y)
        shown = ", ".join(map(repr, found[:5].tolist())) + (", ..." if found.size > 5 else "")
        raise InputError(f"Only binary classification is supported. The type of the target "
                         f"is {kind}: {owner} takes two classes, y holds {found.size}: {shown}")
    estimator.classes_, index = np.unique(y, return_inverse=True)
    if estimator.classes_.size < 2:
        raise InputError(f"{what} hold only one class ({estimator.classes_.tolist()[0]!r}); "
                         f"{hint}")
    return X, index


def _predict_data(estimator: BaseEstimator, X: ArrayLike, default_width: int) -> np.ndarray:
    """X as floats of the fitted width (checkpoints without n_features_in_ use the default)."""
    owner = type(estimator).__name__
    width = getattr(estimator, "n_features_in_", default_width)
    prefix = f"{owner} was fitted on {width} features, so X must have shape (n, {width})"
    X = _unwrapped(X, f"{owner} X")
    try:
        X = validate_data(estimator, X, reset=False, dtype=np.float64, ensure_all_finite=False,
                          ensure_min_samples=0)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, TypeError) and not issparse(X):
            raise
        raise InputError(f"{prefix}: {_one_line(exc)}") from exc
    if X.shape[1] != width:  # only reached without n_features_in_, which validate_data checks
        raise InputError(f"{prefix}: X has {X.shape[1]} features, but {owner} is expecting "
                         f"{width} features as input")
    return X


def _unwrapped(data: ArrayLike, what: str) -> ArrayLike:
    """A torch tensor's values (one that requires grad raised torch's error), anything else
    as given; a masked array is an InputError (scikit-learn used its masked entries)."""
    refuse_masked(data, what)
    return detached(data, what)


def _one_line(exc: Exception) -> str:
    """scikit-learn's reason in one line, without the whole array its 1-D message prints
    over many lines (its advice on reshaping stays)."""
    text = re.sub(r"array=\[[^\]]*\]\.?", "", str(exc))
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not line.lstrip().startswith("array=")]
    return " ".join(lines) or type(exc).__name__


def _labels(estimator: BaseEstimator, proba: np.ndarray) -> np.ndarray:
    """The class of each row's largest probability (the first at a tie, as argmax does)."""
    return np.asarray(getattr(estimator, "classes_", BINARY))[np.argmax(proba, axis=1)]


def _column_of_one(estimator: BaseEstimator) -> int:
    """The predict_proba column of P(x = 1), which only a fit on 0/1 labels has."""
    classes = np.asarray(getattr(estimator, "classes_", BINARY)).tolist()
    if classes != [0, 1]:
        raise InputError(f"PMVB needs P(x = 1), so its predictor must be fitted on 0/1 "
                         f"labels; this one was fitted on {classes}")
    return 1


def _calibration_split(
    X: np.ndarray, y: np.ndarray, share: float, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Stratified (fit, calibration) rows, or None when a side would miss a class: sklearn
    refuses a side smaller than the class count, and a one-class side cannot be fitted."""
    n_cal = math.ceil(share * y.size)  # train_test_split rounds the test side up
    if min(n_cal, y.size - n_cal) < 2:
        return None
    X_fit, X_cal, y_fit, y_cal = train_test_split(X, y, test_size=n_cal, random_state=seed,
                                                  stratify=y)
    if np.unique(y_fit).size < 2 or np.unique(y_cal).size < 2:
        return None
    return X_fit, X_cal, y_fit, y_cal


def _feature_names(width: int) -> tuple[str, ...]:
    """The root feature names when `width` matches them (for messages), else none."""
    return FEATURE_NAMES if width == len(FEATURE_NAMES) else ()


def _check_features(X: np.ndarray, what: str, limit: float = np.inf,
                    names: tuple[str, ...] = ()) -> None:
    """Refuse NaN, infinite or (beyond `limit`) huge entries, naming the first row and column."""
    bad = ~(np.isfinite(X) & (np.abs(X) <= limit))
    if not bad.any():
        return
    i, j = (int(k) for k in np.argwhere(bad)[0])
    column = f"feature {j}" + (f" ({names[j]})" if names else "")
    value = float(X[i, j])
    if np.isfinite(value):
        raise InputError(f"{what} hold {value:g} at row {i}, {column}; magnitudes above "
                         f"{limit:g} overflow the feature scaling")
    raise InputError(f"{what} hold {value} at row {i}, {column}; NaN or infinite features "
                     "are refused")


def _seed(random_state: object, owner: str) -> int:
    """An int seed for torch and sklearn; None or a RandomState draws one (sklearn's way)."""
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return int(check_random_state(random_state).randint(SEED_BOUND))
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer) \
            or not 0 <= random_state < SEED_BOUND:
        raise InputError(f"{owner} random_state must be None or an integer in [0, 2**32), "
                         f"got {random_state!r}")
    return int(random_state)


def _positive(value: object, name: str, zero_ok: bool = False) -> float:
    """A TorchMLPClassifier setting as a finite number > 0 (>= 0 if zero_ok), else InputError."""
    number = isinstance(value, int | float | np.integer | np.floating) \
        and not isinstance(value, bool)
    if not (number and np.isfinite(value) and (value > 0 or (zero_ok and value == 0))):
        bound = ">= 0" if zero_ok else "> 0"
        raise InputError(f"TorchMLPClassifier {name} must be a finite number {bound}, "
                         f"got {value!r}")
    return float(value)
