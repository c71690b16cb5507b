# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_vrf
short_description: "Manage swmgr Vrf objects"
description:
  - "A VRF. The VRF \"default\" always exists and is not an object."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of Vrf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The Vrf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      vrf:
        description:
          - "API field C(Vrf)."
          - "VRF name."
          - "Key: identifies the object."
        type: str
      name:
        description:
          - "API field C(Name)."
          - "VRF name as FlexSwitch 2.x also carried it; free text."
        type: str
'''

EXAMPLES = r'''
- name: "Make Vrf as given"
  swmgr.switch.swmgr_vrf:
    state: merged
    config:
      - vrf: "example"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("Vrf")


if __name__ == '__main__':
    main()
