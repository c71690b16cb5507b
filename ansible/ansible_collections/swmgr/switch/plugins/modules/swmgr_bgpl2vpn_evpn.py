# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bgpl2vpn_evpn
short_description: "Manage swmgr BGPL2vpnEvpn objects"
description:
  - "BGP's L2VPN EVPN address family in the default VRF (OpenConfig's L2VPN_EVPN afi-safi): AdvertiseAllVni advertises every VNI's MACs and hosts (type-2) and VTEP (type-3), learning the remote ones; the neighbours that exchange EVPN routes are BGPL2vpnEvpnNeighbor."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BGPL2vpnEvpn: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one BGPL2vpnEvpn."
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
      advertise_all_vni:
        description:
          - "API field C(AdvertiseAllVni)."
          - "advertise every VNI of the switch (FRR's advertise-all-vni)."
        type: bool
      advertise_default_gw:
        description:
          - "API field C(AdvertiseDefaultGw)."
          - "advertise the VLAN interfaces' addresses as default gateways (asymmetric IRB's distributed gateway)."
        type: bool
'''

EXAMPLES = r'''
- name: "Make BGPL2vpnEvpn as given"
  swmgr.switch.swmgr_bgpl2vpn_evpn:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BGPL2vpnEvpn")


if __name__ == '__main__':
    main()
