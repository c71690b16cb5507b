# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_policy_definition
short_description: "Manage swmgr PolicyDefinition objects"
description:
  - "A routing policy (FRR's route-map): its statements in Priority order. MatchType any: the first statement whose conditions a route meets decides; all: every statement is applied in turn, a route is permitted when one permit statement and no deny statement matches it. A route no statement matches is denied. BGP names a policy in a neighbor's or peer group's AdjRIBInFilter/AdjRIBOutFilter and in BGPGlobal's Redistribution; a policy in use cannot be deleted."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of PolicyDefinition: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The PolicyDefinition objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "the policy's name (FRR's route-map)."
          - "Key: identifies the object."
        type: str
      priority:
        description:
          - "API field C(Priority)."
          - "FlexSwitch's order among policies applied together; each BGP attachment takes one policy, so it orders nothing there."
          - "From 0 to 2147483647."
        type: int
      statement_list:
        description:
          - "API field C(StatementList)."
          - "the statements, applied by ascending Priority."
        type: list
        elements: dict
        suboptions:
          priority:
            description:
              - "API field C(Priority)."
              - "From 0 to 2147483647."
            type: int
          statement:
            description:
              - "API field C(Statement)."
            type: str
      match_type:
        description:
          - "API field C(MatchType)."
          - "swmgr's default: C(\"all\")."
        type: str
        choices:
          - "all"
          - "any"
      policy_type:
        description:
          - "API field C(PolicyType)."
          - "swmgr's default: C(\"ALL\")."
        type: str
        choices:
          - "BGP"
          - "OSPF"
          - "ALL"
'''

EXAMPLES = r'''
- name: "Make PolicyDefinition as given"
  swmgr.switch.swmgr_policy_definition:
    state: merged
    config:
      - name: "SPINES"
        priority: 0
        statement_list: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("PolicyDefinition")


if __name__ == '__main__':
    main()
