# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_ipv4_unnumbered
short_description: "Manage swmgr IPv4Unnumbered objects"
description:
  - "An unnumbered IPv4 interface: IntfRef has no IPv4 address of its own and borrows the address of the loopback Interface (OpenConfig's ipv4/unnumbered). The interface then sends and answers IPv4 with the loopback's address: a BGP unnumbered uplink that a DHCP relay's servers answer over, a router's ICMP errors. The loopback needs an IPv4 address (IPv4Intf) in the same VRF, which cannot be deleted while lent; the borrower has no IPv4Intf of its own."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of IPv4Unnumbered: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The IPv4Unnumbered objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the borrowing interface: a port, a VLAN interface (vlan10) or a LAG; not a loopback."
          - "Key: identifies the object."
        type: str
      interface:
        description:
          - "API field C(Interface)."
          - "the loopback (LogicalIntf, Loopback1) whose IPv4 address the interface borrows (OpenConfig's interface-ref)."
        type: str
      vrf:
        description:
          - "API field C(Vrf)."
          - "the VRF of the interface: the loopback's (its IPv4Intf's Vrf)."
          - "swmgr's default: C(\"default\")."
        type: str
'''

EXAMPLES = r'''
- name: "Make IPv4Unnumbered as given"
  swmgr.switch.swmgr_ipv4_unnumbered:
    state: merged
    config:
      - intf_ref: "fpPort1"
        interface: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("IPv4Unnumbered")


if __name__ == '__main__':
    main()
