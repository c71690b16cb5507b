# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_logical_intf
short_description: "Manage swmgr LogicalIntf objects"
description:
  - "A logical interface: a loopback (Loopback1) that carries an address of the switch itself, up whatever the ports do."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of LogicalIntf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The LogicalIntf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      name:
        description:
          - "API field C(Name)."
          - "like Loopback1; not a port (fpPort...) or VLAN (vlan...) name, not lo."
          - "Key: identifies the object."
        type: str
      type:
        description:
          - "API field C(Type)."
          - "swmgr's default: C(\"Loopback\")."
        type: str
        choices:
          - "Loopback"
'''

EXAMPLES = r'''
- name: "Make LogicalIntf as given"
  swmgr.switch.swmgr_logical_intf:
    state: merged
    config:
      - name: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("LogicalIntf")


if __name__ == '__main__':
    main()
