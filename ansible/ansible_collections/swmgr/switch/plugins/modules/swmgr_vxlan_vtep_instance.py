# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_vxlan_vtep_instance
short_description: "Manage swmgr VxlanVtepInstance objects"
description:
  - "A VNI's tunnel settings (FlexSwitch's VTEP instance): its source where it differs from VxlanEndpoint's, TTL, TOS, MTU, UDP port, and static remote VTEPs (DstIp) that get the VNI's flooded frames beside those EVPN finds."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of VxlanVtepInstance: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The VxlanVtepInstance objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf:
        description:
          - "API field C(Intf)."
          - "the VTEP instance's name (vtep100)."
          - "Key: identifies the object."
        type: str
      vni:
        description:
          - "API field C(Vni)."
          - "the VxlanInstance it sets up; one VTEP instance per VNI."
          - "Key: identifies the object."
          - "From 1 to 16777215."
        type: int
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the interface whose IPv4 address is the source; \"\": SrcIp, else VxlanEndpoint's."
        type: str
      src_ip:
        description:
          - "API field C(SrcIp)."
          - "the source address when IntfRef is \"\"; 0.0.0.0: VxlanEndpoint's."
          - "swmgr's default: C(\"0.0.0.0\")."
        type: str
      dst_ip:
        description:
          - "API field C(DstIp)."
          - "static remote VTEPs: each gets the VNI's flooded frames (head-end replication)."
        type: list
        elements: str
      tos:
        description:
          - "API field C(TOS)."
          - "From 0 to 255."
        type: int
      ttl:
        description:
          - "API field C(TTL)."
          - "swmgr's default: C(255)."
          - "From 1 to 255."
        type: int
      mtu:
        description:
          - "API field C(Mtu)."
          - "the VXLAN device's MTU."
          - "swmgr's default: C(1550)."
          - "From 68 to 9216."
        type: int
      dst_udp:
        description:
          - "API field C(DstUDP)."
          - "swmgr's default: C(4789)."
          - "From 1 to 65535."
        type: int
'''

EXAMPLES = r'''
- name: "Make VxlanVtepInstance as given"
  swmgr.switch.swmgr_vxlan_vtep_instance:
    state: merged
    config:
      - intf: "example"
        vni: 1
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("VxlanVtepInstance")


if __name__ == '__main__':
    main()
