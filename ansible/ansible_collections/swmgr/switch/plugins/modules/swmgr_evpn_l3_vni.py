# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_evpn_l3_vni
short_description: "Manage swmgr EvpnL3Vni objects"
description:
  - "The L3 VNI of a VRF (symmetric IRB): routed traffic between VTEPs of the VRF crosses the fabric in this VNI, through the VLAN VlanId whose interface is put in the VRF, and the VRF's BGP routes are advertised as EVPN type-5 routes (AdvertiseIPv4Unicast, with a BGPVrf)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of EvpnL3Vni: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The EvpnL3Vni objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      vrf:
        description:
          - "API field C(Vrf)."
          - "the tenant VRF; not default."
          - "Key: identifies the object."
        type: str
      vni:
        description:
          - "API field C(Vni)."
          - "the L3 VNI, 1..16777215; not a VxlanInstance's."
          - "From 1 to 16777215."
        type: int
      vlan_id:
        description:
          - "API field C(VlanId)."
          - "the VLAN that carries the L3 VNI; its interface (vlan\u003cN\u003e) is put in the VRF."
          - "From 1 to 4094."
        type: int
      advertise_ipv4_unicast:
        description:
          - "API field C(AdvertiseIPv4Unicast)."
          - "advertise the VRF's IPv4 BGP routes as EVPN type-5 routes (needs a BGPVrf of the VRF)."
          - "swmgr's default: C(true)."
        type: bool
      route_distinguisher:
        description:
          - "API field C(RouteDistinguisher)."
          - "\"\": automatic (router id:N); swmgr's addition."
        type: str
      import_route_targets:
        description:
          - "API field C(ImportRouteTargets)."
          - "empty: automatic (AS:VNI); swmgr's addition."
        type: list
        elements: str
      export_route_targets:
        description:
          - "API field C(ExportRouteTargets)."
          - "empty: automatic (AS:VNI); swmgr's addition."
        type: list
        elements: str
'''

EXAMPLES = r'''
- name: "Make EvpnL3Vni as given"
  swmgr.switch.swmgr_evpn_l3_vni:
    state: merged
    config:
      - vrf: "example"
        vni: 1
        vlan_id: 1
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("EvpnL3Vni")


if __name__ == '__main__':
    main()
