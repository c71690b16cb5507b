# -*- coding: utf-8 -*-
# Generated from swmgr's object model by `go run ./cmd/swmgr ansible`; do not edit.
# Apache-2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: swmgr_lldp_intf
short_description: "Manage swmgr LLDPIntf objects"
description:
  - "LLDP on one port, where it differs from LLDPGlobal: off, or only sending or only receiving. A port without one runs LLDPGlobal's TxRxMode."
  - "One task is one commit: the server computes the change in a candidate and commits it as one revision, or changes nothing."
  - "Check mode is the server's dry run (it reports what the switch would refuse); diff mode shows the server's diff."
  - "Generated from swmgr's declaration of LLDPIntf: see docs/objects.md for every field."
version_added: "1.0.0"
author: swmgr developers
extends_documentation_fragment:
  - swmgr.switch.swmgr
  - swmgr.switch.resource
options:
  config:
    description:
      - "The LLDPIntf objects, each named by its key fields."
    type: list
    elements: dict
    suboptions:
      intf_ref:
        description:
          - "API field C(IntfRef)."
          - "the port."
          - "Key: identifies the object."
        type: str
      enable:
        description:
          - "API field C(Enable)."
          - "LLDP on this port (when LLDPGlobal Enable)."
          - "swmgr's default: C(true)."
        type: bool
      tx_rx_mode:
        description:
          - "API field C(TxRxMode)."
          - "swmgr's default: C(\"TxRx\")."
        type: str
        choices:
          - "TxOnly"
          - "RxOnly"
          - "TxRx"
'''

EXAMPLES = r'''
- name: "Make LLDPIntf as given"
  swmgr.switch.swmgr_lldp_intf:
    state: merged
    config:
      - intf_ref: "fpPort1"
'''

RETURN = r'''
# see the resource fragment: changed, revision, changes, candidate, gathered, rendered
'''

from ansible_collections.swmgr.switch.plugins.module_utils.swmgr_resource import run_resource


def main():
    run_resource("LLDPIntf")


if __name__ == '__main__':
    main()
