"""Progress bars: the one helper every long loop of smml goes through.

``progress(iterable, total=..., desc=..., verbose=...)`` returns the iterable
itself when no bar is wanted (no cost at all) and a ``tqdm`` bar on stderr
otherwise. The rule, everywhere:

- ``verbose=0`` / ``False`` (the default of every library call): silent;
- ``verbose=1`` / ``True`` (or any positive int): a bar on stderr, even when
  stderr is not a terminal (a notebook's stderr is not one) - the caller asked;
- ``verbose="auto"`` (what the ``smml`` command uses): a bar only when stderr
  is a terminal, so logs and pipes stay clean.

A new long loop (boosting rounds, epochs, ...) takes a ``verbose`` parameter
validated with :data:`VERBOSE` and wraps its loop::

    for t in progress(range(T), total=T, desc="rounds", verbose=self.verbose):
        ...

Work running in a thread pool wraps the iterator of finished results
(``pool.map(...)`` or ``Parallel(return_as="generator")``): the bar moves as
results arrive, in order.
"""
import numbers
import sys

from smml._validation import Interval, Options

__all__ = ["progress", "check_verbose", "VERBOSE"]

#: the ``verbose`` constraint for ``_parameter_spec``: a bool, an int >= 0 or "auto"
VERBOSE = (Options(True, False, "auto"), Interval(int, 0, None))


def check_verbose(verbose, file=None):
    """``verbose`` as a bool (show a bar on ``file``, default stderr, or not); ``ValueError`` for
    anything else."""
    if verbose is None or verbose is False:
        return False
    if verbose is True:
        return True
    if isinstance(verbose, str):
        if verbose == "auto":
            return _is_terminal(sys.stderr if file is None else file)
    elif isinstance(verbose, numbers.Integral) and verbose >= 0:
        return verbose > 0
    raise ValueError(f"verbose must be a bool, an integer >= 0 or 'auto', got {verbose!r}")


def _is_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):   # a stream without isatty, or closed
        return False


def progress(iterable, *, total=None, desc=None, verbose=0, file=None, unit="it", leave=None):
    """``iterable``, wrapped in a tqdm progress bar on ``file`` (stderr) when ``verbose`` asks.

    Parameters
    ----------
    iterable : iterable
        What the loop runs over.
    total : int, optional
        Its length, when ``len`` cannot tell (generators).
    desc : str, optional
        Text before the bar.
    verbose : bool, int or "auto"
        See the module docstring: 0 silent, 1 a bar, "auto" a bar on a terminal.
    file : text stream, optional
        Where the bar goes (default ``sys.stderr``).
    unit : str
        What one step is called.
    leave : bool, optional
        Keep the finished bar on screen (tqdm's default: True).

    Returns
    -------
    iterable or tqdm.tqdm
        The iterable itself when silent.
    """
    if not check_verbose(verbose, file):
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a run-time dependency
        raise ImportError("progress bars need tqdm, a dependency of smml: pip install tqdm "
                          "(or pass verbose=0)") from None
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr if file is None else file,
                unit=unit, leave=True if leave is None else leave, dynamic_ncols=True)
