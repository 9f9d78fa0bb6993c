import os
import sys

import numpy as np
import pytest

# the helper modules beside the tests (_strategies, _dask_cluster) import by name, also under
# --import-mode=importlib (which does not put tests/ on sys.path)
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def pytest_report_header(config):
    import smml
    from smml._threads import effective_n_threads, openmp_enabled

    return [f"smml {smml.__version__} from {os.path.dirname(smml.__file__)}; "
            f"OpenMP {'on' if openmp_enabled() else 'off'}, {effective_n_threads()} threads"]


@pytest.fixture(params=[0, 1, 2] if os.environ.get("SMML_TEST_SEEDS") != "all" else range(50))
def seed(request):
    """Random seeds for property tests (SMML_TEST_SEEDS=all sweeps 50)."""
    return request.param


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)
