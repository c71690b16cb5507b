# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_acl
short_description: "Manage swmgr Acl objects"
description:
  - "An access control list: its rules (RuleNameList, looked at in order; the first that matches decides) applied to the packets that enter (Direction IN) or leave (OUT) each interface of IntfList: ports, LAGs (PortChannel\u003cN\u003e, not their member ports) and VLAN interfaces (vlan\u003cN\u003e). AclType says which packets it looks at: IP (IPv4), IPv6, or MAC (any frame, rules on MAC addresses only); a packet of another type passes. An interface has at most one ACL of each type per direction. A change of an ACL or of one of its rules replaces it at once: no packet sees no rules or a mix of old and new."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Acl: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Acl objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      acl_name:
        description:
          - "API field C(AclName)."
          - "the ACL's name."
          - "Key: identifies the object."
        type: str
      direction:
        description:
          - "API field C(Direction)."
          - "IN: packets entering the interfaces; OUT: leaving them."
          - "Key: identifies the object."
        type: str
        choices:
          - "IN"
          - "OUT"
      acl_type:
        description:
          - "API field C(AclType)."
          - "IP (IPv4 packets), IPv6, or MAC (any frame)."
          - "swmgr's default: C(\"IP\")."
        type: str
        choices:
          - "IP"
          - "IPv6"
          - "MAC"
      intf_list:
        description:
          - "API field C(IntfList)."
          - "the ports, LAGs and VLAN interfaces it is applied to."
        type: list
        elements: str
      rule_name_list:
        description:
          - "API field C(RuleNameList)."
          - "its rules (AclRule RuleName), in the order they are looked at."
        type: list
        elements: str
'''

EXAMPLES = r'''
- name: "Make Acl as given"
  swmgr.switch.swmgr_acl:
    state: merged
    config:
      - acl_name: "example"
        direction: "IN"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Acl")


if __name__ == '__main__':
    main()
