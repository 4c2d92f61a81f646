"""A tinygrad matcher that loops, for `--module tests/peers/tinygrad_looping_rules.py:looping`
(tests/peer_loops_cli.rs): each rule is sound, and each undoes the other."""
from tinygrad.uop.ops import PatternMatcher, UPat


def double(x):
    # x * 2 -> x + x
    return x + x


def add_self(x):
    # x + x -> x * 2
    return x * 2


looping = PatternMatcher([
  (UPat.var("x") * 2, double),
  (UPat.var("x") + UPat.var("x"), add_self),
])
