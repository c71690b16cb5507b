# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_vxlan_endpoint
short_description: "Manage swmgr VxlanEndpoint objects"
description:
  - "The switch's VXLAN tunnel endpoint (VTEP; OpenConfig's VXLAN endpoint): the loopback whose IPv4 address every VNI's tunnels start from, and their UDP port. A VNI needs it set, on an interface with an address."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of VxlanEndpoint: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The settings of the one VxlanEndpoint."
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
      source_interface:
        description:
          - "API field C(SourceInterface)."
          - "the interface whose IPv4 address is the VTEP's (a loopback, Loopback1); \"\": no VTEP."
        type: str
      udp_port:
        description:
          - "API field C(UdpPort)."
          - "the VXLAN UDP port (IANA's 4789)."
          - "swmgr's default: C(4789)."
          - "From 1 to 65535."
        type: int
'''

EXAMPLES = r'''
- name: "Make VxlanEndpoint as given"
  swmgr.switch.swmgr_vxlan_endpoint:
    state: merged
    config:
      vrf: "default"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("VxlanEndpoint")


if __name__ == '__main__':
    main()
