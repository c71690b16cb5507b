# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_policy_stmt
short_description: "Manage swmgr PolicyStmt objects"
description:
  - "A policy statement: when a route meets its Conditions (all or any of them, MatchConditions; no condition: every route), its Action (permit or deny) decides. A statement in use cannot be deleted."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of PolicyStmt: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The PolicyStmt objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "Key: identifies the object."
        type: str
      conditions:
        description:
          - "API field C(Conditions)."
          - "the PolicyConditions; [] matches every route."
        type: list
        elements: str
      action:
        description:
          - "API field C(Action)."
          - "swmgr's default: C(\"deny\")."
        type: str
        choices:
          - "permit"
          - "deny"
      match_conditions:
        description:
          - "API field C(MatchConditions)."
          - "swmgr's default: C(\"all\")."
        type: str
        choices:
          - "all"
          - "any"
'''

EXAMPLES = r'''
- name: "Make PolicyStmt as given"
  swmgr.switch.swmgr_policy_stmt:
    state: merged
    config:
      - name: "SPINES"
        conditions: ["SPINES"]
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("PolicyStmt")


if __name__ == '__main__':
    main()
