"""Where smml's random draws come from: every family turns its ``random_state`` into
draws through these helpers (one copy each, at the ground floor).

Each helper fixes a stream that fitted models and tests depend on bit for bit, so they
differ on purpose (a RandomState for the scikit-learn-style families, the Generator
itself for the sequential learners, a 64-bit seed for the compiled tree kernels, a
SeedSequence seed for boosting, an int replayable by KFold):

- :func:`check_random_state`: a ``RandomState`` from any ``random_state``;
- :func:`check_rng`: a ``Generator`` as it is, anything else as :func:`check_random_state`;
- :func:`draw_integers` / :func:`step_indices`: uniform example indices from either;
- :func:`seed64`: the 64-bit seed of the compiled tree growth;
- :func:`seed_sequence_seed`: the ``SeedSequence`` seed of gradient boosting;
- :func:`replayable_seed`: an int (or None) usable twice with identical results;
- :func:`seeded_clone`: a clone of an estimator with its ``random_state`` set.
"""
import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state as _sk_check_random_state

__all__ = ["check_random_state", "check_rng", "draw_integers", "step_indices", "STEP_CHUNK", "seed64",
           "seed_sequence_seed", "replayable_seed", "seeded_clone"]

#: steps drawn per call of the Pegasos / OGD kernels (:func:`step_indices`)
STEP_CHUNK = 1 << 16


def check_random_state(random_state):
    """A ``numpy.random.RandomState`` from any value :data:`RANDOM_STATE` accepts.

    scikit-learn's ``check_random_state`` plus a numpy ``Generator``, which seeds a
    new RandomState from its own stream: the same Generator state gives the same
    draws, and the caller's Generator advances, as it would if used directly.
    """
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(int(random_state.integers(0, 2**32)))
    return _sk_check_random_state(random_state)


def check_rng(random_state):
    """The random source of the sequential learners: a Generator is used as it is (so a
    caller can replay the exact example order from the same Generator, as the tests
    against ``smml.reference`` do); anything else goes through the shared
    :func:`check_random_state`."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return check_random_state(random_state)


def draw_integers(rng, m, size):
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, m, size=size)
    return rng.randint(0, m, size=size)


def step_indices(rng, m, n_steps, chunk=STEP_CHUNK):
    """The examples of steps 1..n_steps, drawn uniformly with replacement, in chunks."""
    done = 0
    while done < n_steps:
        c = min(chunk, n_steps - done)
        yield draw_integers(rng, m, c).astype(np.intp, copy=False)
        done += c


def seed64(rs):
    """The 64-bit seed of the compiled tree growth from a tree's ``random_state``."""
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(0, 2**63))
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(0, 2**31)) * 2**31 + int(rs.randint(0, 2**31))
    if rs is None:
        return int(np.random.default_rng().integers(0, 2**63))
    # an int seed: one splitmix64 step (cheap, and distinct seeds give distinct streams)
    z = (int(rs) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def seed_sequence_seed(rs):
    """The seed of gradient boosting's ``np.random.SeedSequence`` from its ``random_state``
    (None: fresh entropy)."""
    if isinstance(rs, numbers.Integral):
        return int(rs)
    if isinstance(rs, np.random.RandomState):
        return int(rs.randint(0, 2**31))
    if isinstance(rs, np.random.Generator):
        return int(rs.integers(0, 2**63))
    return None


def replayable_seed(random_state):
    """An int or None usable twice with identical results (KFold / train_test_split)."""
    if random_state is None or (isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool)):
        return random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def seeded_clone(estimator, seed):
    """A clone of ``estimator`` whose ``random_state`` (if it has one) is ``seed``."""
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(seed))
    return est
