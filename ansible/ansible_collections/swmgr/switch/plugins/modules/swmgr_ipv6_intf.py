# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ipv6_intf
short_description: "Manage swmgr IPv6Intf objects"
description:
  - "IPv6 on an interface: its global address (IpAddr, optional) and its link-local address (LinkIp). The interface is in the VRF its IPv4Intf puts it in, else the default VRF."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of IPv6Intf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The IPv6Intf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the port, the VLAN interface (vlan10) or the LogicalIntf (Loopback1)."
          - "Key: identifies the object."
        type: str
      ip_addr:
        description:
          - "API field C(IpAddr)."
          - "\u003cipv6\u003e/\u003cprefix length\u003e; \"\" for the link-local address only."
        type: str
      link_ip:
        description:
          - "API field C(LinkIp)."
          - "give the interface its link-local address (fe80::/64, from its MAC): what BGP unnumbered and neighbour discovery use."
          - "swmgr's default: C(true)."
        type: bool
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
'''

EXAMPLES = r'''
- name: "Make IPv6Intf as given"
  swmgr.switch.swmgr_ipv6_intf:
    state: merged
    config:
      - intf_ref: "fpPort1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("IPv6Intf")


if __name__ == '__main__':
    main()
