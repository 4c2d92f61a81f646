"""Prints `a b ceil floor trunc` lines: Python's
`math.ceil(a / b)`, `math.floor(a / b)`, `int(a / b)` on ints, for pairs
around the doubles' integer limit (2^53), up to 2^126, with ties, negative
operands and quotients below 1 (read by truediv_python.rs, which checks
the engine's `truediv` on each)."""
import math
import random

rng = random.Random(17290)
pairs = set()
for a in range(-20, 21):
    for b in range(-6, 7):
        if b:
            pairs.add((a, b))
for _ in range(1500):
    ea, eb = rng.randint(0, 126), rng.randint(0, 126)
    a, b = rng.getrandbits(ea + 1), rng.getrandbits(eb + 1) or 1
    pairs.add((a * rng.choice((1, -1)), b * rng.choice((1, -1))))
for e in range(50, 127):
    for d in (-2, -1, 0, 1, 2):
        for b in (1, 2, 3, 7, 1 << 20, (1 << 53) + 1, 1 << 60, (1 << 63) - 1):
            a = (1 << e) + d
            pairs.add((a, b))
            pairs.add((a * b + d, b))
            pairs.add((-(a * b) - d, b))
# ties: the quotient exactly halfway between two doubles
for s in range(1, 70):
    for m in ((1 << 52) + 1, (1 << 52) + 2, (1 << 53) - 1):
        pairs.add(((2 * m + 1) << (s - 1), 1))
        pairs.add((-((2 * m + 1) << (s - 1)), 1))
for k in range(1, 70):
    b = 1 << (52 + k)
    for f in (1, 2, 3, 5, (1 << 20) + 1):
        for t in (-1, 0, 1):
            # f + 2^-(53 - e) half-ulp ties above and below f
            e = f.bit_length() - 1
            if 53 - e <= 52 + k:
                h = 1 << (52 + k - (53 - e))
                pairs.add((f * b + h + t, b))
                pairs.add(((f + 1) * b - h + t, b))
                pairs.add((-(f * b + h + t), b))
rows = []
for a, b in sorted(pairs):
    if max(abs(a), abs(b)) >= 1 << 127:  # the engine's i128
        continue
    q = a / b
    rows.append(f"{a} {b} {math.ceil(q)} {math.floor(q)} {int(q)}")
print("\n".join(rows))
