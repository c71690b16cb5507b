# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgp_vrf
short_description: "Manage swmgr BGPVrf objects"
description:
  - "BGP settings of one VRF: its paths, and the routes redistributed into its BGP (a tenant VRF's connected subnets, which an EVPN L3 VNI advertises as type-5 routes)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPVrf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BGPVrf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "VRF name."
          - "Key: identifies the object."
        type: str
      use_multiple_paths:
        description:
          - "API field C(UseMultiplePaths)."
        type: bool
      ebgp_max_paths:
        description:
          - "API field C(EBGPMaxPaths)."
          - "swmgr's default: C(1)."
          - "From 1 to 64."
        type: int
      ibgp_max_paths:
        description:
          - "API field C(IBGPMaxPaths)."
          - "swmgr's default: C(1)."
          - "From 1 to 64."
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
- name: "Make BGPVrf as given"
  swmgr.switch.swmgr_bgp_vrf:
    state: merged
    config:
      - name: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPVrf")


if __name__ == '__main__':
    main()
