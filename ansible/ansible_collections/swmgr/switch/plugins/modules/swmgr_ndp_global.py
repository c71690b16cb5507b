# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ndp_global
short_description: "Manage swmgr NDPGlobal objects"
description:
  - "Neighbour discovery's timers (FlexSwitch's NDPGlobal). A timer at FlexSwitch's default (10 minutes, 1 ms, 5 s) leaves the platform's own: the kernel's RFC 4861 timing (a neighbour reachable 15 to 45 s after a confirmation, solicitations 1 s apart), FRR's advertisement interval (10 s); any other value is applied: ReachableTime and RetransmitInterval to every interface's neighbour table in the switch's and every VRF's namespace, RouterAdvertisementInterval to FRR's router advertisements on the BGP-unnumbered interfaces. Setting a timer back to its default gives the platform's own back. See docs/routing.md."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of NDPGlobal: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one NDPGlobal."
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
      reachable_time:
        description:
          - "API field C(ReachableTime)."
          - "minutes a neighbour stays reachable after a confirmation (the kernel's base, randomised by half either way); 10: the kernel's own (30 s)."
          - "swmgr's default: C(10)."
          - "From 1 to 60."
        type: int
      retransmit_interval:
        description:
          - "API field C(RetransmitInterval)."
          - "milliseconds between neighbour solicitations: 100..3600000, or 1 for the kernel's own (1000)."
          - "swmgr's default: C(1)."
          - "From 1 to 3600000."
        type: int
      router_advertisement_interval:
        description:
          - "API field C(RouterAdvertisementInterval)."
          - "seconds between the router advertisements FRR sends on BGP-unnumbered interfaces; 5: FRR's own (10)."
          - "swmgr's default: C(5)."
          - "From 1 to 1800."
        type: int
'''

EXAMPLES = r'''
- name: "Make NDPGlobal as given"
  swmgr.switch.swmgr_ndp_global:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("NDPGlobal")


if __name__ == '__main__':
    main()
