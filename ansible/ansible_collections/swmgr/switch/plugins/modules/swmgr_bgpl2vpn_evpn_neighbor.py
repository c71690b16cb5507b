# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgpl2vpn_evpn_neighbor
short_description: "Manage swmgr BGPL2vpnEvpnNeighbor objects"
description:
  - "A BGP neighbour or peer group that exchanges EVPN routes (the L2VPN EVPN address family activated for it): Neighbor names a BGPv4Neighbor of the default VRF by address, an unnumbered one by its interface, or a BGPv4PeerGroup."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPL2vpnEvpnNeighbor: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BGPL2vpnEvpnNeighbor objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      neighbor:
        description:
          - "API field C(Neighbor)."
          - "a BGPv4Neighbor's NeighborAddress, an unnumbered one's IntfRef, or a BGPv4PeerGroup's Name."
          - "Key: identifies the object."
        type: str
      route_reflector_client:
        description:
          - "API field C(RouteReflectorClient)."
          - "reflect EVPN routes to it (an iBGP route reflector)."
        type: bool
'''

EXAMPLES = r'''
- name: "Make BGPL2vpnEvpnNeighbor as given"
  swmgr.switch.swmgr_bgpl2vpn_evpn_neighbor:
    state: merged
    config:
      - neighbor: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPL2vpnEvpnNeighbor")


if __name__ == '__main__':
    main()
