"""tinygrad patterns for `prove --simplifier --all-constants` (issue 48),
each in a matcher of its own (`--module FILE:MATCHER`):

- `sound`: rules true for every constant (proved for all constants);
- `wraps`: tinygrad's own `(y + x) + x -> y + x*2`, sound for tinygrad's
  unbounded integers while at every fixed width the target can overflow
  where the source does not (`y = -x`: proved for unbounded integers,
  never width by width);
- `wrap62`: `x + c1 < c2 -> x < c2 - c1` with the new constant computed as
  if it wrapped past 2^62: wrong only where c2 - c1 >= 2^62, which the
  instance pools do not reach (refuted for all constants);
- `float_bound`: tinygrad PR #17290's `c0*x < c1` with a float bound
  `math.ceil(c1/c0)`: wrong only where the quotient's double rounds onto
  an integer (operands past 2^53), which the instance pools do not reach
  (refuted for all constants);
- `float_bound_exact`: the same bound where both constants are below 2^53,
  where the double never rounds onto an integer it is not (proved for all
  constants).
"""
import math

from tinygrad.uop.ops import PatternMatcher, UPat


def wrapped_difference(a, b):
  # the bug: the difference computed as if it wrapped past 2**62
  d = a - b
  if d >= 2**62:
    d = d - 2**62
  return d


sound = PatternMatcher([
  # (x + c1) + c2 -> x + (c1 + c2)
  ((UPat.var("x") + UPat.cvar("c1")) + UPat.cvar("c2"), lambda x, c1, c2: x + (c1.val + c2.val)),
  # (x // c1) // c2 -> x // (c1 * c2) for c2 > 0
  ((UPat.var("x") // UPat.cvar("c1")) // UPat.cvar("c2"),
   lambda x, c1, c2: x // (c1.val * c2.val) if c2.val > 0 else None),
])

wraps = PatternMatcher([
  # tinygrad/uop/symbolic.py: (y + x) + x -> y + x*2
  ((UPat.var("y") + UPat.var("x")) + UPat.var("x"), lambda y, x: y + x * 2),
])

wrap62 = PatternMatcher([
  ((UPat.var("x") + UPat.cvar("c1")) < UPat.cvar("c2"), lambda x, c1, c2: x < wrapped_difference(c2.val, c1.val)),
])

float_bound = PatternMatcher([
  ((UPat.cvar("c0") * UPat.var("x")) < UPat.cvar("c1"),
   lambda x, c0, c1: x < math.ceil(c1.val / c0.val) if c0.val > 0 else None),
])

float_bound_exact = PatternMatcher([
  ((UPat.cvar("c0") * UPat.var("x")) < UPat.cvar("c1"),
   lambda x, c0, c1: x < math.ceil(c1.val / c0.val) if 0 < c0.val < 2**53 and abs(c1.val) < 2**53 else None),
])
