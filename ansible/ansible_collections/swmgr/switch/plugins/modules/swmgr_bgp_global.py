# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgp_global
short_description: "Manage swmgr BGPGlobal objects"
description:
  - "The BGP speaker of the default VRF. ASNum \"\" leaves BGP unconfigured."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one BGPGlobal."
    type: dict
    suboptions:
      vrf:
        description:
          - "API field C(Vrf)."
          - "Key: identifies the object."
          - "swmgr's default: C(\"default\")."
        type: str
        choices:
          - "default"
      as_num:
        description:
          - "API field C(ASNum)."
          - "local AS, asplain or asdot."
        type: str
      router_id:
        description:
          - "API field C(RouterId)."
          - "0.0.0.0: the routing daemon chooses one, which the state shows (where one runs)."
          - "swmgr's default: C(\"0.0.0.0\")."
        type: str
      disabled:
        description:
          - "API field C(Disabled)."
        type: bool
      use_multiple_paths:
        description:
          - "API field C(UseMultiplePaths)."
        type: bool
      ebgp_max_paths:
        description:
          - "API field C(EBGPMaxPaths)."
          - "0 (FlexSwitch's default) is one path."
          - "swmgr's default: C(1)."
          - "From 0 to 64."
        type: int
      ebgp_allow_multiple_as:
        description:
          - "API field C(EBGPAllowMultipleAS)."
        type: bool
      ibgp_max_paths:
        description:
          - "API field C(IBGPMaxPaths)."
          - "0 (FlexSwitch's default) is one path."
          - "swmgr's default: C(1)."
          - "From 0 to 64."
        type: int
      redistribution:
        description:
          - "API field C(Redistribution)."
          - "routes redistributed into BGP; each source at most once."
        type: list
        elements: dict
        suboptions:
          sources:
            description:
              - "API field C(Sources)."
              - "CONNECTED, STATIC, or both comma-separated."
            type: str
          policy:
            description:
              - "API field C(Policy)."
              - "the PolicyDefinition the routes of these sources pass; \"\": every route."
            type: str
'''

EXAMPLES = r'''
- name: "Make BGPGlobal as given"
  swmgr.switch.swmgr_bgp_global:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPGlobal")


if __name__ == '__main__':
    main()
