"""A stand-in for kgate's package in tests/cli/kernelbench.sh: only kgate.triton (standin/kgate/triton.py)."""
