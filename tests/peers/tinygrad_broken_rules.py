"""tinygrad patterns for `tileproof prove --simplifier '... tinygrad_adapter.py
--module tests/peers/tinygrad_broken_rules.py:MATCHER'` (tests/peer_rules_cli.rs).

`broken`: copies of tinygrad rules, each deliberately wrong the way a
pattern goes wrong in review; `fixed`: the same rules as they should be.
"""
from tinygrad.uop.ops import PatternMatcher, UPat


def mod_in_range_no_upper(x, c):
    # x % c -> x needs 0 <= x < c: the range check x.vmax < c is removed
    return x if 0 <= x.vmin else None


def tile_guard_by_one(x, c, y):
    # (x*c + y) // c -> x needs 0 <= y < c: the guard is weakened by one
    return x if 0 <= y.vmin and y.vmax <= c.val else None


def mod_in_range(x, c):
    return x if 0 <= x.vmin and x.vmax < c.val else None


def tile(x, c, y):
    return x if 0 <= y.vmin and y.vmax < c.val else None


broken = PatternMatcher([
  (UPat.var("x") % UPat.cvar("c"), mod_in_range_no_upper),
  ((UPat.var("x") * UPat.cvar("c") + UPat.var("y")) // UPat.cvar("c"), tile_guard_by_one),
])

fixed = PatternMatcher([
  (UPat.var("x") % UPat.cvar("c"), mod_in_range),
  ((UPat.var("x") * UPat.cvar("c") + UPat.var("y")) // UPat.cvar("c"), tile),
])
