# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_vxlan_instance
short_description: "Manage swmgr VxlanInstance objects"
description:
  - "A VXLAN network identifier bridged with a VLAN (an L2 VNI): the VLAN's frames cross the VXLAN fabric. With BGPL2vpnEvpn AdvertiseAllVni, EVPN learns and advertises its MACs. A VNI is on one VLAN, and a VLAN has one VNI."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of VxlanInstance: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The VxlanInstance objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      vni:
        description:
          - "API field C(Vni)."
          - "VXLAN network id, 1..16777215."
          - "Key: identifies the object."
          - "From 1 to 16777215."
        type: int
      vlan_id:
        description:
          - "API field C(VlanId)."
          - "the VLAN the VNI is bridged with (FlexSwitch's list holds one VLAN here: a VNI bridges one VLAN)."
          - "From 1 to 4094."
        type: int
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
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
- name: "Make VxlanInstance as given"
  swmgr.switch.swmgr_vxlan_instance:
    state: merged
    config:
      - vni: 1
        vlan_id: 1
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("VxlanInstance")


if __name__ == '__main__':
    main()
