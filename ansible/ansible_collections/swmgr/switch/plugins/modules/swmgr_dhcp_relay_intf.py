# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_dhcp_relay_intf
short_description: "Manage swmgr DhcpRelayIntf objects"
description:
  - "DHCP relay on one interface: its clients' requests go to ServerIp, with option 82 whose circuit id names the interface the request came in on. The interface needs an IPv4 address (IPv4Intf): it is the relay's gateway address (giaddr), to which the servers answer."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of DhcpRelayIntf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The DhcpRelayIntf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the clients' interface: a port, a VLAN interface (vlan10); FlexSwitch's IfIndex, by name."
          - "Key: identifies the object."
        type: str
      enable:
        description:
          - "API field C(Enable)."
          - "relay on this interface (when DhcpRelayGlobal Enable)."
          - "swmgr's default: C(true)."
        type: bool
      server_ip:
        description:
          - "API field C(ServerIp)."
          - "the DHCP servers (1..8 unicast IPv4 addresses); each request goes to every one."
        type: list
        elements: str
      vrf:
        description:
          - "API field C(Vrf)."
          - "the VRF the servers are reached in: the interface's own (IPv4Intf's Vrf), where the servers' answers to the gateway address arrive."
          - "swmgr's default: C(\"default\")."
        type: str
'''

EXAMPLES = r'''
- name: "Make DhcpRelayIntf as given"
  swmgr.switch.swmgr_dhcp_relay_intf:
    state: merged
    config:
      - intf_ref: "fpPort1"
        server_ip: ["192.0.2.1"]
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("DhcpRelayIntf")


if __name__ == '__main__':
    main()
