# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ipv4_intf
short_description: "Manage swmgr IPv4Intf objects"
description:
  - "An IPv4 address on an interface; one per interface."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of IPv4Intf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The IPv4Intf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the port, the VLAN interface (vlan10) or the LogicalIntf (Loopback1) that carries the address."
          - "Key: identifies the object."
        type: str
      ip_addr:
        description:
          - "API field C(IpAddr)."
          - "\u003cipv4\u003e/\u003cprefix length\u003e."
        type: str
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
      vrf:
        description:
          - "API field C(Vrf)."
          - "VRF of the interface."
          - "swmgr's default: C(\"default\")."
        type: str
      allow_overlap:
        description:
          - "API field C(AllowOverlap)."
          - "true lets the subnet overlap another interface's in the same VRF (refused otherwise, as EOS and IOS do)."
        type: bool
'''

EXAMPLES = r'''
- name: "Make IPv4Intf as given"
  swmgr.switch.swmgr_ipv4_intf:
    state: merged
    config:
      - intf_ref: "fpPort1"
        ip_addr: "192.0.2.1/24"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("IPv4Intf")


if __name__ == '__main__':
    main()
