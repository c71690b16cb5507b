# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_vlan
short_description: "Manage swmgr Vlan objects"
description:
  - "An 802.1Q VLAN. IntfList are its tagged member ports, UntagIntfList its untagged ones; a port is the untagged member of at most one VLAN."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Vlan: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Vlan objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      vlan_id:
        description:
          - "API field C(VlanId)."
          - "802.1Q VLAN id."
          - "Key: identifies the object."
          - "From 1 to 4094."
        type: int
      intf_list:
        description:
          - "API field C(IntfList)."
          - "tagged members: ports and LAGs."
        type: list
        elements: str
      untag_intf_list:
        description:
          - "API field C(UntagIntfList)."
          - "untagged members: ports and LAGs."
        type: list
        elements: str
      admin_state:
        description:
          - "API field C(AdminState)."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
      auto_state:
        description:
          - "API field C(AutoState)."
          - "UP: the VLAN interface is up only while one of its member ports is; DOWN: it stays up without members."
          - "swmgr's default: C(\"UP\")."
        type: str
        choices:
          - "UP"
          - "DOWN"
      description:
        description:
          - "API field C(Description)."
        type: str
'''

EXAMPLES = r'''
- name: "Make Vlan as given"
  swmgr.switch.swmgr_vlan:
    state: merged
    config:
      - vlan_id: 1
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Vlan")


if __name__ == '__main__':
    main()
