# pycall_rowsum.py: the baseline of examples/pycall.kg, your own numpy code as an arm
# (call = python:pycall_rowsum.py:rowsum; docs/library-arms.md, "Your own call").
# kgate calls it as rowsum(X) on its own buffers: X is a float32 array of the op's
# shape [M, N]; it returns Y [M], float32, which kgate copies into its output buffer
# outside the timing and checks in float64 like every arm's.
import numpy as np


def rowsum(X):
    return X.sum(axis=1, dtype=np.float32)
