"""smml._progress: one helper, silent by default, a tqdm bar with verbose=1 or on a terminal."""
import io

import numpy as np
import pytest

from smml._progress import check_verbose, progress
from smml.ensemble import (AdaBoostClassifier, BaggingClassifier, DecisionStump, RandomForestClassifier,
                           RandomForestRegressor)
from smml.model_selection import cv_estimate, nested_cv_estimate, tune
from smml.neighbors import KNNClassifier


class TTY(io.StringIO):
    def isatty(self):
        return True


def test_check_verbose():
    for v in (0, False, None):
        assert check_verbose(v) is False
    for v in (1, True, 2):
        assert check_verbose(v) is True
    assert check_verbose("auto", TTY()) is True
    assert check_verbose("auto", io.StringIO()) is False
    for bad in (-1, "yes", 1.5, [1]):
        with pytest.raises(ValueError, match="verbose must be"):
            check_verbose(bad)


def test_silent_returns_the_iterable_itself():
    it = range(5)
    assert progress(it, verbose=0) is it
    assert progress(it, verbose="auto", file=io.StringIO()) is it


@pytest.mark.parametrize("verbose, stream", [(1, io.StringIO()), ("auto", TTY())])
def test_a_bar_when_asked_or_on_a_terminal(verbose, stream):
    out = list(progress(iter(range(7)), total=7, desc="work", verbose=verbose, file=stream, unit="fit"))
    assert out == list(range(7))
    text = stream.getvalue()
    assert "work" in text and "7/7" in text and "fit" in text


def _data(m=120):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(m, 3))
    return X, (X[:, 0] + 0.3 * rng.normal(size=m) > 0).astype(int)


@pytest.mark.parametrize("make", [
    lambda v: RandomForestClassifier(n_estimators=6, random_state=0, n_jobs=1, verbose=v),
    lambda v: RandomForestClassifier(n_estimators=6, random_state=0, n_jobs=2, verbose=v),
    lambda v: BaggingClassifier(n_estimators=5, random_state=0, n_jobs=2, verbose=v),
])
def test_ensembles_show_their_fits_only_with_verbose(capsys, make):
    X, y = _data()
    quiet = make(0).fit(X, y)
    assert capsys.readouterr().err == ""
    loud = make(1).fit(X, y)
    err = capsys.readouterr().err
    T = loud.n_estimators
    assert f"{T}/{T}" in err and "fits" in err
    np.testing.assert_array_equal(quiet.predict(X), loud.predict(X))     # the bar changes nothing else


@pytest.mark.parametrize("weak, n_classes", [(None, 2), (DecisionStump(), 2), (None, 3)])
def test_adaboost_shows_its_rounds_only_with_verbose(capsys, weak, n_classes):
    # the compiled stump loop (None, 2 classes), the Python loop of another weak learner,
    # and SAMME: same model with and without the bar, a bar only when asked
    X, y = _data(150)
    if n_classes == 3:
        y = np.digitize(X[:, 1], [-0.4, 0.4])
    quiet = AdaBoostClassifier(weak, n_estimators=7, random_state=0).fit(X, y)
    assert capsys.readouterr().err == ""
    loud = AdaBoostClassifier(weak, n_estimators=7, random_state=0, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    r = len(loud.estimator_weights_)
    assert "AdaBoostClassifier rounds" in err and f"{r}/7" in err
    np.testing.assert_array_equal(quiet.estimator_weights_, loud.estimator_weights_)
    np.testing.assert_array_equal(quiet.predict(X), loud.predict(X))


def test_adaboost_bar_closes_when_boosting_stops_early(capsys):
    X, y = _data(60)
    y = (X[:, 0] > 0).astype(int)              # one stump is perfect: boosting stops in round 1
    a = AdaBoostClassifier(DecisionStump(), n_estimators=9, verbose=1).fit(X, y)
    assert a.stop_reason_ == "perfect"
    assert "1/9" in capsys.readouterr().err
    with pytest.raises(ValueError, match="verbose"):
        AdaBoostClassifier(verbose="loud").fit(X, y)


def test_forest_rejects_a_bad_verbose():
    X, y = _data()
    with pytest.raises(ValueError, match="verbose"):
        RandomForestRegressor(n_estimators=2, verbose="loud").fit(X, y.astype(float))


def test_model_selection_bars(capsys):
    X, y = _data()
    assert cv_estimate(KNNClassifier(n_neighbors=3), X, y, K=4) == cv_estimate(KNNClassifier(n_neighbors=3), X, y, K=4, verbose=1)
    assert capsys.readouterr().err.count("4/4") >= 1
    tune(KNNClassifier(), {"n_neighbors": [1, 3, 5]}, X, y, random_state=0, verbose=1)
    assert "3/3" in capsys.readouterr().err
    nested_cv_estimate(KNNClassifier(), {"n_neighbors": [1, 3]}, X, y, K_outer=3, K_inner=2, verbose=1)
    assert "outer folds" in capsys.readouterr().err
    cv_estimate(KNNClassifier(n_neighbors=3), X, y, K=4)
    assert capsys.readouterr().err == ""           # silent by default
    with pytest.raises(ValueError, match="verbose"):
        cv_estimate(KNNClassifier(n_neighbors=3), X, y, K=4, verbose="x")
