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
  - "Neighbour discovery's timers (FlexSwitch's NDPGlobal), kept: swmgr gives them to no kernel yet (the kernel's own defaults apply: a neighbour stays reachable 15 to 45 seconds, solicitations are a second apart) and sends no router advertisements. See docs/routing.md."
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
          - "minutes a neighbour stays reachable after a confirmation."
          - "swmgr's default: C(10)."
          - "From 1 to 60."
        type: int
      retransmit_interval:
        description:
          - "API field C(RetransmitInterval)."
          - "milliseconds between neighbour solicitations."
          - "swmgr's default: C(1)."
          - "From 1 to 3600000."
        type: int
      router_advertisement_interval:
        description:
          - "API field C(RouterAdvertisementInterval)."
          - "seconds between router advertisements."
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
