"""The tinygrad adapter with its translator made wrong on purpose, for
tests/peer_constants_cli.rs: every translated right side that adds two
constants (`C1 + C2`) subtracts them instead. `prove --simplifier
--all-constants` must see on the rule's instances that this translation is
not the rule (`translation disagrees`), and never prove it.

    .venv-peers/bin/python tests/peers/tinygrad_wrong_translation.py [tinygrad_adapter.py's arguments]
"""
import os
import runpy
import sys

ADAPTERS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "adapters")
sys.path.insert(0, ADAPTERS)

import tinygrad_rules  # noqa: E402
import tinygrad_translate  # noqa: E402


def wrong(rule):
    t = tinygrad_translate.translate(rule)
    if "rules" in t:
        t = {"rules": [x.replace("(C1 + C2)", "(C1 - C2)") for x in t["rules"]]}
    return t


tinygrad_rules.translate = wrong  # what the rules listing calls
script = os.path.join(ADAPTERS, "tinygrad_adapter.py")
sys.argv = [script] + sys.argv[1:]
runpy.run_path(script, run_name="__main__")
