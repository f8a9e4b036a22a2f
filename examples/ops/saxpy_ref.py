# saxpy_ref.py: the reference of the op examples/numpy-op.kg declares in
# Python (docs/ops.md, "Ops in Python").  kgate's helper calls it as
# saxpy(X, Y0, alpha=...): the inputs positional, in declared order, as
# float64 numpy arrays of the declared shapes; the variables it names, as
# keyword arguments.  It returns the output, float64, of its declared shape.
import numpy as np


def saxpy(X, Y0, alpha):
    return np.float64(alpha) * X + Y0
