# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_bfd_session
short_description: "Manage swmgr BfdSession objects"
description:
  - "A BFD session the switch runs on its own, with the peer at IpAddr (BGP neighbours with BfdEnable have theirs without one)."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of BfdSession: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The BfdSession objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      ip_addr:
        description:
          - "API field C(IpAddr)."
          - "the peer's address."
          - "Key: identifies the object."
        type: str
      interface:
        description:
          - "API field C(Interface)."
          - "the interface the session runs on (a port or a VLAN interface); None: the one the route to IpAddr takes."
          - "swmgr's default: C(\"None\")."
        type: str
      owner:
        description:
          - "API field C(Owner)."
          - "who asked for the session: user (sessions of BGP are not objects)."
          - "swmgr's default: C(\"user\")."
        type: str
        choices:
          - "user"
      param_name:
        description:
          - "API field C(ParamName)."
          - "the BfdSessionParam the session runs with."
          - "swmgr's default: C(\"default\")."
        type: str
'''

EXAMPLES = r'''
- name: "Make BfdSession as given"
  swmgr.switch.swmgr_bfd_session:
    state: merged
    config:
      - ip_addr: "192.0.2.1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("BfdSession")


if __name__ == '__main__':
    main()
