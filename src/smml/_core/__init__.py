"""Compiled kernels of smml (Cython + OpenMP). Only hot loops live here;
validation and estimator logic stay in the Python layer."""
