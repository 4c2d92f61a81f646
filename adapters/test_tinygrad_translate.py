#!/usr/bin/env python3
"""Tests of the tinygrad rule translator (adapters/tinygrad_translate.py):
the DSL text it gives for rules of the pinned tinygrad and of a user's
module, and the construct it names where it gives none.

    .venv-peers/bin/python adapters/test_tinygrad_translate.py

Whether a translation is the rule (on its instances) and whether it is
sound (for every constant) is tileproof's to judge
(tests/peer_constants_cli.rs); this pins down what the translator reads.
"""
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import tinygrad_rules  # noqa: E402
from tinygrad_translate import translate  # noqa: E402

from tinygrad.uop.ops import Ops, PatternMatcher, UPat  # noqa: E402


def one(upat, fn, name="t.0.lambda"):
    return translate(tinygrad_rules.Rule(name, upat, fn))


def by_name(rules, name):
    return next(r for r in rules if r.name == name)


class Sym(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rules = tinygrad_rules.sym_rules()

    def test_a_guarded_lambda_gives_its_guard_and_its_uop_result(self):
        # (x//c1)//c2 -> x//(c1*c2) if c2.vmin > 0: FLOORDIV is the DSL's `//`
        t = translate(by_name(self.rules, "symbolic.98.lambda"))
        self.assertEqual(t, {"rules": ["rule symbolic_98_lambda: ((x // C1) // C2) => (x // (C1 * C2)) if (C2 > 0)"]})

    def test_a_conditional_result_is_one_rule_per_path_with_disjoint_guards(self):
        # c0*x < c1 -> (x if c0 > 0 else -x) < -(-c1 // abs(c0)) if abs(c0) > 1
        t = translate(by_name(self.rules, "symbolic.100.lambda"))["rules"]
        self.assertEqual(len(t), 2)
        self.assertIn("&& (C0 > 0)", t[0])
        self.assertIn("&& !(C0 > 0)", t[1])
        self.assertIn("(x * -1) <", t[1])  # tinygrad's negation is a MUL by -1

    def test_a_node_allowing_two_ops_is_one_rule_per_op_reading_n_op(self):
        # (x + c) // d and (x + c) % d: `n.op is Ops.FLOORDIV` is decided per op
        t = translate(by_name(self.rules, "div_and_mod_symbolic.1.lambda"))["rules"]
        self.assertTrue(t[0].startswith("rule div_and_mod_symbolic_1_lambda: ((x + C) // D) =>"), t)
        self.assertTrue(t[1].startswith("rule div_and_mod_symbolic_1_lambda_l1: ((x + C) mod D) =>"), t)
        self.assertIn("(x + (C mod D)) mod D", t[1])

    def test_a_helper_that_walks_the_graph_is_named_with_its_line(self):
        t = translate(by_name(self.rules, "symbolic.104.lambda"))
        self.assertIn("untranslatable", t)
        self.assertIn("partition(x.split_uop(Ops.ADD)", t["untranslatable"])
        self.assertIn("tinygrad/uop/symbolic.py:", t["untranslatable"])

    def test_a_float_test_that_cannot_hold_on_integers_is_false(self):
        # x*0 -> 0 unless x is a float NaN or inf constant: never, on index values
        self.assertEqual(translate(by_name(self.rules, "symbolic_simple.49.lambda")),
                         {"rules": ["rule symbolic_simple_49_lambda: (x * 0) => 0"]})

    def test_a_bool_constant_is_one_left_side_per_literal(self):
        # x & c -> x if c else c, for a bool x: the DSL has no bool constant variable
        t = translate(by_name(self.rules, "symbolic_simple.22.lambda"))["rules"]
        self.assertIn("rule symbolic_simple_22_lambda: (x && true) => x", t)
        self.assertIn("rule symbolic_simple_22_lambda_l1: (x && false) => false", t)

    def test_an_op_of_an_int_and_a_bool_form_is_both_left_sides(self):
        # {ADD, XOR, OR}(x, 0) -> x: int `x + 0`, bool `x ^ false` and `x || false`
        t = translate(by_name(self.rules, "symbolic_simple.13.lambda"))["rules"]
        self.assertIn("rule symbolic_simple_13_lambda: (x + 0) => x", t)
        self.assertTrue(any(r.endswith(": (x || false) => x") for r in t), t)

    def test_the_rules_answer_carries_each_translation(self):
        d = by_name(self.rules, "symbolic.98.lambda").describe()
        self.assertIn("rules", d["translation"])


class Module(unittest.TestCase):
    MOD = os.path.join("tests", "peers", "tinygrad_constants_rules.py")

    def rules(self, matcher):
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            return tinygrad_rules.module_rules(f"{self.MOD}:{matcher}")
        finally:
            os.chdir(cwd)

    def test_a_module_helper_of_pure_integer_arithmetic_is_translated_in_place(self):
        t = translate(self.rules("wrap62")[0])["rules"]
        self.assertEqual(len(t), 2)
        self.assertIn("if ((C2 - C1) >= 4611686018427387904)", t[0])  # 2**62, folded exactly
        self.assertIn("(x < ((C2 - C1) - 4611686018427387904))", t[0])

    def test_the_ceiling_of_a_true_division_is_pythons_rounded_quotient(self):
        # tinygrad PR #17290's bound: math.ceil of the double nearest c1/c0
        t = translate(self.rules("float_bound")[0])
        self.assertEqual(t, {"rules": ["rule float_bound_0_lambda: ((C0 * x) < C1) => "
                                       "(x < ceil_truediv(C1, C0)) if (C0 > 0)"]})

    def test_floor_and_int_of_a_true_division_and_known_operands_folded(self):
        t = one(UPat.var("x") // UPat.cvar("c"), lambda x, c: x * math.floor(c.val / 3))
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x // C) => (x * floor_truediv(C, 3))"]})
        t = one(UPat.var("x") // UPat.cvar("c"), lambda x, c: x * int(c.val / -3))
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x // C) => (x * trunc_truediv(C, (-3)))"]})
        # Python computes it: 2**60 + 1 over 2**60 is 1.0
        t = one(UPat.var("x") // UPat.cvar("c"), lambda x, c: x * math.ceil((2**60 + 1) / 2**60))
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x // C) => (x * 1)"]})

    def test_any_other_use_of_a_float_is_not_translatable(self):
        t = one(UPat.var("x") // UPat.cvar("c"), lambda x, c: x if c.val / 2 > 1 else None)
        self.assertIn("the float in `c.val / 2 > 1`", t["untranslatable"])
        t = one(UPat.var("x") // UPat.cvar("c"), lambda x, c: x * round(c.val / 2))
        self.assertIn("untranslatable", t)

    def test_a_bool_test_of_a_node_identity_is_not_translatable(self):
        t = one((UPat.var("x") / UPat.var("x2")) / UPat.var("x3"),
                lambda x, x2, x3: x / (x2 * x3) if x2 is not x3 else None)
        self.assertIn("untranslatable", t)

    def test_early_return_none_and_an_assignment_are_followed(self):
        def fn(x, c):
            if c.val <= 0:
                return None
            k = c.val * 2
            return x // k
        t = one(UPat.var("x") // UPat.cvar("c"), fn)
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x // C) => (x // (C * 2)) if !(C <= 0)"]})

    def test_a_sub_node_is_the_dsls_binary_minus_and_upat_minus_is_tinygrads_add(self):
        t = one(UPat(Ops.SUB, src=(UPat.var("x"), UPat.var("x"))), lambda x: x.const_like(0))
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x - x) => 0"]})
        # `UPat - UPat` is ADD(x, MUL(y, -1)), as tinygrad builds it
        t = one(UPat.var("x") - UPat.var("y"), lambda x, y: x)
        self.assertEqual(t, {"rules": ["rule t_0_lambda: (x + (y * (-1))) => x"]})

    def test_a_function_returning_none_everywhere_has_no_rule(self):
        t = one(UPat.var("x") + 0, lambda x: None)
        self.assertIn("returns None on every path", t["untranslatable"])

    def test_a_matcher_is_translated_through_the_rules_listing(self):
        pm = PatternMatcher([(UPat.var("x") * 1, lambda x: x)])
        r = tinygrad_rules.discover("pm", pm, [])[0]
        [text] = r.describe()["translation"]["rules"]
        self.assertTrue(text.startswith("rule pm_0_") and text.endswith(": (x * 1) => x"), text)


if __name__ == "__main__":
    unittest.main()
