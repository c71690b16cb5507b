# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_la_port_channel
short_description: "Manage swmgr LaPortChannel objects"
description:
  - "A link aggregation group (LAG) of ports, PortChannel\u003cN\u003e: LACP (802.3ad, LagType 0) or static (LagType 1). A member port carries no address and is in no VLAN: the LAG does; a port is in at most one LAG, and a port broken out into sub-ports is in none (its sub-ports may be)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of LaPortChannel: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The LaPortChannel objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the LAG's name, PortChannel\u003cN\u003e with N 1..9999."
          - "Key: identifies the object."
        type: str
      intf_ref_list:
        description:
          - "API field C(IntfRefList)."
          - "the member ports."
        type: list
        elements: str
      lag_type:
        description:
          - "API field C(LagType)."
          - "0 LACP (802.3ad), 1 STATIC (no LACP; the peer must agree by configuration); to change it, delete the LAG and create it again."
          - "swmgr's default: C(0)."
          - "From 0 to 1."
          - "Set at creation only."
        type: int
      min_links:
        description:
          - "API field C(MinLinks)."
          - "members that must be up (collecting and distributing) for the LAG to be up."
          - "swmgr's default: C(1)."
          - "From 1 to 64."
        type: int
      interval:
        description:
          - "API field C(Interval)."
          - "LACP rate: 0 FAST (a frame every second), 1 SLOW (every 30 s)."
          - "swmgr's default: C(1)."
          - "From 0 to 1."
        type: int
      lacp_mode:
        description:
          - "API field C(LacpMode)."
          - "0 ACTIVE (sends LACP frames), 1 PASSIVE (answers them); on Linux PASSIVE needs a kernel of 5.15 or later (lacp_active), an older one refuses it."
          - "swmgr's default: C(0)."
          - "From 0 to 1."
        type: int
      system_id_mac:
        description:
          - "API field C(SystemIdMac)."
          - "the MAC of the LACP system id; all zero: the LAG's own MAC."
          - "swmgr's default: C(\"00-00-00-00-00-00\")."
        type: str
      system_priority:
        description:
          - "API field C(SystemPriority)."
          - "the LACP system priority (lower wins)."
          - "swmgr's default: C(32768)."
          - "From 1 to 65535."
        type: int
      lag_hash:
        description:
          - "API field C(LagHash)."
          - "how frames are spread over the members: 0 LAYER2 (MACs), 1 LAYER2_3 (MACs and IPs), 2 LAYER3_4 (IPs and ports)."
          - "swmgr's default: C(0)."
          - "From 0 to 2."
        type: int
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
- name: "Make LaPortChannel as given"
  swmgr.switch.swmgr_la_port_channel:
    state: merged
    config:
      - intf_ref: "PortChannel1"
        intf_ref_list: ["fpPort1"]
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("LaPortChannel")


if __name__ == '__main__':
    main()
