# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ipv6_route
short_description: "Manage swmgr IPv6Route objects"
description:
  - "A static IPv6 route: to DestinationNw/NetworkMask through its NextHop list (ECMP when several), or dropped with NullRoute. A link-local next hop (fe80::/10) names its interface (NextHopIntRef). state/IPv6Routes lists the switch's IPv6 routing table."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of IPv6Route: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The IPv6Route objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      destination_nw:
        description:
          - "API field C(DestinationNw)."
          - "network address (host bits zero)."
          - "Key: identifies the object."
        type: str
      network_mask:
        description:
          - "API field C(NetworkMask)."
          - "prefix length or mask; stored as the mask."
          - "Key: identifies the object."
        type: str
      protocol:
        description:
          - "API field C(Protocol)."
          - "swmgr's default: C(\"STATIC\")."
        type: str
        choices:
          - "STATIC"
      cost:
        description:
          - "API field C(Cost)."
          - "the route's metric (as IPv4Route's)."
          - "From 0 to 255."
        type: int
      null_route:
        description:
          - "API field C(NullRoute)."
          - "drop the traffic; no next hop."
        type: bool
      next_hop:
        description:
          - "API field C(NextHop)."
          - "where the traffic goes; at least one unless NullRoute."
        type: list
        elements: dict
        suboptions:
          next_hop_ip:
            description:
              - "API field C(NextHopIp)."
            type: str
          next_hop_int_ref:
            description:
              - "API field C(NextHopIntRef)."
              - "\"\": the interface whose subnet holds NextHopIp; required for a link-local NextHopIp."
            type: str
          weight:
            description:
              - "API field C(Weight)."
              - "From 0 to 255."
            type: int
'''

EXAMPLES = r'''
- name: "Make IPv6Route as given"
  swmgr.switch.swmgr_ipv6_route:
    state: merged
    config:
      - destination_nw: "2001:db8::"
        network_mask: "ffff:ffff:ffff:ffff::"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("IPv6Route")


if __name__ == '__main__':
    main()
