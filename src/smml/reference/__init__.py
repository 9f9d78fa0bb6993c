"""Plain-Python reference implementations of smml's algorithms.

Each module mirrors the notes' pseudo-code line by line with loops over Python
lists and floats: readable before fast. They are the oracle that the tests
compare the compiled kernels with, and the baseline that ``bench/`` and
``smml tour`` measure speed-ups against. One module per family:
``smml.reference.losses``, ``.model_selection``, ``.neighbors``, ``.tree``,
``.linear``, ``.ensemble``, ``.kernels``.
"""
