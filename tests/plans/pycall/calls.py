# calls.py: the Python calls of tests/cli/pycall.sh (call = python:calls.py:NAME).
# Each takes the op's inputs positionally and the variables it names as
# keywords; it returns the outputs or writes them into out=.  The ones
# below the line are wrong on purpose, each in one way.
import hashlib
import os
import threading
import time

import numpy as np


def rowsum(X):
    return X.sum(axis=1, dtype=np.float32)


def rowsum_out(X, *, out):
    np.sum(X, axis=1, dtype=np.float32, out=out)


def softmax(X, **variables):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def sumdiff(A, B, *, alpha):
    return A + np.float32(alpha) * B, A - B


def sumdiff_out(A, B, alpha, out):
    S, D = out
    np.multiply(B, np.float32(alpha), out=S)
    S += A
    np.subtract(A, B, out=D)


# ---- wrong on purpose

def wrong_value(X):
    r = X.sum(axis=1, dtype=np.float32)
    r[3] += 1.0
    return r


def wrong_shape(X):
    return X.sum(axis=0, dtype=np.float32)


def wrong_dtype(X):
    return X.sum(axis=1, dtype=np.float64)


_calls = [0]


def raises(X):
    _calls[0] += 1
    if _calls[0] > 6:
        raise ValueError("the call failed on purpose")
    return X.sum(axis=1, dtype=np.float32)


def late(X, *, out):
    # returns at once and writes its output from a thread a little later:
    # work the timer would not see
    def work():
        time.sleep(0.2)
        np.sum(X, axis=1, dtype=np.float32, out=out)
    threading.Thread(target=work).start()


_kept = {}


def cache_ptr(X):
    # the output kept per input buffer: computed once, returned ever after
    key = X.__array_interface__["data"][0]
    if key not in _kept:
        _kept[key] = X.sum(axis=1, dtype=np.float32)
    return _kept[key].copy()


_hashed = {}


def cache_hash(X):
    # the output kept per input contents: right whenever it hits; the hits
    # are counted in the file KGATE_TEST_HITS names
    key = hashlib.sha256(X.tobytes()).digest()
    r = _hashed.get(key)
    with open(os.environ["KGATE_TEST_HITS"], "a") as f:
        f.write("%d %s\n" % (os.getpid(), "hit" if r is not None else "miss"))
    if r is None:
        r = _hashed[key] = X.sum(axis=1, dtype=np.float32)
    return r.copy()
